"""The data behind :class:`TransferView`: what each step's trace says about
ops per device and tensors that crossed between devices.

A transfer is a ``Transfer`` record of ``RunMetadata.step_stats``: a tensor,
the device that sent it, the device that received it, its size and when it
left and arrived (µs since the epoch). Between tasks it went over the wire
(a Send/Recv pair); between two devices of one task it is a host<->GPU copy.
Both look the same here, only their ``kind`` differs.
"""

from dataclasses import dataclass

from .names import device_sort_key, task_of


@dataclass
class TransferRow:
    step: int            # 1-based, in the order the RunMetadata were given
    tensor: str
    src_device: str
    dst_device: str
    bytes: int
    start_micros: int
    end_micros: int

    @property
    def micros(self):
        return max(0, self.end_micros - self.start_micros)

    @property
    def mb_per_s(self):
        """Bytes per µs is exactly MB/s (decimal megabytes)."""
        return self.bytes / self.micros if self.micros else float("inf")

    @property
    def kind(self):
        return "network" if task_of(self.src_device) != task_of(self.dst_device) \
            else "device copy"

    @property
    def link(self):
        return (self.src_device, self.dst_device)


@dataclass
class OpSpan:
    step: int
    device: str
    name: str
    op_type: str
    start_micros: int
    end_micros: int


def as_steps(run_metadata):
    """One RunMetadata or a list of them -> a list."""
    if hasattr(run_metadata, "step_stats"):
        return [run_metadata]
    steps = list(run_metadata)
    if not steps:
        raise ValueError("TransferView needs at least one RunMetadata")
    return steps


def transfer_rows(steps):
    """Every transfer of every step, in time order."""
    rows = [TransferRow(i, t.tensor, t.src_device, t.dst_device, int(t.bytes),
                        int(t.start_micros), int(t.end_micros))
            for i, md in enumerate(steps, 1) for t in md.step_stats.transfers]
    return sorted(rows, key=lambda r: (r.step, r.start_micros, r.tensor))


def op_spans(steps):
    """Every traced op of every step."""
    return [OpSpan(i, dev.device, ns.node_name, ns.op_type, int(ns.all_start_micros),
                   int(ns.all_start_micros) + int(ns.all_end_rel_micros))
            for i, md in enumerate(steps, 1) for dev in md.step_stats.dev_stats
            for ns in dev.node_stats]


def link_totals(rows):
    """``{(src, dst): {"transfers", "bytes", "micros"}}`` summed over rows."""
    totals = {}
    for r in rows:
        t = totals.setdefault(r.link, {"transfers": 0, "bytes": 0, "micros": 0})
        t["transfers"] += 1
        t["bytes"] += r.bytes
        t["micros"] += r.micros
    return dict(sorted(totals.items(), key=lambda kv: (device_sort_key(kv[0][0]),
                                                       device_sort_key(kv[0][1]))))


def lanes(spans, rows):
    """The devices that get a lane in the timeline, ordered by task."""
    devices = {s.device for s in spans} | {r.src_device for r in rows} | \
        {r.dst_device for r in rows}
    return sorted(devices, key=device_sort_key)
