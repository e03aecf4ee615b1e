"""The worker service: run graph partitions and hand tensors to peers.

Every server runs one. A master *registers* a partition (the ops of one step
that were placed on this task, plus ``_Send``/``_Recv`` ops on every edge that
crosses to another task) and then asks the worker to *run* it once per step.

Tensors cross tasks by *pulling* (see ``minitf/runtime/rendezvous.py``): a
``_Send`` leaves its value in this worker's :class:`RemoteRendezvous`; the
``_Recv`` on the other task asks this worker for it (``RecvTensor``), and the
request waits in the rendezvous until the value is there. So workers exchange
tensors directly; the client and the master never see them.

State that outlives steps and sessions (variables, queues) lives in one
:class:`ResourceManager` per device of this server.
"""

import itertools
import random
import threading

from minitf.framework import errors
from minitf.framework.graph import Graph
from minitf.framework.op_def import DEAD
from minitf.distributed import protocol
from minitf.runtime.executor import Plan
from minitf.runtime.step import StepState
from minitf.runtime.plan_cache import PlanCache
from minitf.runtime.rendezvous import Rendezvous
from minitf.runtime.resource_manager import ResourceManager
from minitf.runtime.thread_pools import pools_for
from minitf.runtime.config import fold_constants, fuse_elementwise
from minitf.runtime.tracing import Trace


class RemoteRendezvous(Rendezvous):
    """A worker's rendezvous: a ``_Recv`` whose sender is another task pulls the
    value from that task's worker (``RecvTensor``); on this task it waits here."""

    def __init__(self, worker):
        super().__init__()
        self._worker = worker

    def receive(self, step, send_task, key, tensor_name):
        if send_task == self._worker.task_name:
            return super().receive(step, send_task, key, tensor_name)
        header = {"op": protocol.RECV_TENSOR, "step": step.step_id, "key": key,
                  "deadline_ms": protocol.remaining_ms(step.deadline)}
        reply, tensors = self._worker.channel(send_task).call(
            header, deadline=step.deadline, what="tensor %s from %s" % (tensor_name, send_task))
        return DEAD if reply.get("dead") else tensors[0]


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
    """A registered partition: its graph, the session's config, and its plans."""

    def __init__(self, worker, graph, session, config):
        self.graph = graph
        self.session = session
        self.config = config
        self.placer = _FixedPlacer(worker.devices)
        self.contexts = {name: (rm, worker.session_state(session))
                         for name, rm in worker.resources.items()}
        self.pools, self.owns_pools = pools_for(config, "minitf-worker")
        self.plans = PlanCache(self._build)

    def _build(self, key):
        feed_names, fetch_names = key
        graph = self.graph
        feeds = [graph.get_tensor_by_name(n) for n in feed_names]
        fetches = [graph.get_tensor_by_name(n) for n in fetch_names]
        fed_ops = {t.op for t in feeds}
        targets = [op for op in graph.get_operations() if op not in fed_ops]
        return Plan(graph, fetches, targets, feeds, self.placer, self.contexts, self.pools,
                    fuse=fuse_elementwise(self.config), fold=fold_constants(self.config))

    def close(self):
        if self.owns_pools:
            self.pools.shutdown()


class WorkerService:
    """The worker half of a server (see the module docstring)."""

    def __init__(self, task_name, devices, channel_for):
        self.task_name = task_name
        self.devices = {d.name: d for d in devices}
        self.device_list = list(devices)
        self.resources = {d.name: ResourceManager(d.name) for d in devices}
        self.rendezvous = RemoteRendezvous(self)
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
        self.handlers = {
            protocol.GET_STATUS: self._get_status,
            protocol.REGISTER_GRAPH: self._register_graph,
            protocol.RUN_GRAPH: self._run_graph,
            protocol.RECV_TENSOR: self._recv_tensor,
            protocol.ABORT_STEP: self._abort_step,
            protocol.DEREGISTER_GRAPH: self._deregister_graph,
            protocol.CLEANUP_SESSION: self._cleanup_session,
            protocol.RESET_CONTAINERS: self._reset_containers,
            protocol.LIST_STATE: self._list_state,
        }

    def channel(self, task_name):
        return self._channel_for(task_name)

    def session_state(self, session):
        with self._lock:
            return self._session_state.setdefault(session, {})

    # -- the services ---------------------------------------------------------------------
    def get_status(self):
        return {"task": self.task_name,
                "devices": [protocol.device_to_wire(d) for d in self.device_list]}

    def register_graph(self, session, node_defs, tensors, config):
        graph = Graph()
        protocol.import_nodes(graph, node_defs, tensors)
        handle = "%s/graph-%s-%d" % (self.task_name, self._incarnation, next(self._ids))
        partition = _Partition(self, graph, session, config)
        with self._lock:
            self._partitions[handle] = partition
        return handle

    def deregister_graph(self, handle):
        with self._lock:
            partition = self._partitions.pop(handle, None)
        if partition is not None:
            partition.close()

    def cleanup_session(self, session):
        with self._lock:
            handles = [h for h, p in self._partitions.items() if p.session == session]
            closed = [self._partitions.pop(h) for h in handles]
            self._session_state.pop(session, None)
        for partition in closed:
            partition.close()

    def run_graph(self, handle, step_id, feed_names, feed_values, fetch_names, deadline,
                  trace_on):
        part = self._partitions.get(handle)
        if part is None:
            raise errors.AbortedError(None, None, "Graph handle %s is not registered on %s "
                                      "(the server restarted?). Create a new session."
                                      % (handle, self.task_name))
        plan = part.plans.get((tuple(feed_names), tuple(fetch_names)))
        trace = Trace() if trace_on else None
        step = StepState(deadline, step_id, self.rendezvous, trace)
        with self._lock:
            self._steps.setdefault(step_id, []).append(step)
        try:
            values = plan.run(feed_values, step)
        finally:
            with self._lock:
                steps = self._steps.get(step_id, [])
                if step in steps:
                    steps.remove(step)
                if not steps:
                    self._steps.pop(step_id, None)
        stats = None
        if trace is not None:
            stats = protocol.stats_to_wire(trace.device_stats(), trace.transfers)
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
        """Drop ``containers`` on every device; with none named, only the default
        container goes (what TF's workers really do): state made under
        ``tf.container("name")`` survives until that name is reset. The default
        container is named after the task's job, as in TF."""
        for rm in self.resources.values():
            for c in containers or [rm.default_container]:
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

    def shutdown(self):
        with self._lock:
            partitions, self._partitions = list(self._partitions.values()), {}
        for partition in partitions:
            partition.close()

    # -- requests: header and tensors in, reply header and tensors out ------------------------
    def handle(self, header, tensors):
        return protocol.dispatch(self.handlers, header, tensors)

    def _get_status(self, header, tensors):
        return self.get_status(), []

    def _deregister_graph(self, header, tensors):
        self.deregister_graph(header["graph"])
        return {}, []

    def _register_graph(self, header, tensors):
        handle = self.register_graph(header["session"], header["nodes"], tensors,
                                     protocol.config_from_wire(header.get("config")))
        return {"graph": handle}, []

    def _run_graph(self, header, tensors):
        values, stats = self.run_graph(header["graph"], header["step"], header["feeds"],
                                       tensors, header["fetches"],
                                       protocol.deadline_from_ms(header.get("deadline_ms")),
                                       header.get("trace", False))
        return {"stats": stats}, values

    def _recv_tensor(self, header, tensors):
        value = self.recv_tensor(header["step"], header["key"],
                                 protocol.deadline_from_ms(header.get("deadline_ms")))
        if value is DEAD:              # the sender's side of a tf.cond did not run
            return {"dead": True}, []
        return {}, [value]

    def _abort_step(self, header, tensors):
        self.abort_step(header["step"], header.get("message", "step aborted"))
        return {}, []

    def _cleanup_session(self, header, tensors):
        self.cleanup_session(header["session"])
        return {}, []

    def _reset_containers(self, header, tensors):
        self.reset(header.get("containers"))
        return {}, []

    def _list_state(self, header, tensors):
        summary, arrays = self.list_state(header.get("values", False))
        return {"state": summary}, arrays
