"""``tf.Session``: the client's handle on an engine that runs graphs.

``sess.run(fetches, feed_dict)`` does four things:

1. flatten ``fetches`` (a tensor, an op, a name, or lists/tuples/dicts/
   namedtuples of them) into a list of unique tensors and target ops;
2. check and convert every fed value (dtype, static shape, feedability);
3. hand both to the session's *runtime*, which the session factory picked by
   the target (runtimes.py): a :class:`~minitf.runtime.local_runtime.LocalRuntime`
   for ``Session()``, a remote master's client
   (:class:`~minitf.distributed.client.RemoteRuntime`) for
   ``Session("grpc://host:port")``;
4. rebuild the fetched values into the shape of ``fetches``.
"""

import collections
import warnings

import numpy as np

from minitf.framework.default_session import SESSIONS, get_default_session  # noqa: F401
from minitf.framework.dtypes import to_string_array
from minitf.framework.graph import Operation, Tensor, get_default_graph
from minitf.runtime import local_runtime, runtimes  # noqa: F401  (the local factory)
from minitf.runtime.config import ConfigProto, RunOptions, check_supported


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
        array = to_string_array(value)
    else:
        array = np.asarray(value, dtype=dtype.np_dtype)
    if not tensor.shape.is_compatible_with(array.shape):
        raise ValueError("Cannot feed value of shape %s for Tensor %s, which has shape %s"
                         % (array.shape, tensor.name, tensor.shape))
    if not graph.is_feedable(tensor):
        raise ValueError("Tensor %s may not be fed." % tensor.name)
    return tensor, array


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
        check_supported(config, remote=bool(target))
        self._graph = graph
        self._config = config
        self._target = target
        self._closed = False
        self._default_contexts = []
        self._runtime = runtimes.connect(target, graph, config)

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
        """Clear resource containers on every task of the cluster behind
        ``target`` and close the sessions open there. With ``containers`` None,
        only the default container is cleared, as TF does (its docstring says
        "all"): state made under ``tf.container("name")`` survives."""
        runtimes.reset(target or "", containers, config)


class _DefaultSession:
    def __init__(self, session, with_graph=False):
        self._session = session
        self._graph_ctx = session.graph.as_default() if with_graph else None

    def __enter__(self):
        SESSIONS.push(self._session)
        if self._graph_ctx is not None:
            self._graph_ctx.__enter__()
        return self._session

    def __exit__(self, *exc):
        if self._graph_ctx is not None:
            self._graph_ctx.__exit__(*exc)
        SESSIONS.pop(self._session)
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


