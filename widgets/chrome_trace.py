"""The steps a TransferView draws, as a Chrome trace (Perfetto, chrome://tracing).

It is the same picture in a tool made for big traces: one process per task,
one thread per device with its ops (waiting ops in the category "wait"), a
"transfers" thread per task, and one flow arrow per transfer from the
moment the sender's value was ready to its arrival - exactly the arrows
:class:`~minitf.widgets.TransferView` draws (minitf's
:class:`~minitf.timeline.ChromeTraceWriter` writes the events).
"""

from minitf.timeline import ChromeTraceWriter

from .lanes import is_waiting
from .names import task_of


def chrome_trace(steps):
    """``{"traceEvents": [...]}`` for a list of :class:`StepTrace`."""
    out = ChromeTraceWriter()
    for step in steps:
        for o in sorted(step.ops, key=lambda o: (o.device, o.start)):
            out.slice(task_of(o.device), o.device, o.type, o.start, o.micros,
                      "wait" if is_waiting(o.type) else "Op",
                      {"name": o.name, "op": o.type, "step": step.step,
                       "outputs": ["%s%s %d B" % (dt, shape if shape is not None else "", b)
                                   for dt, shape, b in o.outputs]})
        for t in step.transfers:
            out.transfer(t.tensor, t.src_device, t.dst_device, t.ready, t.arrived, t.asked,
                         {"tensor": t.tensor, "src_device": t.src_device,
                          "dst_device": t.dst_device, "bytes": t.bytes,
                          "wire_bytes": t.wire_bytes, "waited_micros": t.waited,
                          "transit_micros": t.wire_micros, "sender_ready": t.ready_from,
                          "step": step.step},
                         category="control" if t.control else "transfer")
    return {"traceEvents": out.events}
