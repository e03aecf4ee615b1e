"""The master service: sessions of remote clients.

``tf.Session("grpc://host:port")`` talks to the master of the server at that
address. For each session the master keeps a copy of the client's graph
(extended as the client adds ops) and, per step signature, a *distributed
plan*:

1. prune the graph to the fetches (as a local session does);
2. place the ops on the devices of **all** tasks of the cluster; parts a
   device string leaves out come from the master's own task, which is why
   unpinned ops run on the task whose target the session used;
3. partition the placed graph per task (``partition.py``) and register each
   partition with its task's worker.

Running a step then sends ``RunGraph`` to every task that has a partition, at
the same time, and collects the fetched tensors. If any task fails, the step
is aborted on all of them (in the background: the error goes back to the
client at once, even if a task that must be told is stuck) and the first real
error goes back to the client, naming the task when the task itself is
unreachable. If the client hangs up in the middle of a step (it was killed),
the step is cancelled the same way.

The master remembers the *incarnation* each task reported when the session
was created and names it in every graph it registers: a task that restarted
since refuses with AbortedError, the signal to create a new session.
"""

import concurrent.futures
import itertools
import os
import random
import threading
import time

from minitf.framework import errors
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.graph import Graph
from minitf.runtime.config import Transfer, check_supported
from minitf.runtime.executor import prune
from minitf.runtime.placer import Placer
from minitf.runtime.plan_cache import PlanCache
from minitf.distributed import protocol
from minitf.distributed.partition import partition, report
from minitf.distributed.protocol import deadline_from_ms, remaining_ms


class ClusterPlan:
    """One step signature of one master session, placed on the cluster's devices
    and partitioned per task, each partition registered with its task."""

    def __init__(self, session, fetch_names, target_names, feed_names):
        graph = session.graph
        self.fetches = [graph.get_tensor_by_name(n) for n in fetch_names]
        targets = [graph.get_operation_by_name(n) for n in target_names]
        self.feeds = [graph.get_tensor_by_name(n) for n in feed_names]
        fed = set(self.feeds)
        needed = prune(self.fetches, targets, fed)
        session.placer.place(needed)
        assigned = {op: session.placer.assigned[op] for op in needed}
        self.placement = {op.name: d.name for op, d in assigned.items()}
        self.specs = partition(needed, assigned, self.fetches, fed,
                               session.config.graph_options.transfer_compression,
                               session.incarnations, session.names)
        self._session = session
        self._assigned = assigned
        self._report = None
        self._report_lock = threading.Lock()
        self.handles = {}
        # No op of the step makes dead values (no tf.cond's Switch): then no
        # _Recv of any part brings one, and the parts skip the dead checks.
        live = not any(op.op_def is not None and op.op_def.makes_dead for op in needed)
        for task, spec in self.specs.items():
            reply = session.master.call_worker(task, {
                "op": protocol.REGISTER_GRAPH, "session": session.handle,
                "nodes": spec.nodes, "config": protocol.config_to_wire(session.config),
                "incarnation": session.incarnations.get(task, ""), "live_receives": live},
                spec.tensors, deadline=session.deadline())
            self.handles[task] = reply[0]["graph"]
        self.fetch_index = {t.name: i for i, t in enumerate(self.fetches)}
        self.feed_index = {t.name: i for i, t in enumerate(self.feeds)}

    def partition_graphs(self):
        """What ``RunOptions(output_partition_graphs=True)`` returns for this
        signature, as records per device (partition.report), worked out once."""
        with self._report_lock:
            if self._report is None:
                session = self._session
                client = session.master.task_spec.to_string() + "/device:CPU:0"
                self._report = [{"device": device, "nodes": records}
                                for device, records in report(
                                    self.specs, session.graph, self._assigned, client,
                                    session.incarnations, session.worker_names)]
            return self._report


class MasterSession:
    """State of one client session on this master."""

    def __init__(self, master, handle, config, devices, incarnations=None):
        self.master = master
        self.handle = handle
        self.config = config
        self.incarnations = dict(incarnations or {})
        self.graph = Graph()
        self.placer = Placer(devices, master.task_spec,
                             allow_soft_placement=config.allow_soft_placement,
                             log_device_placement=config.log_device_placement)
        self.plans = PlanCache(lambda key: ClusterPlan(self, *key))
        self.names = itertools.count()   # TF's master names pairs b_S0, b_S1, ... per session
        self.worker_names = {}           # task -> counter of its device pairs (b_G0, ...)
        self.lock = threading.Lock()
        self.last_used = time.monotonic()

    def deadline(self, timeout_ms=0):
        ms = timeout_ms or self.config.operation_timeout_in_ms
        return time.monotonic() + ms / 1000.0 if ms else None

    def extend(self, node_defs, tensors):
        """Add the client's new nodes, all or none (a failed ExtendSession
        leaves the graph as it was, so the client's retry is not refused
        with "Duplicate node name")."""
        with self.lock:
            protocol.import_nodes(self.graph, node_defs, tensors)

    def run(self, fetch_names, target_names, feed_names, feed_values, deadline, trace,
            step_id=None, peer=None):
        plan = self.plans.get((tuple(fetch_names), tuple(target_names), tuple(feed_names)))
        if deadline is None:
            deadline = self.deadline()
        step_id = step_id or random.getrandbits(62)
        if peer is not None:
            if peer.gone:
                raise errors.CancelledError(None, None, "the client (%s) hung up before its "
                                            "step started" % peer.name)
            peer.call_on_hangup(lambda: self._abort(
                step_id, self.tasks_of(plan), errors.CancelledError(
                    None, None, "the client (%s) hung up during the step" % peer.name)))
        calls = []
        for task, spec in plan.specs.items():
            values = [feed_values[plan.feed_index[name]] for name in spec.feeds]
            header = {"op": protocol.RUN_GRAPH, "graph": plan.handles[task], "step": step_id,
                      "feeds": list(spec.feeds.values()), "fetches": spec.fetches,
                      "deadline_ms": remaining_ms(deadline), "trace": bool(trace)}
            calls.append((task, spec, header, values))
        results = {}
        if len(calls) == 1:
            task, spec, header, values = calls[0]
            try:
                results[task] = self.master.call_worker(task, header, values, deadline)
            except BaseException as e:
                self._abort(step_id, [task], e)
                raise
        else:
            # The other tasks' partitions start on the pool; this task's own
            # (if it has one) runs in this thread meanwhile: no hand-off.
            # A failure anywhere aborts the step on every task at once (the
            # first failure only), even while this thread is still inside its
            # own partition, which may be waiting for the failed task.
            own = self.master.server.task_name
            tasks = [t for t, *_ in calls]
            aborted = []
            abort_lock = threading.Lock()

            def abort_all(exc):
                with abort_lock:
                    if aborted:
                        return
                    aborted.append(exc)
                self._abort(step_id, tasks, exc)

            def on_done(fut):
                if not fut.cancelled() and fut.exception() is not None:
                    abort_all(fut.exception())

            futures = {}
            for task, spec, header, values in calls:
                if task != own:
                    fut = self.master.pool.submit(self.master.call_worker, task, header,
                                                  values, deadline)
                    fut.add_done_callback(on_done)
                    futures[fut] = task
            seen = []
            for task, spec, header, values in calls:
                if task == own:
                    try:
                        results[task] = self.master.call_worker(task, header, values,
                                                                deadline)
                    except BaseException as exc:  # noqa: BLE001 - reported with the others
                        abort_all(exc)
                        seen.append(exc)
            for fut in concurrent.futures.as_completed(futures):
                exc = fut.exception()
                if exc is None:
                    results[futures[fut]] = fut.result()
                    continue
                seen.append(exc)
            if seen:
                primary = [e for e in seen if not _is_secondary(e)]
                raise (primary or seen)[0]
        out = [None] * len(fetch_names)
        for i, name in enumerate(fetch_names):
            if name in plan.feed_index:
                out[i] = feed_values[plan.feed_index[name]]
        stats = {"dev_stats": [], "transfers": []}
        arrived = time.time_ns() // 1000
        for task, spec, _, _ in calls:
            reply, values = results[task]
            for name, value in zip(spec.fetches, values):
                out[plan.fetch_index[name]] = value
                if trace and task != self.master.server.task_name:
                    # A fetched tensor made on another task travels to the master
                    # with that task's reply: record it like any transfer.
                    nbytes = 0 if value.dtype.kind == "O" else int(value.nbytes)
                    stats["transfers"].append(protocol.transfer_to_wire(Transfer(
                        tensor=name + " (fetch)",
                        src_device=plan.placement[name.rsplit(":", 1)[0]],
                        dst_device=self.master.task_spec.to_string() + "/device:CPU:0",
                        bytes=nbytes, start_micros=arrived, end_micros=arrived,
                        wire_bytes=nbytes)))
            if reply.get("stats"):
                stats["dev_stats"].extend(reply["stats"]["dev_stats"])
                stats["transfers"].extend(reply["stats"]["transfers"])
        return out, stats, plan

    def _abort(self, step_id, tasks, exc):
        """Tell ``tasks`` to abort the step, in the background: the caller's
        error must not wait for a task that is stuck or gone."""
        message = "Step aborted because another task failed: %s" % (
            exc.message if isinstance(exc, errors.OpError) else exc)
        for task in tasks:
            self.master.abort_pool.submit(self._abort_one, task, step_id, message)

    def _abort_one(self, task, step_id, message):
        try:
            self.master.call_worker(task, {"op": protocol.ABORT_STEP, "step": step_id,
                                           "message": message},
                                    deadline=time.monotonic() + 2.0)
        except (errors.OpError, OSError):
            pass  # an unreachable task has nothing left to abort

    @staticmethod
    def tasks_of(plan):
        return list(plan.specs)

    def tasks(self):
        """The tasks that have a partition of one of this session's plans."""
        return {t for p in self.plans.values() for t in p.handles}

    def close(self):
        for task in self.tasks():
            try:
                self.master.call_worker(task, {"op": protocol.CLEANUP_SESSION,
                                               "session": self.handle},
                                        deadline=time.monotonic() + 2.0)
            except (errors.OpError, OSError):
                pass
        # Free the graph's constants now, not whenever the garbage collector
        # finds the graph's reference cycles (op <-> tensor <-> graph).
        self.plans.clear()
        self.graph._release()


def _is_secondary(exc):
    """Errors that are consequences of another failure (aborted/cancelled)."""
    return isinstance(exc, (errors.AbortedError, errors.CancelledError))


class MasterService:
    """The master half of a server."""

    def __init__(self, server):
        self.server = server
        self.task_spec = DeviceSpec(server.job_name, 0, server.task_index)
        self.sessions = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max(4, (os.cpu_count() or 2) * 2), "minitf-master")
        # AbortStep calls wait up to 2 s for a stuck task: not in self.pool,
        # where they would hold up the next steps' RunGraph calls.
        self.abort_pool = concurrent.futures.ThreadPoolExecutor(2, "minitf-abort")
        self.handlers = {
            protocol.CREATE_SESSION: self._create_session,
            protocol.EXTEND_SESSION: self._extend_session,
            protocol.RUN_STEP: self._run_step,
            protocol.CANCEL_STEP: self._cancel_step,
            protocol.CLOSE_SESSION: self._close_session,
            protocol.RESET: self._reset,
            protocol.LIST_DEVICES: self._list_devices,
        }

    def call_worker(self, task, header, tensors=(), deadline=None):
        """A worker request; the master's own worker is called directly."""
        if task == self.server.task_name:
            return self.server.worker.handle(header, list(tensors))
        return self.server.channel(task).call(header, tensors, deadline=deadline)

    def cluster_status(self, config, deadline, peer=None):
        """Ask every task (matching ``device_filters``) for its status,
        waiting for tasks that are not up yet (until ``deadline``, or until
        ``peer``, the client that asked, hangs up). Returns
        ``(devices, {task: incarnation})``."""
        filters = [DeviceSpec.from_string(f) for f in config.device_filters]
        devices, incarnations = [], {}
        for task in self.server.cluster_task_names():
            spec = DeviceSpec.from_string(task)
            if filters and not any(f.is_compatible_with(spec) for f in filters) \
                    and task != self.server.task_name:
                continue
            if task == self.server.task_name:
                status = self.server.worker.get_status()
            else:
                status = self.server.channel(task).wait_until_up(
                    deadline, abandoned=peer.hung_up if peer is not None else None)
            devices.extend(protocol.device_from_wire(d) for d in status["devices"])
            incarnations[task] = status.get("incarnation", "")
        return devices, incarnations

    def cluster_devices(self, config, deadline, peer=None):
        return self.cluster_status(config, deadline, peer)[0]

    def create_session(self, header, tensors, peer=None):
        config = protocol.config_from_wire(header.get("config"))
        check_supported(config, remote=True)
        deadline = deadline_from_ms(header.get("deadline_ms")) or (
            time.monotonic() + config.operation_timeout_in_ms / 1000.0
            if config.operation_timeout_in_ms else None)
        devices, incarnations = self.cluster_status(config, deadline, peer)
        handle = "%s/session-%d-%x" % (self.server.task_name, next(self._ids),
                                       random.getrandbits(32))
        session = MasterSession(self, handle, config, devices, incarnations)
        session.extend(header.get("nodes", []), tensors)
        with self._lock:
            self.sessions[handle] = session
        return {"session": handle, "devices": [protocol.device_to_wire(d) for d in devices]}

    def _session(self, handle):
        session = self.sessions.get(handle)
        if session is None:
            raise errors.AbortedError(None, None, "Session %s is not found on %s: it was "
                                      "closed or reset, or the server restarted. Create a "
                                      "new tf.Session." % (handle, self.server.task_name))
        session.last_used = time.monotonic()
        return session

    def reset(self, containers):
        """Clear containers on every task and close all sessions (Session.reset)."""
        with self._lock:
            sessions, self.sessions = list(self.sessions.values()), {}
        for s in sessions:
            s.close()
        errors_seen = []
        for task in self.server.cluster_task_names():
            try:
                self.call_worker(task, {"op": protocol.RESET_CONTAINERS,
                                        "containers": containers},
                                 deadline=time.monotonic() + 10.0)
            except errors.OpError as e:
                errors_seen.append(e)
        if errors_seen:
            raise errors_seen[0]

    # -- requests: header and tensors in, reply header and tensors out ------------------------
    def handle(self, header, tensors, peer=None):
        return protocol.dispatch(self.handlers, header, tensors, peer)

    def _create_session(self, header, tensors, peer):
        return self.create_session(header, tensors, peer), []

    def _extend_session(self, header, tensors, peer):
        self._session(header["session"]).extend(header["nodes"], tensors)
        return {}, []

    def _run_step(self, header, tensors, peer):
        session = self._session(header["session"])
        values, stats, plan = session.run(
            header["fetches"], header["targets"], header["feeds"], tensors,
            deadline_from_ms(header.get("deadline_ms")), header.get("trace", False),
            header.get("step"), peer)
        reply = {"stats": stats if header.get("trace") else None}
        if header.get("placement"):
            reply["placement"] = plan.placement
            reply["soft_placed"] = sorted(op.name for op in session.placer.soft_moved
                                          if op.name in plan.placement)
        if header.get("partitions"):
            reply["partitions"] = plan.partition_graphs()
        return reply, values

    def _cancel_step(self, header, tensors, peer):
        session = self._session(header["session"])
        session._abort(header["step"], session.tasks(), errors.CancelledError(
            None, None, "the client cancelled the step"))
        return {}, []

    def _close_session(self, header, tensors, peer):
        with self._lock:
            session = self.sessions.pop(header["session"], None)
        if session is not None:
            session.close()
        return {}, []

    def _reset(self, header, tensors, peer):
        self.reset(header.get("containers"))
        return {}, []

    def _list_devices(self, header, tensors, peer):
        deadline = deadline_from_ms(header.get("deadline_ms"))
        devices = self.cluster_devices(protocol.config_from_wire(header.get("config")),
                                       deadline, peer)
        return {"devices": [protocol.device_to_wire(d) for d in devices]}, []

    def shutdown(self):
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.abort_pool.shutdown(wait=False, cancel_futures=True)
