"""Turn a step's trace into a Chrome trace, as ``tensorflow.python.client.timeline``.

::

    from minitf.timeline import Timeline

    md = tf.RunMetadata()
    sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=md)
    with open("step.json", "w") as f:
        f.write(Timeline(md.step_stats).generate_chrome_trace_format())

Open the file in https://ui.perfetto.dev (or chrome://tracing). What you see:

* one *process* per task (``/job:worker/replica:0/task:1``) and, inside it,
  one *thread* per device: the ops that ran there, as "X" (complete) events
  named by op type, with the op's name and inputs in ``args``;
* one more thread per task, "transfers", holding a slice for every tensor
  that task sent or received; a flow arrow ("s" -> "f" events with the same
  id) joins the sender's slice to the receiver's, so you can follow a tensor
  across tasks (and, on one task, across devices: host<->GPU copies);
* with a ``graph`` and ``show_dataflow=True``, flow arrows from each op to
  the ops that consumed its outputs, as TF draws them.

Timestamps are microseconds since the epoch, as in ``all_start_micros``.
The format is Google's "Trace Event Format" (a JSON object with a
``traceEvents`` list).
"""

import json
import re

_TASK = re.compile(r"^(/job:[^/]+/replica:\d+/task:\d+)")


def _task_of(device):
    m = _TASK.match(device or "")
    return m.group(1) if m else (device or "(unknown)")


class Timeline:
    """A Chrome trace of one step's ``StepStats``."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph
        self._events = []
        self._pids = {}     # task -> pid
        self._tids = {}     # (task, thread name) -> tid
        self._next_flow = 0

    # -- the ids a trace viewer groups by -------------------------------------------------------
    def _pid(self, task):
        if task not in self._pids:
            pid = len(self._pids)
            self._pids[task] = pid
            self._events.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                                 "args": {"name": task}})
            self._events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                                 "tid": 0, "args": {"sort_index": pid}})
        return self._pids[task]

    def _tid(self, task, thread):
        key = (task, thread)
        if key not in self._tids:
            pid = self._pid(task)
            tid = sum(1 for t, _ in self._tids if t == task)
            self._tids[key] = tid
            self._events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                                 "args": {"name": thread}})
            self._events.append({"name": "thread_sort_index", "ph": "M", "pid": pid,
                                 "tid": tid, "args": {"sort_index": tid}})
        return self._tids[key]

    def _flow(self, name, src, dst, category):
        """An arrow from ``src`` to ``dst``, each ``(pid, tid, ts)`` inside a slice."""
        flow_id = self._next_flow
        self._next_flow += 1
        self._events.append({"name": name, "cat": category, "ph": "s", "id": flow_id,
                             "pid": src[0], "tid": src[1], "ts": src[2]})
        self._events.append({"name": name, "cat": category, "ph": "f", "bp": "e",
                             "id": flow_id, "pid": dst[0], "tid": dst[1], "ts": dst[2]})

    # -- the events -----------------------------------------------------------------------------
    def _ops(self):
        """One "X" event per op; returns ``{op name: (pid, tid, start, end)}``."""
        where = {}
        for dev in sorted(self._step_stats.dev_stats, key=lambda d: d.device):
            task = _task_of(dev.device)
            pid, tid = self._pid(task), self._tid(task, dev.device)
            for ns in dev.node_stats:
                start = int(ns.all_start_micros)
                dur = max(int(ns.all_end_rel_micros), 0)
                inputs = self._inputs_of(ns.node_name)
                args = {"name": ns.node_name, "op": ns.op_type}
                args.update({"input%d" % i: name for i, name in enumerate(inputs)})
                self._events.append({"name": ns.op_type, "cat": "Op", "ph": "X", "pid": pid,
                                     "tid": tid, "ts": start, "dur": dur, "args": args})
                where[ns.node_name] = (pid, tid, start, start + dur)
        return where

    def _inputs_of(self, name):
        if self._graph is None:
            return []
        try:
            op = self._graph.get_operation_by_name(name)
        except (KeyError, ValueError):
            return []
        return [t.name for t in op.inputs]

    def _transfers(self):
        """Each transfer: a slice on both tasks' "transfers" thread and an arrow."""
        for t in self._step_stats.transfers:
            start, end = int(t.start_micros), int(t.end_micros)
            src_task, dst_task = _task_of(t.src_device), _task_of(t.dst_device)
            src = (self._pid(src_task), self._tid(src_task, "transfers"))
            dst = (self._pid(dst_task), self._tid(dst_task, "transfers"))
            args = {"tensor": t.tensor, "src_device": t.src_device,
                    "dst_device": t.dst_device, "bytes": int(t.bytes),
                    "wire_bytes": int(t.wire_bytes)}
            same = src == dst
            for (pid, tid), what in ((src, "send"), (dst, "recv")):
                if same and what == "recv":
                    break  # a copy inside one task: one slice carries both ends
                self._events.append({"name": "%s %s" % (what, t.tensor), "cat": "transfer",
                                     "ph": "X", "pid": pid, "tid": tid, "ts": start,
                                     "dur": max(end - start, 1), "args": args})
            # "s" at the start of the sender's slice, "f" at the receiver's end.
            self._flow(t.tensor, (src[0], src[1], start),
                       (dst[0], dst[1], max(end - 1, start)), "transfer")

    def _dataflow(self, where):
        if self._graph is None:
            return
        for name, (pid, tid, start, end) in where.items():
            for tensor in self._inputs_of(name):
                producer = tensor.split(":")[0]
                if producer in where:
                    p = where[producer]
                    self._flow(tensor, (p[0], p[1], p[2]), (pid, tid, start), "DataFlow")

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The trace as a JSON string. ``show_memory`` is accepted for TF
        compatibility; minitf does not trace allocations yet."""
        self._events, self._pids, self._tids, self._next_flow = [], {}, {}, 0
        where = self._ops()
        self._transfers()
        if show_dataflow:
            self._dataflow(where)
        return json.dumps({"traceEvents": self._events}, indent=1)
