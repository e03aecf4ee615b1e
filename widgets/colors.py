"""One colour per device, the same in every view of a notebook.

The first view that meets a device gives it the next free colour of
:data:`DEVICE_PALETTE`; every later view (placement, timeline, cluster,
variables) asks :func:`device_color` and gets the same one, so "purple"
means the same device in every picture.

Device colours never coincide with the colours that mean something else:
the edge kinds (:data:`EDGE`) and the task states (:data:`STATUS`) use reds,
oranges, greens and greys, which the device palette leaves out.
"""

import colorsys

from .names import canonical_device, device_sort_key

#: Kinds of edges and transfers. Reds and oranges: nothing else uses them.
EDGE = {"network": "#d62728",      # a tensor sent between tasks (Send/Recv)
        "copy": "#ff7f0e",         # a copy between two devices of one task
        "data": "#6b6b6b",         # an ordinary data edge inside a device
        "control": "#a0a0a0"}      # a control dependency / control signal
#: Whether a task answers.
STATUS = {"up": "#2e7d32", "down": "#c62828"}
#: Idle time, unplaced ops.
NEUTRAL = "#c7c7c7"

# matplotlib's tab10 and tab20b colours without the reds, oranges, greens
# and greys above.
DEVICE_PALETTE = ["#1f77b4", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22",
                  "#393b79", "#7b4173", "#5254a3", "#8c6d31", "#6b6ecf", "#ce6dbd"]

_assigned = {}


def _extra_color(i):
    """Colours past the palette: hues from blue round to magenta (never red,
    orange or green), darker on each round."""
    hues = [0.58, 0.75, 0.5, 0.66, 0.83, 0.55, 0.9, 0.7]
    h = hues[i % len(hues)]
    light = 0.45 - 0.08 * ((i // len(hues)) % 3)
    r, g, b = colorsys.hls_to_rgb(h, light, 0.55)
    return "#%02x%02x%02x" % (int(r * 255), int(g * 255), int(b * 255))


def device_color(device):
    """The colour of ``device`` (given the next free one the first time)."""
    if not device or device == "(unplaced)":
        return NEUTRAL
    key = canonical_device(device)
    if key not in _assigned:
        i = len(_assigned)
        _assigned[key] = DEVICE_PALETTE[i] if i < len(DEVICE_PALETTE) else \
            _extra_color(i - len(DEVICE_PALETTE))
    return _assigned[key]


def device_colors(devices):
    """``{device: colour}``; new devices get colours in device order, so the
    first view of a cluster colours it job by job, task by task."""
    ordered = sorted(set(devices), key=device_sort_key)
    return {d: device_color(d) for d in ordered}


def reset_device_colors():
    """Forget every assignment (a fresh notebook's colours)."""
    _assigned.clear()


def lighter(color, amount=0.6):
    """``color`` mixed with white (``amount`` 0: unchanged, 1: white)."""
    c = color.lstrip("#")
    r, g, b = (int(c[i:i + 2], 16) for i in (0, 2, 4))
    mix = [int(v + (255 - v) * amount) for v in (r, g, b)]
    return "#%02x%02x%02x" % tuple(mix)
