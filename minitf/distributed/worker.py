"""The worker service: run graph partitions and hand tensors to peers.

Every server runs one. A master *registers* a partition (the ops of one step
that were placed on this task, plus ``_Send``/``_Recv`` ops on every edge that
crosses to another task) and then asks the worker to *run* it once per step.

Tensors cross tasks by *pulling*: the ``_Send`` op puts its input into this
worker's :class:`Rendezvous` under a key (tensor name; source device;
destination device) and the step id; the ``_Recv`` op on the other task calls
``RecvTensor`` on this worker, which waits in the rendezvous until that key
is there and replies with the bytes. So workers exchange tensors directly;
the client and the master never see them.

State that outlives steps and sessions (variables, queues) lives in one
:class:`ResourceManager` per device of this server.
"""

import itertools
import random
import threading
import time

import numpy as np

from minitf.framework import errors
from minitf.framework.graph import Graph
from minitf.kernels.registry import register
from minitf.ops.op_def import register_op
from minitf.runtime.deadness import DEAD
from minitf.runtime.config import Transfer
from minitf.runtime.executor import Plan, StepState, Trace
from minitf.runtime.resource_manager import ResourceManager
from minitf.distributed import graph_def
from minitf.distributed.rpc import deadline_from_ms, remaining_ms

register_op("_Recv", blocking=True)
register_op("_Send", dead_when="pass")   # a dead value is sent as a "dead" marker
register_op("_Arg")

_POLL = 0.05  # seconds between checks of cancellation while waiting


class Rendezvous:
    """Tensors handed from ``_Send`` ops to whoever asks, keyed by (step, key)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._items = {}
        self._aborted = {}  # step id -> OpError, so late senders/receivers fail fast

    def send(self, step_id, key, value):
        with self._cond:
            if step_id in self._aborted:
                return
            self._items[(step_id, key)] = value
            self._cond.notify_all()

    def recv(self, step_id, key, deadline=None, cancelled=None, waiting_for=""):
        with self._cond:
            while True:
                if (step_id, key) in self._items:
                    return self._items.pop((step_id, key))
                err = self._aborted.get(step_id)
                if err is not None:
                    raise err
                if cancelled is not None and cancelled.is_set():
                    raise errors.CancelledError(None, None, "Step %d was cancelled while "
                                                "waiting for %s" % (step_id, waiting_for))
                wait = _POLL
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise errors.DeadlineExceededError(
                            None, None, "Timed out waiting for %s" % (waiting_for or key))
                    wait = min(wait, left)
                self._cond.wait(wait)

    def abort(self, step_id, error):
        with self._cond:
            self._aborted[step_id] = error
            for k in [k for k in self._items if k[0] == step_id]:
                del self._items[k]
            if len(self._aborted) > 1000:  # keep the memory of old steps bounded
                for old in list(self._aborted)[:500]:
                    del self._aborted[old]
            self._cond.notify_all()

    def finish(self, step_id):
        """Drop whatever a finished step left behind (sends nobody received)."""
        with self._cond:
            for k in [k for k in self._items if k[0] == step_id]:
                del self._items[k]


# -- the cross-task kernels -------------------------------------------------------------------
@register("_Send", ("CPU", "GPU"))
def _send_kernel(op, device):
    key = op.get_attr("key")

    def compute(ctx, inputs):
        ctx.step.extra["rendezvous"].send(ctx.step.step_id, key, inputs[0])
        return []
    return compute


@register("_Recv", ("CPU", "GPU"))
def _recv_kernel(op, device):
    key = op.get_attr("key")
    send_task = op.get_attr("send_task")
    send_device = op.get_attr("send_device")
    recv_device = op.get_attr("recv_device")
    tensor_name = op.get_attr("tensor_name")
    attrs = op._attrs
    aux = attrs.get("aux", False)  # part of a compressed tensor, counted with it
    orig_itemsize = 4 if attrs.get("orig_dtype") == "float32" else None

    def compute(ctx, inputs):
        step = ctx.step
        env = step.extra["worker"]
        start = time.time_ns() // 1000
        if send_task == env.task_name:
            value = step.extra["rendezvous"].recv(step.step_id, key, step.deadline,
                                                  step.cancelled, tensor_name)
        else:
            channel = env.channel(send_task)
            header = {"op": "RecvTensor", "step": step.step_id, "key": key,
                      "deadline_ms": remaining_ms(step.deadline)}
            reply, tensors = channel.call(header, deadline=step.deadline,
                                          what="tensor %s from %s" % (tensor_name, send_task))
            value = DEAD if reply.get("dead") else tensors[0]
        trace = step.extra.get("trace")
        if trace is not None and not aux and value is not DEAD:
            wire_bytes = 0 if value.dtype.kind == "O" else int(value.nbytes)
            if orig_itemsize is not None:  # compressed: bytes before and on the wire
                nbytes = value.size * orig_itemsize
                if value.dtype == np.uint8:
                    wire_bytes += 8  # the int8 encoding's min and scale
            else:
                nbytes = wire_bytes
            trace.transfers.append(Transfer(
                tensor=tensor_name, src_device=send_device, dst_device=recv_device,
                bytes=nbytes, wire_bytes=wire_bytes, start_micros=start,
                end_micros=time.time_ns() // 1000))
        return [value]
    return compute


@register("_Arg", ("CPU", "GPU"))
def _arg_kernel(op, device):
    def compute(ctx, inputs):
        raise errors.InternalError(None, None, "feed %s was not passed to the partition"
                                   % op.name)
    return compute


class _FixedPlacer:
    """Placement was decided by the master: use the device in each node def."""

    def __init__(self, devices_by_name):
        self.by_name = devices_by_name
        self.devices = list(devices_by_name.values())  # as the Placer has them
        self.assigned = {}

    def place(self, ops):
        for op in ops:
            if op not in self.assigned:
                device = self.by_name.get(op._assigned)
                if device is None:
                    raise errors.InvalidArgumentError(
                        op.node_def, op, "Op %s was placed on %s, which this task does not "
                        "have (it has %s)" % (op.name, op._assigned or "no device",
                                             ", ".join(sorted(self.by_name))))
                self.assigned[op] = device


class _Partition:
    """A registered partition: its graph and its (cached) plan."""

    def __init__(self, graph, session, placer):
        self.graph = graph
        self.session = session
        self.placer = placer
        self.plans = {}
        self.lock = threading.Lock()


class WorkerService:
    """The worker half of a server (see the module docstring)."""

    def __init__(self, task_name, devices, channel_for):
        self.task_name = task_name
        self.devices = {d.name: d for d in devices}
        self.device_list = list(devices)
        self.resources = {d.name: ResourceManager(d.name) for d in devices}
        self.rendezvous = Rendezvous()
        self._channel_for = channel_for
        self._partitions = {}
        self._session_state = {}
        self._steps = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        # Graph handles name this process's incarnation too: a restarted task counts from 1
        # again, and a master still holding an old handle must get "not registered", never
        # another session's partition that happens to reuse the number.
        self._incarnation = "%08x" % random.getrandbits(32)

    def channel(self, task_name):
        return self._channel_for(task_name)

    # -- requests ------------------------------------------------------------------------
    def get_status(self):
        return {"task": self.task_name, "devices": [d.as_dict() for d in self.device_list]}

    def register_graph(self, session, node_defs, tensors):
        graph = Graph()
        graph_def.import_nodes(graph, node_defs, tensors)
        handle = "%s/graph-%s-%d" % (self.task_name, self._incarnation, next(self._ids))
        with self._lock:
            self._partitions[handle] = _Partition(graph, session,
                                                  _FixedPlacer(self.devices))
            self._session_state.setdefault(session, {})
        return handle

    def deregister_graph(self, handle):
        with self._lock:
            self._partitions.pop(handle, None)

    def cleanup_session(self, session):
        with self._lock:
            for h in [h for h, p in self._partitions.items() if p.session == session]:
                del self._partitions[h]
            self._session_state.pop(session, None)

    def run_graph(self, handle, step_id, feed_names, feed_values, fetch_names, deadline,
                  trace_on):
        part = self._partitions.get(handle)
        if part is None:
            raise errors.AbortedError(None, None, "Graph handle %s is not registered on %s "
                                      "(the server restarted?). Create a new session."
                                      % (handle, self.task_name))
        key = (tuple(feed_names), tuple(fetch_names))
        plan = part.plans.get(key)
        if plan is None:
            with part.lock:
                plan = part.plans.get(key)
                if plan is None:
                    graph = part.graph
                    feeds = [graph.get_tensor_by_name(n) for n in feed_names]
                    fetches = [graph.get_tensor_by_name(n) for n in fetch_names]
                    fed_ops = {t.op for t in feeds}
                    targets = [op for op in graph.get_operations() if op not in fed_ops]
                    contexts = {name: (rm, self._session_state.setdefault(part.session, {}))
                                for name, rm in self.resources.items()}
                    plan = Plan(graph, fetches, targets, feeds, part.placer, contexts,
                                self._pools)
                    part.plans[key] = plan
        step = StepState(deadline, step_id)
        trace = Trace() if trace_on else None
        if trace is not None:
            trace.transfers = []
        step.extra.update(rendezvous=self.rendezvous, worker=self, trace=trace)
        with self._lock:
            self._steps.setdefault(step_id, []).append(step)
        try:
            values = plan.run(feed_values, step, trace)
        finally:
            with self._lock:
                steps = self._steps.get(step_id, [])
                if step in steps:
                    steps.remove(step)
                if not steps:
                    self._steps.pop(step_id, None)
        stats = None
        if trace is not None:
            stats = {"dev_stats": [_stats_to_wire(d) for d in trace.device_stats()],
                     "transfers": [_transfer_to_wire(t) for t in trace.transfers]}
        return values, stats

    def recv_tensor(self, step_id, key, deadline):
        steps = self._steps.get(step_id) or []
        cancelled = steps[0].cancelled if steps else None
        return self.rendezvous.recv(step_id, key, deadline, cancelled, key.split(";")[0])

    def abort_step(self, step_id, message):
        err = errors.AbortedError(None, None, message)
        self.rendezvous.abort(step_id, err)
        with self._lock:
            steps = list(self._steps.get(step_id, []))
        for step in steps:
            step.cancelled.set()

    def reset(self, containers):
        for rm in self.resources.values():
            if containers is None:
                rm.clear()
            else:
                for c in containers:
                    rm.cleanup(c)

    def list_state(self, with_values=False):
        """Every resource on this task: ``{device: {container: {name: summary}}}``
        and, with values, the variables' values as arrays."""
        summary, arrays = {}, []
        for dev, rm in self.resources.items():
            summary[dev] = rm.summary()
            if with_values:
                for container, res in rm.containers().items():
                    for name, r in res.items():
                        value = getattr(r, "value", None)
                        if value is not None:
                            summary[dev][container][name]["value_index"] = len(arrays)
                            arrays.append(value)
        return summary, arrays

    # Thread pools for the dataflow executor (created on first use).
    _pool_pair = None

    def _pools(self):
        if self._pool_pair is None:
            import concurrent.futures
            import os
            width = max(2, os.cpu_count() or 2)
            self._pool_pair = (
                concurrent.futures.ThreadPoolExecutor(width, "minitf-worker-op"),
                concurrent.futures.ThreadPoolExecutor(64, "minitf-worker-blocking"))
        return self._pool_pair

    def shutdown(self):
        if self._pool_pair is not None:
            for pool in self._pool_pair:
                pool.shutdown(wait=False, cancel_futures=True)
            self._pool_pair = None

    # -- the request dispatcher ---------------------------------------------------------------
    def handle(self, header, tensors):
        op = header["op"]
        deadline = deadline_from_ms(header.get("deadline_ms"))
        if op == "GetStatus":
            return self.get_status(), []
        if op == "RegisterGraph":
            handle = self.register_graph(header["session"], header["nodes"], tensors)
            return {"graph": handle}, []
        if op == "RunGraph":
            values, stats = self.run_graph(header["graph"], header["step"], header["feeds"],
                                           tensors, header["fetches"], deadline,
                                           header.get("trace", False))
            return {"stats": stats}, values
        if op == "RecvTensor":
            value = self.recv_tensor(header["step"], header["key"], deadline)
            if value is DEAD:              # the sender's side of a tf.cond did not run
                return {"dead": True}, []
            return {}, [value]
        if op == "AbortStep":
            self.abort_step(header["step"], header.get("message", "step aborted"))
            return {}, []
        if op == "DeregisterGraph":
            self.deregister_graph(header["graph"])
            return {}, []
        if op == "CleanupSession":
            self.cleanup_session(header["session"])
            return {}, []
        if op == "ResetContainers":
            self.reset(header.get("containers"))
            return {}, []
        if op == "ListState":
            summary, arrays = self.list_state(header.get("values", False))
            return {"state": summary}, arrays
        raise errors.UnimplementedError(None, None, "unknown worker request %r" % op)


def _stats_to_wire(dev):
    return {"device": dev.device, "nodes": [
        [n.node_name, n.op_type, n.all_start_micros, n.all_end_rel_micros,
         [[o.slot, o.tensor_description.dtype, o.tensor_description.shape,
           o.tensor_description.requested_bytes] for o in n.output], n.thread_id]
        for n in dev.node_stats]}


def _transfer_to_wire(t):
    return [t.tensor, t.src_device, t.dst_device, t.bytes, t.start_micros, t.end_micros,
            t.wire_bytes]
