"""The client side of ``tf.Session("grpc://host:port")``.

A :class:`RemoteRuntime` stands where a local session has its
``LocalRuntime``: ``sess.run`` hands it tensors to fetch and values to feed,
and it forwards them to the master at the target:

* the first run creates a session on the master and ships the graph; later
  runs first ship any ops added since (``ExtendSession``);
* each run is one ``RunStep`` request: names of fetches, targets and feeds,
  the fed arrays as raw tensors, a deadline;
* Ctrl-C (KeyboardInterrupt) during a step asks the master, on a fresh
  connection, to cancel that step on every task.
"""

import random
import threading
import time

from minitf.framework import errors
from minitf.runtime import partition_graphs, runtimes
from minitf.runtime.config import check_run_options
from minitf.runtime.tracing import with_recv_tensor_stats
from minitf.distributed import protocol
from minitf.distributed.rpc import Channel

# The master enforces a request's deadline and replies with the precise error
# (which task did not answer, which op timed out) right at the deadline. The
# client waits this much longer, so that it receives that reply instead of
# timing out first -- and, when the master itself is stuck, gives up not much
# later than the deadline it was asked for.
CLIENT_GRACE = 0.5


def _with_grace(deadline):
    return None if deadline is None else deadline + CLIENT_GRACE


def _address_of(target):
    return target[len("grpc://"):]


class RemoteRuntime:
    """Runs a client graph through the master at ``target``."""

    def __init__(self, target, graph, config):
        self.target = target
        self.graph = graph
        self.config = config
        self.channel = Channel(_address_of(target), "the master")
        self.handle = None
        self.shipped = 0
        self.devices = None
        self._lock = threading.Lock()
        self._running = set()  # client step ids in flight

    def _deadline(self, options=None):
        ms = (options.timeout_in_ms if options is not None else 0) or \
            self.config.operation_timeout_in_ms
        return (time.monotonic() + ms / 1000.0) if ms > 0 else None, ms

    def _sync_graph(self, deadline):
        with self._lock:
            ops = self.graph._nodes_by_id
            if self.handle is None:
                self.channel.wait_until_up(deadline)
                nodes, tensors = protocol.encode_ops(ops)
                count = len(ops)
                reply, _ = self.channel.call(
                    {"op": protocol.CREATE_SESSION, "nodes": nodes,
                     "config": protocol.config_to_wire(self.config),
                     "deadline_ms": protocol.remaining_ms(deadline)}, tensors,
                    deadline=_with_grace(deadline))
                self.handle = reply["session"]
                self.devices = reply["devices"]
                self.shipped = count
            elif len(ops) > self.shipped:
                count = len(ops)
                nodes, tensors = protocol.encode_ops(ops[self.shipped:count])
                self.channel.call({"op": protocol.EXTEND_SESSION, "session": self.handle,
                                   "nodes": nodes}, tensors, deadline=deadline)
                self.shipped = count

    def run(self, fetches, targets, feeds, feed_values, options, run_metadata):
        check_run_options(options)
        deadline, _ = self._deadline(options)
        self._sync_graph(deadline)
        trace = options is not None and options.trace_level > 0 and run_metadata is not None
        step = random.getrandbits(62)
        header = {"op": protocol.RUN_STEP, "session": self.handle, "step": step,
                  "fetches": [t.name for t in fetches], "targets": [o.name for o in targets],
                  "feeds": [t.name for t in feeds],
                  "deadline_ms": protocol.remaining_ms(deadline),
                  "trace": trace, "placement": run_metadata is not None,
                  "partitions": bool(options is not None and options.output_partition_graphs
                                     and run_metadata is not None)}
        self._running.add(step)
        try:
            reply, values = self.channel.call(header, feed_values,
                                              deadline=_with_grace(deadline),
                                              what="the result of a step from %s"
                                              % self.target)
        except KeyboardInterrupt:
            self._cancel(step)
            raise
        finally:
            self._running.discard(step)
        if run_metadata is not None:
            run_metadata.placement = reply.get("placement") or {}
            run_metadata.soft_placed = reply.get("soft_placed") or []
            run_metadata.partition_graphs = partition_graphs.graph_defs(
                [(p["device"], p["nodes"]) for p in reply.get("partitions") or []], self.graph)
            if reply.get("stats"):
                dev_stats, transfers = protocol.stats_from_wire(reply["stats"])
                run_metadata.step_stats.dev_stats = with_recv_tensor_stats(dev_stats, transfers)
                run_metadata.step_stats.transfers = transfers
        return values

    def _cancel(self, step):
        try:
            self.channel.call({"op": protocol.CANCEL_STEP, "session": self.handle,
                               "step": step},
                              deadline=time.monotonic() + 2.0)
        except (errors.OpError, OSError):
            pass

    def cancel_running_steps(self):
        """Ask the master to cancel every step of ours still in flight."""
        for step in list(self._running):
            self._cancel(step)

    def list_devices(self):
        """The devices this session can use: the master's own and those of the
        tasks its ``ConfigProto.device_filters`` keep (as in TF)."""
        if self.devices is None:
            deadline = self._deadline()[0]
            reply, _ = self.channel.call(
                {"op": protocol.LIST_DEVICES, "config": protocol.config_to_wire(self.config),
                 "deadline_ms": protocol.remaining_ms(deadline)},
                deadline=_with_grace(deadline))
            self.devices = reply["devices"]
        return [protocol.device_from_wire(d) for d in self.devices]

    def close(self):
        if self.handle is not None:
            try:
                self.channel.call({"op": protocol.CLOSE_SESSION, "session": self.handle},
                                  deadline=time.monotonic() + 2.0)
            except (errors.OpError, OSError):
                pass
        self.channel.close()


def reset_target(target, containers=None, config=None):
    """``tf.Session.reset``: clear containers on every task of the cluster."""
    channel = Channel(_address_of(target), "the master")
    try:
        channel.call({"op": protocol.RESET,
                      "containers": list(containers) if containers else None},
                     deadline=time.monotonic() + 30.0)
    finally:
        channel.close()


runtimes.register("GRPC_SESSION", lambda target: target.startswith("grpc://"),
                  RemoteRuntime, reset_target)
