"""Device and task names, shortened for labels, and one colour per device.

Every view colours a device the same way, so "orange" means the same device
in the placement picture, the timeline and the cluster map.
"""

import re

_DEVICE = re.compile(r"^/job:(?P<job>[^/]+)(?:/replica:(?P<replica>\d+))?"
                     r"(?:/task:(?P<task>\d+))?(?:/device:(?P<type>[^:/]+):(?P<index>\d+))?$")

# matplotlib's "tab10" colours, written out so this module needs no matplotlib.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
           "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#d62728"]
UNPLACED = "#c7c7c7"


def parse_device(name):
    """``/job:w/replica:0/task:1/device:CPU:0`` -> dict(job, replica, task, type, index).

    Parts that are missing (``/job:w/task:1`` as a user wrote it) are None.
    """
    m = _DEVICE.match(name or "")
    if not m:
        return {"job": None, "replica": None, "task": None, "type": None, "index": None}
    d = m.groupdict()
    for key in ("replica", "task", "index"):
        d[key] = int(d[key]) if d[key] is not None else None
    return d


def task_of(device):
    """The task a device belongs to: ``/job:w/replica:0/task:1`` (or the name
    itself when it names no task, e.g. an unplaced op's empty request)."""
    d = parse_device(device)
    if d["job"] is None:
        return device or "(unplaced)"
    return "/job:%s/replica:%d/task:%d" % (d["job"], d["replica"] or 0, d["task"] or 0)


def short_device(device):
    """A label a legend can hold: ``worker/task:1/CPU:0``."""
    d = parse_device(device)
    if d["job"] is None:
        return device or "(unplaced)"
    out = "%s/task:%s" % (d["job"], d["task"] if d["task"] is not None else "?")
    if d["type"] is not None:
        out += "/%s:%d" % (d["type"], d["index"])
    return out


def short_task(task):
    """``/job:worker/replica:0/task:1`` -> ``worker/task:1``."""
    return short_device(task)


def device_sort_key(device):
    """Order devices by job, task, then type and index (CPU before GPU)."""
    d = parse_device(device)
    return (d["job"] or "~", d["task"] if d["task"] is not None else 1 << 30,
            d["type"] or "", d["index"] if d["index"] is not None else -1, device or "")


def device_colors(devices):
    """``{device: colour}`` for a set of device names, stable for a given set."""
    ordered = sorted(set(devices), key=device_sort_key)
    return {dev: PALETTE[i % len(PALETTE)] for i, dev in enumerate(ordered)}


def format_bytes(n):
    """``48`` -> ``48 B``, ``3_200_000`` -> ``3.2 MB`` (decimal units, like MB/s)."""
    n = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.3g %s" % (n, unit))
        n /= 1000.0
    return "%d B" % n


def ellipsize(text, width):
    """``text`` cut to ``width`` characters by replacing its middle with "…",
    keeping both ends: ``ellipsize('tower_1/dense/kernel/Adam_1', 20)`` is
    ``'tower_1/de…el/Adam_1'``."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 2
    return text[:width - 1 - tail] + "…" + text[len(text) - tail:]


def format_micros(us):
    """A duration in µs as ``850 µs`` / ``6.5 ms`` / ``1.2 s``."""
    us = float(us)
    if us < 1000:
        return "%d µs" % round(us)
    if us < 1_000_000:
        return "%.3g ms" % (us / 1000.0)
    return "%.3g s" % (us / 1_000_000.0)
