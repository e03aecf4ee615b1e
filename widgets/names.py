"""Device, task and op names: parsed, put in order, and shortened for labels.

Shortening follows one rule everywhere: keep the *end* of a name (its last
scope parts say what it is) and cut at a ``/`` so no part is cut mid-word::

    shorten_name("tower_0/gradients/tower_0/MatMul_grad/MatMul_1", 24)
    -> "…/MatMul_grad/MatMul_1"
"""

import re

_DEVICE = re.compile(r"^/job:(?P<job>[^/]+)(?:/replica:(?P<replica>\d+))?"
                     r"(?:/task:(?P<task>\d+))?(?:/(?:device:)?(?P<type>[A-Za-z_]+):(?P<index>\d+))?$")


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
    if d["type"] is not None:
        d["type"] = d["type"].upper()
    return d


def canonical_device(name):
    """The full name TF prints: ``/job:w/task:1/cpu:0`` ->
    ``/job:w/replica:0/task:1/device:CPU:0`` (other strings unchanged)."""
    d = parse_device(name)
    if d["job"] is None or d["type"] is None:
        return name
    return "/job:%s/replica:%d/task:%d/device:%s:%d" % (
        d["job"], d["replica"] or 0, d["task"] or 0, d["type"], d["index"])


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


def device_kind(device):
    """``CPU:0`` for a device name (the part after the task)."""
    d = parse_device(device)
    return "%s:%d" % (d["type"], d["index"]) if d["type"] is not None else short_device(device)


def device_sort_key(device):
    """Order devices by job, task, then type and index (CPU before GPU)."""
    d = parse_device(device)
    return (d["job"] or "~", d["task"] if d["task"] is not None else 1 << 30,
            d["type"] or "", d["index"] if d["index"] is not None else -1, device or "")


def shorten_name(name, width):
    """``name`` in at most ``width`` characters, cut from the front at a scope
    boundary (``/``) and marked with ``…``. A last part that is itself too
    long keeps its last whole words (``…entropy_loss``), so a label is never
    cut mid-word while a shorter whole piece fits."""
    if len(name) <= width:
        return name
    parts = name.split("/")
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + 1 + len(kept) + 2 > width:  # "…/" + part + "/" + kept
            break
        kept = part + "/" + kept
    if len(kept) + 2 <= width and kept != name:
        return "…/" + kept
    # Even the last part does not fit: keep its last whole words
    # (``…entropy_loss``), or its end if one word is already too long.
    last = parts[-1]
    words = last.split("_")
    kept = words[-1]
    for word in reversed(words[:-1]):
        if len(word) + 1 + len(kept) + 1 > width:
            break
        kept = word + "_" + kept
    if len(kept) + 1 <= width:
        return "…" + kept
    return "…" + last[-(width - 1):] if width > 1 else "…"


def ellipsize(text, width):
    """``text`` cut to ``width`` characters by replacing its middle with "…",
    keeping both ends (for text that is not a scoped name)."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 2
    return text[:width - 1 - tail] + "…" + text[len(text) - tail:]


def format_bytes(n):
    """``48`` -> ``48 B``, ``3_200_000`` -> ``3.2 MB`` (decimal units, like MB/s)."""
    n = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.3g %s" % (n, unit))
        n /= 1000.0
    return "%d B" % n


def format_micros(us):
    """A duration in µs as ``850 µs`` / ``6.5 ms`` / ``1.2 s``."""
    us = float(us)
    if us < 1000:
        return "%d µs" % round(us)
    if us < 1_000_000:
        return "%.3g ms" % (us / 1000.0)
    return "%.3g s" % (us / 1_000_000.0)
