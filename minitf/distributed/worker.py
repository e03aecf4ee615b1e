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

Faults, and what ends each wait here:

* Every server process has an *incarnation* (a random number). A master
  records each task's incarnation when it creates a session and names it in
  every ``RegisterGraph`` and every ``_Recv`` (``send_incarnation``): a task
  that was restarted since answers AbortedError -- "I am a new process, your
  graphs and my old state are gone" -- which is what tells a
  MonitoredTrainingSession to create a new session.
* A step's values left in the rendezvous are dropped when the step is aborted:
  by the master (``AbortStep``, when another task failed), by this worker when
  its own part of the step fails, and when the master that ran the step here
  hangs up -- mid-step, or later without saying goodbye (its process died).
* A ``RecvTensor`` waits until the value comes, the step is aborted, its
  deadline passes, or the peer that asked hangs up.
"""

import itertools
import random
import threading
import time

from minitf.framework import errors
from minitf.framework.graph import Graph
from minitf.framework.op_def import DEAD
from minitf.distributed import protocol
from minitf.ops.sendrecv_ops import RECV
from minitf.runtime.executor import Plan
from minitf.runtime.step import StepState
from minitf.runtime.plan_cache import PlanCache
from minitf.runtime.rendezvous import Rendezvous
from minitf.runtime.resource_manager import ResourceManager
from minitf.runtime.thread_pools import pools_for
from minitf.runtime.config import fold_constants, fuse_elementwise, skip_unread
from minitf.runtime.tracing import Trace


class RemoteRendezvous(Rendezvous):
    """A worker's rendezvous: a ``_Recv`` whose sender is another task pulls the
    value from that task's worker (``RecvTensor``); on this task it waits here."""

    def __init__(self, worker):
        super().__init__()
        self._worker = worker

    def receive(self, step, send_task, key, tensor_name, send_incarnation=None):
        if send_task == self._worker.task_name:
            return super().receive(step, send_task, key, tensor_name)
        header = {"op": protocol.RECV_TENSOR, "step": step.step_id, "key": key,
                  "deadline_ms": protocol.remaining_ms(step.deadline)}
        if send_incarnation:
            header["incarnation"] = send_incarnation
        reply, tensors = self._worker.channel(send_task).call(
            header, deadline=step.deadline, what="tensor %s from %s" % (tensor_name, send_task))
        return DEAD if reply.get("dead") else tensors[0]

    def receives_locally(self, send_task, key):
        return send_task == self._worker.task_name


class _StepRendezvous:
    """The worker's rendezvous as one step sees it: the keys that a stream
    (``RecvTensors``, see :meth:`WorkerService.prefetch`) brings from their
    senders are waited for here locally; any other key is pulled one by one."""

    __slots__ = ("_base", "_local", "asked")

    def __init__(self, base, local_keys):
        self._base = base
        self._local = local_keys
        self.asked = {}    # key -> when the stream that brings it was asked for (us)

    def asked_micros(self, key):
        return self.asked.get(key)

    def send(self, step_id, key, value):
        self._base.send(step_id, key, value)

    def receive(self, step, send_task, key, tensor_name, send_incarnation=None):
        if key in self._local:   # the stream checked the sender's incarnation
            return Rendezvous.receive(self._base, step, send_task, key, tensor_name)
        return self._base.receive(step, send_task, key, tensor_name, send_incarnation)

    def receives_locally(self, send_task, key):
        return key in self._local or self._base.receives_locally(send_task, key)

    def recv_async(self, step_id, key, callback):
        self._base.recv_async(step_id, key, callback)


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
    """A registered partition: its graph, the session's config, and its plans;
    ``live_receives``: the master found no op in the step that makes dead
    values, so its ``_Recv`` ops never bring one (Plan's dead checks are skipped)."""

    def __init__(self, worker, graph, session, config, live_receives=False):
        self.graph = graph
        self.live_receives = live_receives
        self.session = session
        self.config = config
        self.placer = _FixedPlacer(worker.devices)
        self.contexts = {name: (rm, worker.session_state(session))
                         for name, rm in worker.resources.items()}
        self.pools, self.owns_pools = pools_for(config, "minitf-worker")
        self.plans = PlanCache(self._build)
        self.streams = {}   # plan signature -> ({send task: [keys]}, every key)

    def _build(self, key):
        feed_names, fetch_names = key
        graph = self.graph
        feeds = [graph.get_tensor_by_name(n) for n in feed_names]
        fetches = [graph.get_tensor_by_name(n) for n in fetch_names]
        fed_ops = {t.op for t in feeds}
        targets = [op for op in graph.get_operations() if op not in fed_ops]
        return Plan(graph, fetches, targets, feeds, self.placer, self.contexts, self.pools,
                    fuse=fuse_elementwise(self.config), fold=fold_constants(self.config),
                    skip_unread=skip_unread(self.config), live_receives=self.live_receives)

    def streams_for(self, key, plan, task_name):
        """The keys each other task sends this plan, to pull as one stream per
        task: every ``_Recv`` outside a while loop (a loop's receives carry
        their iteration in the key and are pulled one by one)."""
        found = self.streams.get(key)
        if found is None:
            by_task, incarnations = {}, {}
            if plan.frames is None:
                for s in plan.nodes:
                    op = s.op
                    if op.type == RECV.name and op._attrs["send_task"] != task_name:
                        send_task = op._attrs["send_task"]
                        by_task.setdefault(send_task, []).append(op._attrs["key"])
                        if op._attrs.get("send_incarnation"):
                            incarnations[send_task] = op._attrs["send_incarnation"]
            found = self.streams[key] = (by_task, frozenset(
                k for keys in by_task.values() for k in keys), incarnations)
        return found

    def close(self):
        if self.owns_pools:
            self.pools.shutdown()
        # Free the partition's constants now (see Graph._release).
        self.plans.clear()
        self.graph._release()


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
            protocol.RECV_TENSORS: self._recv_tensors,
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
    @property
    def incarnation(self):
        return self._incarnation

    def get_status(self):
        return {"task": self.task_name, "incarnation": self._incarnation,
                "devices": [protocol.device_to_wire(d) for d in self.device_list]}

    def _check_incarnation(self, expected, what):
        if expected and expected != self._incarnation:
            raise errors.AbortedError(
                None, None, "%s was restarted since the session was created: it is a new "
                "process (incarnation %s, the session knew %s), so %s. Create a new "
                "session." % (self.task_name, self._incarnation, expected, what))

    def register_graph(self, session, node_defs, tensors, config, incarnation=None,
                       live_receives=False):
        self._check_incarnation(incarnation, "the state the session's graphs used here "
                                "(variables, queues) is gone")
        graph = Graph()
        protocol.import_nodes(graph, node_defs, tensors)
        handle = "%s/graph-%s-%d" % (self.task_name, self._incarnation, next(self._ids))
        partition = _Partition(self, graph, session, config, live_receives)
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
                  trace_on, peer=None):
        part = self._partitions.get(handle)
        if part is None:
            raise errors.AbortedError(None, None, "Graph handle %s is not registered on %s "
                                      "(the server restarted?). Create a new session."
                                      % (handle, self.task_name))
        key = (tuple(feed_names), tuple(fetch_names))
        plan = part.plans.get(key)
        streams, streamed, incarnations = part.streams_for(key, plan, self.task_name)
        trace = Trace() if trace_on else None
        step = StepState(deadline, step_id, _StepRendezvous(self.rendezvous, streamed)
                         if streamed else self.rendezvous, trace)
        with self._lock:
            self._steps.setdefault(step_id, []).append(step)
        aborted = self.rendezvous.abort_error(step_id)   # an AbortStep came first
        if aborted is not None:
            self._forget_step(step_id, step)
            raise aborted
        if peer is not None:
            # The master hangs up mid-step (its process died): nobody will
            # collect this step, so stop it and drop what it left.
            peer.call_on_hangup(lambda: self.abort_step(
                step_id, "Step aborted: the master that ran it (%s) hung up" % peer.name))
        try:
            if streams:
                blocking_pool = part.pools.get()[1]
                for send_task, keys in streams.items():
                    blocking_pool.submit(self.prefetch, step, send_task, keys,
                                         incarnations.get(send_task))
            values = plan.run(feed_values, step)
        except errors.OpError as e:
            # The whole step has failed: drop what this part sent, now, rather
            # than wait for the master's AbortStep (which a dead master never sends).
            self.rendezvous.abort(step_id, errors.AbortedError(
                None, None, "Step aborted because its part on %s failed: %s"
                % (self.task_name, e.message.splitlines()[0] if e.message else e)))
            raise
        finally:
            self._forget_step(step_id, step)
        if peer is not None and self.rendezvous.has_values(step_id):
            _remember_open_step(peer, step_id, self.rendezvous)
        stats = None
        if trace is not None:
            stats = protocol.stats_to_wire(trace.device_stats(), trace.transfers)
        return values, stats

    def prefetch(self, step, send_task, keys, incarnation=None):
        """Pull ``keys`` of ``step`` from ``send_task`` as one ``RecvTensors``
        stream and leave each tensor in this worker's rendezvous as it comes,
        for the ``_Recv`` waiting for it here: one request per peer and step
        instead of one per tensor. A failure fails those ``_Recv`` ops."""
        header = {"op": protocol.RECV_TENSORS, "step": step.step_id, "keys": list(keys),
                  "deadline_ms": protocol.remaining_ms(step.deadline)}
        if incarnation:
            header["incarnation"] = incarnation
        if step.trace is not None:
            asked = time.time_ns() // 1000
            step.rendezvous.asked.update((k, asked) for k in keys)
        what = "tensors %s from %s" % (", ".join(k.split(";")[0] for k in keys), send_task)
        try:
            for reply, tensors in self.channel(send_task).call_stream(
                    header, deadline=step.deadline, what=what):
                dead = reply.get("dead") or ()
                live = iter(tensors)
                for i, key in enumerate(reply["keys"]):
                    self.rendezvous.send(step.step_id, key, DEAD if i in dead else next(live))
        except errors.OpError as e:
            self.rendezvous.abort(step.step_id, e)
        except BaseException as e:  # noqa: BLE001 - the waiting _Recv ops must hear of it
            self.rendezvous.abort(step.step_id, errors.InternalError(
                None, None, "%s while receiving %s: %s" % (type(e).__name__, what, e)))

    def recv_tensors(self, step_id, keys, deadline, peer=None):
        """The frames of a ``RecvTensors`` reply: the tensors of the keys as
        soon as their ``_Send`` ops have run here, in that order, each frame
        carrying every one that was ready when it was made (the gradients of
        a layer usually come together: one frame, one header to decode and
        two reads at the other end, not one of each per tensor). ``"keys"``
        names them in order, ``"dead"`` the positions whose sender's side of
        a ``tf.cond`` did not run (no tensor for those). The request handler
        checked the incarnation the receiver expects."""
        steps = self._steps.get(step_id) or []
        cancelled = steps[0].cancelled if steps else None
        waiting_for = ", ".join(k.split(";")[0] for k in keys)
        left = len(keys)
        for batch in self.rendezvous.recv_batches(
                step_id, keys, deadline, cancelled, waiting_for,
                peer.hung_up if peer is not None else None):
            left -= len(batch)
            header = {"keys": [key for key, _ in batch], "more": left > 0}
            dead = [i for i, (_, value) in enumerate(batch) if value is DEAD]
            if dead:
                header["dead"] = dead
            yield header, [value for _, value in batch if value is not DEAD]

    def _forget_step(self, step_id, step):
        with self._lock:
            steps = self._steps.get(step_id, [])
            if step in steps:
                steps.remove(step)
            if not steps:
                self._steps.pop(step_id, None)

    def peer_vanished(self, peer):
        """``peer`` (a master) disconnected without a goodbye: its process is
        gone, and so is whoever would have received the values its finished
        steps left here. Drop them."""
        for step_id in list(peer.open_steps or ()):
            if self.rendezvous.has_values(step_id):
                self.abort_step(step_id, "Step aborted: the master that ran it (%s) went "
                                "away before the step finished" % peer.name)
        peer.open_steps = None

    def recv_tensor(self, step_id, key, deadline, incarnation=None, peer=None):
        self._check_incarnation(incarnation, "the tensor %s of step %d that the old process "
                                "was to send is gone with it" % (key.split(";")[0], step_id))
        steps = self._steps.get(step_id) or []
        cancelled = steps[0].cancelled if steps else None
        return self.rendezvous.recv(step_id, key, deadline, cancelled, key.split(";")[0],
                                    peer.hung_up if peer is not None else None)

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
    def handle(self, header, tensors, peer=None):
        return protocol.dispatch(self.handlers, header, tensors, peer)

    def _get_status(self, header, tensors, peer):
        return self.get_status(), []

    def _deregister_graph(self, header, tensors, peer):
        self.deregister_graph(header["graph"])
        return {}, []

    def _register_graph(self, header, tensors, peer):
        handle = self.register_graph(header["session"], header["nodes"], tensors,
                                     protocol.config_from_wire(header.get("config")),
                                     header.get("incarnation"),
                                     header.get("live_receives") is True)
        return {"graph": handle}, []

    def _run_graph(self, header, tensors, peer):
        values, stats = self.run_graph(header["graph"], header["step"], header["feeds"],
                                       tensors, header["fetches"],
                                       protocol.deadline_from_ms(header.get("deadline_ms")),
                                       header.get("trace", False), peer)
        return {"stats": stats}, values

    def _recv_tensor(self, header, tensors, peer):
        value = self.recv_tensor(header["step"], header["key"],
                                 protocol.deadline_from_ms(header.get("deadline_ms")),
                                 header.get("incarnation"), peer)
        if value is DEAD:              # the sender's side of a tf.cond did not run
            return {"dead": True}, []
        return {}, [value]

    def _recv_tensors(self, header, tensors, peer):
        keys = header.get("keys")
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise errors.InvalidArgumentError(None, None, "RecvTensors needs a non-empty "
                                              "list of keys")
        deadline = protocol.deadline_from_ms(header.get("deadline_ms"))
        self._check_incarnation(header.get("incarnation"), "the tensors of step %d that the "
                                "old process was to send are gone with it" % header["step"])
        return protocol.Streamed(self.recv_tensors(header["step"], keys, deadline, peer))

    def _abort_step(self, header, tensors, peer):
        self.abort_step(header["step"], header.get("message", "step aborted"))
        return {}, []

    def _cleanup_session(self, header, tensors, peer):
        self.cleanup_session(header["session"])
        return {}, []

    def _reset_containers(self, header, tensors, peer):
        self.reset(header.get("containers"))
        return {}, []

    def _list_state(self, header, tensors, peer):
        summary, arrays = self.list_state(header.get("values", False))
        return {"state": summary}, arrays


_OPEN_STEPS_KEPT = 64  # per connection, before the received ones are forgotten


def _remember_open_step(peer, step_id, rendezvous):
    """Note that ``peer`` ran step ``step_id`` here and left values (usually
    for a receiver that pulls them a moment later). Steps whose values were
    all received since are forgotten when the list grows, so it stays small."""
    steps = peer.open_steps
    if steps is None:
        steps = peer.open_steps = set()
    steps.add(step_id)
    if len(steps) > _OPEN_STEPS_KEPT:
        steps.difference_update([s for s in steps if not rendezvous.has_values(s)])
