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
  across tasks (and, on one task, across devices: host<->GPU copies). The
  sender's slice starts when its value was *ready* (its ``_Send``, or the op
  that made it, finished); the receiver's slice starts when its ``_Recv``
  began to wait, so a long receiver slice before the arrow starts is time
  spent waiting for the sender, not on the wire;
* with a ``graph`` and ``show_dataflow=True``, flow arrows from each op to
  the ops that consumed its outputs, as TF draws them.

Timestamps are microseconds since the epoch, as in ``all_start_micros``.
The format is Google's "Trace Event Format" (a JSON object with a
``traceEvents`` list); :class:`ChromeTraceWriter` writes it, and
``minitf.widgets.TransferView.export_chrome_trace`` uses the same writer.
"""

import json
import re

_TASK = re.compile(r"^(/job:[^/]+/replica:\d+/task:\d+)")


def task_of(device):
    m = _TASK.match(device or "")
    return m.group(1) if m else (device or "(unknown)")


def _safe(name):
    """How minitf's partitioner turns a tensor or device name into part of an op name."""
    return name.replace(":", "_").replace("/", "_")


def sender_ready(tensor, dst_device, src_ops, arrived):
    """When the sending device had ``tensor`` ready to go to ``dst_device``.

    ``src_ops``: ``(name, type, start, end)`` of the ops traced on the
    sending device; ``arrived``: when the receiver had it (µs). Returns
    ``(µs, op name, how)`` or None when the trace does not say.

    Follows the names minitf's partitioner gives (minitf/distributed/
    partition.py, TF's master's names): the producer's ``<producer>_S<n>``
    ``_Send`` when there is only one (its end, or its start if the arrival
    was stamped before the send returned), else the end of the op whose
    output went out: the encoder of a compressed tensor, the token of a
    control signal (``<op>/ctrl_S<n>``), or the tensor's producer.
    """
    producer = tensor[1:] if tensor.startswith("^") else tensor.rsplit(":", 1)[0]
    pattern = re.compile(r"^%s_S\d+$" % re.escape(producer))
    sends = [o for o in src_ops if o[1] in ("_Send", "_HostSend") and pattern.match(o[0])]
    if len(sends) == 1:
        name, _, start, end = sends[0]
        if end <= arrived:
            return end, name, "its _Send finished"
        return min(start, arrived), name, "its _Send started"
    by_name = {o[0]: o for o in src_ops}
    safe = _safe(tensor.lstrip("^"))
    names = ["_quantize_%s_%s" % (safe, _safe(dst_device)),
             "_compress_%s_%s" % (safe, _safe(dst_device))]
    if tensor.startswith("^"):
        token = re.compile(r"^%s/ctrl_S\d+$" % re.escape(producer))
        names += [o[0] for o in src_ops if token.match(o[0])][:1]
    else:
        names.append(producer)
    for name in names:
        if name in by_name:
            return min(by_name[name][3], arrived), name, "%s finished" % name
    return None


class ChromeTraceWriter:
    """Trace Event Format, piece by piece: processes, threads, slices, flows."""

    def __init__(self):
        self.events = []
        self._pids = {}     # process name -> pid
        self._tids = {}     # (process name, thread name) -> tid
        self._next_flow = 0

    def pid(self, process):
        if process not in self._pids:
            pid = len(self._pids)
            self._pids[process] = pid
            self.events.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                                "args": {"name": process}})
            self.events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                                "tid": 0, "args": {"sort_index": pid}})
        return self._pids[process]

    def tid(self, process, thread):
        """``(pid, tid)`` of a thread (made on first use)."""
        key = (process, thread)
        if key not in self._tids:
            pid = self.pid(process)
            tid = sum(1 for p, _ in self._tids if p == process)
            self._tids[key] = tid
            self.events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                                "args": {"name": thread}})
            self.events.append({"name": "thread_sort_index", "ph": "M", "pid": pid,
                                "tid": tid, "args": {"sort_index": tid}})
        return self._pids[process], self._tids[key]

    def slice(self, process, thread, name, start, duration, category, args=None):
        """A complete ("X") event."""
        pid, tid = self.tid(process, thread)
        self.events.append({"name": name, "cat": category, "ph": "X", "pid": pid,
                            "tid": tid, "ts": int(start), "dur": max(int(duration), 0),
                            "args": dict(args or {})})

    def flow(self, name, src, dst, category):
        """An arrow from ``src`` to ``dst``, each ``(process, thread, ts)``
        inside a slice of that thread (Perfetto binds flows to slices)."""
        flow_id = self._next_flow
        self._next_flow += 1
        spid, stid = self.tid(src[0], src[1])
        dpid, dtid = self.tid(dst[0], dst[1])
        self.events.append({"name": name, "cat": category, "ph": "s", "id": flow_id,
                            "pid": spid, "tid": stid, "ts": int(src[2])})
        self.events.append({"name": name, "cat": category, "ph": "f", "bp": "e",
                            "id": flow_id, "pid": dpid, "tid": dtid, "ts": int(dst[2])})

    def transfer(self, tensor, src_device, dst_device, ready, arrived, asked, args,
                 category="transfer"):
        """A tensor sent from one device to another: a "send" slice on the
        sender's task (ready..arrived), a "recv" slice on the receiver's
        (asked..arrived, or ready..arrived when nobody waited) and a flow."""
        src_task, dst_task = task_of(src_device), task_of(dst_device)
        end = max(arrived, ready + 1)
        self.slice(src_task, "transfers", "send %s" % tensor, ready, end - ready, category,
                   args)
        begin = ready if asked is None else min(asked, ready)
        if src_task != dst_task:  # a copy inside one task: one slice carries both ends
            self.slice(dst_task, "transfers", "recv %s" % tensor, begin, end - begin,
                       category, args)
        # "s" where the sender's slice starts, "f" just inside the receiver's end.
        self.flow(tensor, (src_task, "transfers", ready), (dst_task, "transfers", end - 1),
                  category)

    def to_json(self):
        return json.dumps({"traceEvents": self.events}, indent=1)


class Timeline:
    """A Chrome trace of one step's ``StepStats``."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def _ops(self, out):
        """One "X" event per op; returns ``{op name: (task, device, start, end)}``."""
        where = {}
        for dev in sorted(self._step_stats.dev_stats, key=lambda d: d.device):
            task = task_of(dev.device)
            for ns in dev.node_stats:
                if ns.node_name == "RecvTensor":   # drawn from step_stats.transfers instead
                    continue
                start = int(ns.all_start_micros)
                dur = max(int(ns.all_end_rel_micros), 0)
                args = {"name": ns.node_name, "op": ns.op_type}
                args.update({"input%d" % i: name
                             for i, name in enumerate(self._inputs_of(ns.node_name))})
                out.slice(task, dev.device, ns.op_type, start, dur, "Op", args)
                where[ns.node_name] = (task, dev.device, start, start + dur)
        return where

    def _inputs_of(self, name):
        if self._graph is None:
            return []
        try:
            op = self._graph.get_operation_by_name(name)
        except (KeyError, ValueError):
            return []
        return [t.name for t in op.inputs]

    def _transfers(self, out):
        by_device = {}
        for dev in self._step_stats.dev_stats:
            by_device.setdefault(dev.device, []).extend(
                (ns.node_name, ns.op_type, int(ns.all_start_micros),
                 int(ns.all_start_micros) + int(ns.all_end_rel_micros))
                for ns in dev.node_stats if ns.node_name != "RecvTensor")
        for t in self._step_stats.transfers:
            start, end = int(t.start_micros), int(t.end_micros)
            fetch = t.tensor.endswith(" (fetch)")  # a result going back to the master
            tensor = t.tensor[:-len(" (fetch)")] if fetch else t.tensor
            src_device = t.src_device if t.src_device != "host" else \
                task_of(t.dst_device) + "/device:CPU:0"
            dst_device = t.dst_device if t.dst_device != "host" else \
                task_of(t.src_device) + "/device:CPU:0"
            args = {"tensor": t.tensor, "src_device": t.src_device,
                    "dst_device": t.dst_device, "bytes": int(t.bytes),
                    "wire_bytes": int(t.wire_bytes)}
            ready, asked = start, None
            if task_of(src_device) != task_of(dst_device):
                # Between tasks the record starts when the receiver began to
                # wait; the transfer itself starts when the sender was ready.
                found = sender_ready(tensor, dst_device, by_device.get(src_device, []), end)
                if found is not None:
                    ready = found[0]
                    asked = None if fetch else start
                    args["sender_ready_because"] = found[2]
            out.transfer(t.tensor, src_device, dst_device, ready, end, asked, args)

    def _dataflow(self, out, where):
        if self._graph is None:
            return
        for name, (task, device, start, end) in where.items():
            for tensor in self._inputs_of(name):
                producer = tensor.split(":")[0]
                if producer in where:
                    p = where[producer]
                    out.flow(tensor, (p[0], p[1], p[2]), (task, device, start), "DataFlow")

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The trace as a JSON string. ``show_memory`` is accepted for TF
        compatibility; minitf does not trace allocations yet."""
        out = ChromeTraceWriter()
        where = self._ops(out)
        self._transfers(out)
        if show_dataflow:
            self._dataflow(out, where)
        return out.to_json()
