"""The engine of a local ``tf.Session()``: :class:`LocalRuntime` (TF's DirectSession).

It owns the session's devices and one resource manager per device, so two
local sessions never share a variable; a placer; and a cache of plans, one per
distinct (fetches, targets, feeds) signature, so a repeated ``run`` skips
pruning, placement and kernel lookup entirely. A step then is::

    plan = self.plans.get(signature)          # plan_cache.py (built once)
    step = StepState(deadline, step id, trace)
    values = plan.run(feed_values, step)      # executor.py

``RunOptions(output_partition_graphs=True)`` adds the plan's ops, split by
device as TF's DirectSession splits them, to ``run_metadata.partition_graphs``
(partition_graphs.py), worked out once per signature.
"""

import itertools
import time

from minitf.framework.device_spec import DeviceSpec
from minitf.kernels import threads
from minitf.runtime import partition_graphs, runtimes
from minitf.runtime.config import (check_run_options, fold_constants, fuse_elementwise,
                                   skip_unread)
from minitf.runtime.devices import local_devices
from minitf.runtime.executor import Plan
from minitf.runtime.step import StepState
from minitf.runtime.placer import Placer
from minitf.runtime.plan_cache import PlanCache
from minitf.runtime.resource_manager import ResourceManager
from minitf.runtime.thread_pools import pools_for
from minitf.runtime.tracing import Trace

_step_ids = itertools.count(1)


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
        self.pools, self._owns_pools = pools_for(config, "minitf-session")
        self.plans = PlanCache(self._build_plan)
        self._fuse = fuse_elementwise(config)
        self._fold = fold_constants(config)
        self._skip_unread = skip_unread(config)
        self._running = set()  # StepStates of the steps in flight
        self._partitions = {}  # signature -> [(device, records)] (partition_graphs.py)
        self._names = itertools.count()  # names the Send/Recv nodes: b/_0, b/_1, ...

    def _build_plan(self, key):
        fetches, targets, feeds = key
        return Plan(self.graph, fetches, targets, feeds, self.placer, self.contexts,
                    self.pools, fuse=self._fuse, fold=self._fold,
                    skip_unread=self._skip_unread)

    def run(self, fetches, targets, feeds, feed_values, options, run_metadata):
        check_run_options(options)
        signature = (tuple(fetches), tuple(targets), tuple(feeds))
        plan = self.plans.get(signature)
        timeout_ms = (options.timeout_in_ms if options is not None else 0) or \
            self.config.operation_timeout_in_ms
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        trace = Trace() if (options is not None and options.trace_level > 0
                            and run_metadata is not None) else None
        step = StepState(deadline, next(_step_ids), trace=trace)
        # (every step: the calling thread may have run another session's steps)
        threads.set_kernel_threads(self.config.intra_op_parallelism_threads)
        self._running.add(step)
        try:
            values = plan.run(feed_values, step)
        except KeyboardInterrupt:
            step.cancelled.set()
            raise
        finally:
            self._running.discard(step)
        if run_metadata is not None:
            run_metadata.partition_graphs = self.partition_graphs(signature, plan) \
                if options is not None and options.output_partition_graphs else []
            run_metadata.placement = dict(plan.placement)
            run_metadata.soft_placed = sorted(op.name for op in self.placer.soft_moved
                                              if op.name in plan.placement)
            if trace is not None:
                run_metadata.step_stats.dev_stats = trace.device_stats()
                run_metadata.step_stats.transfers = list(trace.transfers)
                run_metadata.step_stats.memory = list(trace.memory)
        return values

    def partition_graphs(self, signature, plan):
        """TF's GraphDefs of the plan's ops, one per device (partition_graphs.py)."""
        parts = self._partitions.get(signature)
        if parts is None:
            fetches, _, feeds = signature
            types = {d.name: d.device_type for d in self.devices}
            parts = self._partitions.setdefault(signature, partition_graphs.local_partitions(
                self.graph, plan.placement, feeds, fetches, types, self._names))
        return partition_graphs.graph_defs(parts, self.graph)

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
        if self._owns_pools:
            self.pools.shutdown()


runtimes.register("DIRECT_SESSION", lambda target: not target,
                  lambda target, graph, config: LocalRuntime(graph, config))
