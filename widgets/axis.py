"""Axis ticks at round numbers, spaced so their labels never touch."""

import math


def nice_step(span, max_ticks):
    """The smallest of 1, 2, 2.5, 5 x 10^k that cuts ``span`` into at most
    ``max_ticks`` pieces."""
    if span <= 0:
        return 1.0
    raw = span / max(1, max_ticks)
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def ticks(lo, hi, pixels, label_px):
    """Round values between ``lo`` and ``hi`` for an axis ``pixels`` long
    whose labels are about ``label_px`` wide (a label's width plus a gap)."""
    max_ticks = max(1, int(pixels // max(label_px, 1)))
    step = nice_step(hi - lo, max_ticks)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    v = first
    while v <= hi + step * 1e-9:
        out.append(round(v, 10))
        v += step
    return out


def format_tick(value, step):
    """A tick label with as many decimals as the step needs (0.25 -> "0.25")."""
    decimals = 0
    while decimals < 6 and abs(round(step, decimals) - step) > abs(step) * 1e-6:
        decimals += 1
    return "%.*f" % (decimals, value)
