"""``tf.Session``: the client's handle on an engine that runs graphs.

``sess.run(fetches, feed_dict)`` does four things:

1. flatten ``fetches`` (a tensor, an op, a name, or lists/tuples/dicts/
   namedtuples of them) into a list of unique tensors and target ops;
2. check and convert every fed value (dtype, static shape, feedability);
3. hand both to the session's *runtime*: a :class:`LocalRuntime` for
   ``Session()``, or a remote master for ``Session("grpc://host:port")``;
4. rebuild the fetched values into the shape of ``fetches``.

A :class:`LocalRuntime` is the engine of one local session (TF's
DirectSession): its own devices and resource managers, so two local sessions
never share a variable; a placer; and a cache of plans, one per distinct
(fetches, feeds) signature, so a repeated ``run`` skips pruning, placement
and kernel lookup entirely.
"""

import collections
import concurrent.futures
import itertools
import os
import threading
import time
import warnings

import numpy as np

from minitf.framework import errors
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.graph import Operation, Tensor, get_default_graph
from minitf.runtime.config import ConfigProto, RunOptions
from minitf.runtime.devices import local_devices
from minitf.runtime.executor import Plan, StepState, Trace
from minitf.runtime.placer import Placer
from minitf.runtime.resource_manager import ResourceManager

_step_ids = itertools.count(1)


# -- the default session -------------------------------------------------------------------
_session_local = threading.local()


def _session_stack():
    stack = getattr(_session_local, "stack", None)
    if stack is None:
        stack = _session_local.stack = []
    return stack


def get_default_session():
    stack = _session_stack()
    return stack[-1] if stack else None


def _session_for(session, graph):
    """The session ``Tensor.eval`` / ``Operation.run`` should use."""
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                             "registered. Use `with sess.as_default()` or pass an explicit "
                             "session to `eval(session=sess)`")
    if session.graph is not graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's "
                         "graph is different from the session's graph.")
    return session


# -- fetches -----------------------------------------------------------------------------------
class _FetchMapper:
    """Flattens a fetch structure and rebuilds results in the same structure."""

    def __init__(self, graph, fetches):
        self.tensors = []   # unique tensors to fetch
        self.targets = []   # unique ops to run
        self._index = {}
        self._build = self._map(graph, fetches)

    def _map(self, graph, fetch):
        if fetch is None:
            raise TypeError('Argument `fetch` = None has invalid type "NoneType". Cannot '
                            'be None')
        if isinstance(fetch, (list, tuple)) and not isinstance(fetch, str):
            builders = [self._map(graph, f) for f in fetch]
            if isinstance(fetch, list):
                return lambda vals: [b(vals) for b in builders]
            if hasattr(fetch, "_fields"):  # namedtuple
                cls = type(fetch)
                return lambda vals: cls(*[b(vals) for b in builders])
            return lambda vals: tuple(b(vals) for b in builders)
        if isinstance(fetch, collections.abc.Mapping):
            keys = list(fetch.keys())
            builders = [self._map(graph, fetch[k]) for k in keys]
            cls = type(fetch)

            def build_dict(vals):
                pairs = [(k, b(vals)) for k, b in zip(keys, builders)]
                if cls is collections.defaultdict:
                    out = collections.defaultdict(fetch.default_factory)
                    out.update(pairs)
                    return out
                return cls(pairs)
            return build_dict
        element = self._element(graph, fetch)
        if isinstance(element, Operation):
            if element not in self._index:
                self._index[element] = None
                self.targets.append(element)
            return lambda vals: None
        if element not in self._index:
            self._index[element] = len(self.tensors)
            self.tensors.append(element)
        i = self._index[element]
        return lambda vals: vals[i]

    @staticmethod
    def _element(graph, fetch):
        if not isinstance(fetch, (Tensor, Operation, str)) and \
                not hasattr(fetch, "_as_graph_element"):
            raise TypeError('Argument `fetch` = %s has invalid type "%s" must be a string '
                            'or Tensor. (Can not convert a %s into a Tensor or Operation.)'
                            % (fetch, type(fetch).__name__, type(fetch).__name__))
        try:
            return graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError('Argument `fetch` = %s has invalid type "%s" must be a string '
                            'or Tensor. (%s)' % (fetch, type(fetch).__name__, e)) from None
        except ValueError as e:
            raise ValueError("Argument `fetch` = %s cannot be interpreted as a Tensor. (%s)"
                             % (fetch, e)) from None
        except KeyError as e:
            raise ValueError("Argument `fetch` = %s cannot be interpreted as a Tensor. (%s)"
                             % (fetch, e)) from None

    def build(self, values):
        return self._build(values)


def _to_client(value):
    """What ``sess.run`` hands back: numpy scalars for 0-d results, arrays the
    caller may modify (values owned by the graph or a variable are copied)."""
    if not isinstance(value, np.ndarray):
        return value
    if value.ndim == 0:
        return value[()]
    if not value.flags.writeable:
        return value.copy()
    return value


# -- feeds ---------------------------------------------------------------------------------------
def _convert_feed(graph, key, value):
    try:
        tensor = graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
    except (KeyError, ValueError, TypeError) as e:
        raise TypeError("Cannot interpret feed_dict key as Tensor: %s"
                        % (e.args[0] if e.args else e)) from None
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed "
                        "values include Python scalars, strings, lists, numpy ndarrays, or "
                        "TensorHandles. For reference, the tensor object was %s which was "
                        "passed to the argument `feed_dict` with key %s." % (value, key))
    dtype = tensor.dtype.base_dtype
    if isinstance(value, int) and not isinstance(value, bool) and dtype.is_integer:
        if not dtype.min <= value <= dtype.max:
            raise TypeError("Type of feed value %s with type %s is not compatible with Tensor "
                            "type %s. Try explicitly setting the type of the feed tensor to a "
                            "larger type (e.g. int64)." % (value, type(value), dtype.np_dtype.type))
    if dtype.name == "string":
        from minitf.ops.core import _to_bytes_array
        array = _to_bytes_array(value)
    else:
        array = np.asarray(value, dtype=dtype.np_dtype)
    if not tensor.shape.is_compatible_with(array.shape):
        raise ValueError("Cannot feed value of shape %s for Tensor %s, which has shape %s"
                         % (array.shape, tensor.name, tensor.shape))
    if not graph.is_feedable(tensor):
        raise ValueError("Tensor %s may not be fed." % tensor.name)
    return tensor, array


# -- the local engine -----------------------------------------------------------------------------
class LocalRuntime:
    """Devices, state, placer and plans of one local session."""

    def __init__(self, graph, config):
        self.graph = graph
        self.config = config
        self.devices = local_devices(config)
        self.session_state = {}
        self.contexts = {d.name: (ResourceManager(d.name), self.session_state)
                         for d in self.devices}
        self.placer = Placer(self.devices, DeviceSpec("localhost", 0, 0),
                             allow_soft_placement=config.allow_soft_placement,
                             log_device_placement=config.log_device_placement)
        self._plans = {}
        self._lock = threading.Lock()
        self._pools = None
        self._running = set()  # StepStates of the steps in flight

    def _get_pools(self):
        if self._pools is None:
            with self._lock:
                if self._pools is None:
                    width = self.config.inter_op_parallelism_threads or max(
                        2, os.cpu_count() or 2)
                    self._pools = (
                        concurrent.futures.ThreadPoolExecutor(width, "minitf-inter-op"),
                        concurrent.futures.ThreadPoolExecutor(64, "minitf-blocking"))
        return self._pools

    def plan(self, fetches, targets, feeds):
        key = (tuple(fetches), tuple(targets), tuple(feeds))
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key)
                if plan is None:
                    plan = Plan(self.graph, fetches, targets, feeds, self.placer,
                                self.contexts, self._get_pools,
                                fuse=self.config.graph_options.fuse_elementwise)
                    self._plans[key] = plan
        return plan

    def run(self, fetches, targets, feeds, feed_values, options, run_metadata):
        plan = self.plan(fetches, targets, feeds)
        timeout_ms = (options.timeout_in_ms if options is not None else 0) or \
            self.config.operation_timeout_in_ms
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        step = StepState(deadline, next(_step_ids))
        trace = Trace() if (options is not None and options.trace_level > 0
                            and run_metadata is not None) else None
        self._running.add(step)
        try:
            values = plan.run(feed_values, step, trace)
        except KeyboardInterrupt:
            step.cancelled.set()
            raise
        finally:
            self._running.discard(step)
        if run_metadata is not None:
            run_metadata.placement = dict(plan.placement)
            run_metadata.soft_placed = sorted(op.name for op in self.placer.soft_moved
                                              if op.name in plan.placement)
            if trace is not None:
                run_metadata.step_stats.dev_stats = trace.device_stats()
                run_metadata.step_stats.transfers = list(trace.transfers)
                run_metadata.step_stats.memory = list(trace.memory)
        return values

    def list_devices(self):
        return list(self.devices)

    def cancel_running_steps(self):
        """Cancel every step in flight (their blocked ops fail with
        CancelledError); used when a MonitoredSession shuts down."""
        for step in list(self._running):
            step.cancelled.set()

    def resource_managers(self):
        return {name: rm for name, (rm, _) in self.contexts.items()}

    def close(self):
        for d in self.devices:
            if d.allocator is not None:
                d.allocator.close()      # give the GPU memory back to the card
        if self._pools is not None:
            for pool in self._pools:
                pool.shutdown(wait=False, cancel_futures=True)
            self._pools = None


class _DeviceAttributes:
    """An entry of ``sess.list_devices()``."""

    def __init__(self, name, device_type, memory_limit_bytes, incarnation=0):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = memory_limit_bytes
        self.incarnation = incarnation

    def __repr__(self):
        return "_DeviceAttributes(%s, %s, %d, %d)" % (self.name, self.device_type,
                                                      self.memory_limit_bytes,
                                                      self.incarnation)


# -- sessions ------------------------------------------------------------------------------------
class BaseSession:
    """Shared by :class:`Session` and :class:`InteractiveSession`."""

    def __init__(self, target="", graph=None, config=None):
        if graph is None:
            graph = get_default_graph()
        if config is None:
            config = ConfigProto()
        if not isinstance(config, ConfigProto):
            raise TypeError("config must be a tf.ConfigProto, but got %s" % type(config))
        if target is None:
            target = ""
        if not isinstance(target, str):
            raise TypeError("target must be a string, but got %s" % type(target))
        self._graph = graph
        self._config = config
        self._target = target
        self._closed = False
        self._default_contexts = []
        if target:
            from minitf.distributed.client import connect_runtime
            self._runtime = connect_runtime(target, graph, config)
        else:
            self._runtime = LocalRuntime(graph, config)

    graph = property(lambda self: self._graph)
    sess_str = property(lambda self: self._target)

    @property
    def graph_def(self):
        return [op.node_def for op in self._graph.get_operations()]

    def list_devices(self):
        return [_DeviceAttributes(d.name, d.device_type, d.memory_limit)
                for d in self._runtime.list_devices()]

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Run the ops needed to compute ``fetches``; return their values in
        the same structure as ``fetches``."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        graph = self._graph
        if isinstance(fetches, Tensor) and fetches.graph is graph:
            mapper = None
            tensors, targets = [fetches], []
        elif isinstance(fetches, Operation) and fetches.graph is graph:
            mapper = None
            tensors, targets = [], [fetches]
        else:
            mapper = _FetchMapper(graph, fetches)
            tensors, targets = mapper.tensors, mapper.targets
        feeds, feed_values = [], []
        if feed_dict:
            for key, value in feed_dict.items():
                tensor, array = _convert_feed(graph, key, value)
                feeds.append(tensor)
                feed_values.append(array)
        for t in tensors:
            if not graph.is_fetchable(t):
                raise ValueError("Operation %r has been marked as not fetchable." % t.op.name)
        if options is not None and not isinstance(options, RunOptions):
            raise TypeError("options must be a tf.RunOptions, got %s" % type(options))
        values = self._runtime.run(tensors, targets, feeds, feed_values, options, run_metadata)
        values = [_to_client(v) for v in values]
        if mapper is None:
            return values[0] if tensors else None
        return mapper.build(values)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function that runs ``fetches`` with positional feeds, skipping the
        per-call parsing of ``run``."""
        feed_list = list(feed_list or [])

        def call(*args, **kwargs):
            return self.run(fetches, dict(zip(feed_list, args)) if feed_list else None,
                            **kwargs)
        return call

    def close(self):
        if not self._closed:
            self._closed = True
            self._runtime.close()

    def _cancel_running_steps(self):
        """Cancel this session's steps in flight (a minitf extra)."""
        self._runtime.cancel_running_steps()

    def as_default(self):
        return _DefaultSession(self)

    def __enter__(self):
        ctx = _DefaultSession(self, with_graph=True)
        self._default_contexts.append(ctx)
        ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        ctx = self._default_contexts.pop()
        ctx.__exit__(exc_type, exc, tb)
        self.close()

    def __del__(self):
        try:
            if not getattr(self, "_closed", True):
                self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass

    @staticmethod
    def reset(target, containers=None, config=None):
        """Clear resource containers (all if ``containers`` is None) on every
        task of the cluster behind ``target``; open sessions lose that state."""
        if not target:
            raise errors.InvalidArgumentError(
                None, None, "Session.reset needs the target of a server "
                "(e.g. server.target); a local session keeps no shared state.")
        from minitf.distributed.client import reset_target
        reset_target(target, containers, config)


class _DefaultSession:
    def __init__(self, session, with_graph=False):
        self._session = session
        self._graph_ctx = session.graph.as_default() if with_graph else None

    def __enter__(self):
        _session_stack().append(self._session)
        if self._graph_ctx is not None:
            self._graph_ctx.__enter__()
        return self._session

    def __exit__(self, *exc):
        if self._graph_ctx is not None:
            self._graph_ctx.__exit__(*exc)
        stack = _session_stack()
        if stack and stack[-1] is self._session:
            stack.pop()
        return False


class Session(BaseSession):
    """A TF1 session. ``Session()`` runs in this process;
    ``Session(server.target)`` runs on a minitf server."""


class InteractiveSession(BaseSession):
    """A session that makes itself the default on creation, for notebooks."""

    _active = 0

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        if InteractiveSession._active > 0:
            warnings.warn("An interactive session is already active. This can cause "
                          "out-of-memory errors in some cases. You must explicitly call "
                          "`InteractiveSession.close()` to release resources held by the "
                          "other session(s).")
        InteractiveSession._active += 1
        self._explicitly_closed = False
        self._default = self.as_default()
        self._default.__enter__()
        self._graph_default = self._graph.as_default()
        self._graph_default.__enter__()

    def close(self):
        if not self._closed:
            InteractiveSession._active -= 1
            try:
                self._graph_default.__exit__(None, None, None)
                self._default.__exit__(None, None, None)
            except (IndexError, AssertionError):
                pass
        super().close()


