"""VariableStateView: the variables each server holds, live.

::

    view = VariableStateView(cluster)            # a LocalCluster, ClusterSpec, target,
    view                                          # Server or Session; refresh=1.0 s
    ...  train, or let several sessions update the same variables ...
    view.close()                                  # stops the polling thread

    VariableStateView(md)                        # a RunMetadata (minitf's or real TF's):
                                                  # what the step used, without values

Each picked variable gets a panel: a scalar as a number, an array as a heat
map (a big matrix is shown in blocks, each the mean of its cells; hover a
block for its range, mean, min and max) and, under it, its history: the
value (or the mean of an array) at every poll. You pick the variables in
"panels"; until you do, the view picks the largest ones and the ones that
change fastest, so a training run shows its weight matrices, not the
optimizer's scalars. Pick one variable in "history" to see its history
large, under the panels.

The polling runs in a background (daemon) thread, so the kernel stays free
to run your training cells; each poll asks every task with a short deadline.
``close()`` (or ``stop()``) ends the thread.
"""

import threading
import time
from collections import deque

import ipywidgets as widgets
import numpy as np

from .base import SvgView, fixed_width, html_table
from .colors import device_colors
from .axis import ticks
from .drawing import Drawing, chars_that_fit
from .names import format_bytes, short_device, shorten_name
from .state import read_tasks, variables_of
from .step_trace import read_step
from .trace_state import trace_variables

MAX_PANELS = 4       # panels the view picks by itself
PANEL_W, MAP_H, SPARK_H = 200, 120, 44
MAX_BLOCKS = (16, 24)  # rows, columns of a heat map's blocks
HISTORY = 300          # polls kept per variable

# matplotlib's viridis at 9 stops (interpolated linearly in between).
VIRIDIS = [(68, 1, 84), (72, 40, 120), (62, 74, 137), (49, 104, 142), (38, 130, 142),
           (31, 158, 137), (53, 183, 121), (109, 205, 89), (180, 222, 44), (253, 231, 37)]


def viridis(t):
    """The colour of ``t`` in 0..1."""
    t = min(max(float(t), 0.0), 1.0) * (len(VIRIDIS) - 1)
    i = min(int(t), len(VIRIDIS) - 2)
    f = t - i
    a, b = VIRIDIS[i], VIRIDIS[i + 1]
    return "#%02x%02x%02x" % tuple(int(round(a[k] + (b[k] - a[k]) * f)) for k in range(3))


def _name_of(v):
    """A variable name from a string or a tf.Variable (``w:0`` -> ``w``)."""
    name = getattr(v, "name", v)
    return name.split(":")[0]


def describe(value):
    """``float32[] = 0.5`` or ``float32[4, 3] mean=1``: what the repr shows."""
    a = np.asarray(value)
    if a.size == 1:
        return "%s%s = %.4g" % (a.dtype.name, list(a.shape), float(a.reshape(-1)[0]))
    return "%s%s mean=%.4g" % (a.dtype.name, list(a.shape),
                               float(a.astype(np.float64).mean()) if a.size else 0.0)


def as_matrix(a):
    """An array as 2-D: a vector is one row, more dimensions fold into columns."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a.reshape(a.shape[0], -1)


def blocks(m, max_rows, max_cols):
    """Cut matrix ``m`` into at most max_rows x max_cols blocks:
    ``[(row range, col range, block values)]``."""
    rows = np.array_split(np.arange(m.shape[0]), min(max_rows, m.shape[0]))
    cols = np.array_split(np.arange(m.shape[1]), min(max_cols, m.shape[1]))
    return [((r[0], r[-1] + 1), (c[0], c[-1] + 1), m[r[0]:r[-1] + 1, c[0]:c[-1] + 1])
            for r in rows for c in cols]


def change_rate(points):
    """How fast a history of (seconds, number, poll) changes: the mean
    |step| relative to its scale."""
    values = [p[1] for p in points]
    if len(values) < 2:
        return 0.0
    steps = np.abs(np.diff(values))
    return float(steps.mean() / (np.abs(values).mean() + 1e-12))


class VariableStateView(SvgView):
    """The variables held in each server's containers (see the module docstring)."""

    css_class = "minitf-variable-view"

    def __init__(self, source, variables=None, refresh=1.0, timeout=1.0, width=900):
        self.source = source
        self.from_trace = hasattr(source, "step_stats")
        self.wanted = None if variables is None else {_name_of(v) for v in variables}
        self.refresh_seconds = 0 if self.from_trace else refresh
        self.timeout = timeout
        self.variables = {}       # (task, name) -> summary (with "value" once initialized)
        self.history = {}         # (task, name) -> deque of (seconds, number)
        self.tasks_up = (0, 0)    # (answering, asked)
        self.polls = 0
        self.polled_at = None     # wall-clock time of the last poll
        self.auto_pick = True     # the view picks panels until the learner does
        self._t0 = time.monotonic()
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._setting = False
        self.mode = widgets.ToggleButtons(options=["live", "paused"], value="live",
                                          description="polling",
                                          disabled=not self.refresh_seconds)
        self.panels = widgets.SelectMultiple(description="panels", options=[], rows=6,
                                             layout=widgets.Layout(width="560px"))
        self.panels.add_class("minitf-rows")
        self.default_button = widgets.Button(description="largest & fastest",
                                             tooltip="let the view pick the panels again")
        self.history_of = widgets.Dropdown(description="history", options=["all"],
                                           value="all", layout=widgets.Layout(width="360px"))
        self.status = widgets.HTML()
        self.table = widgets.HTML()
        super().__init__(controls=[self.mode, self.history_of], details=[
            widgets.HBox([self.panels, self.default_button]), self.status, self.table],
            width=width)
        self.panels.observe(self._on_pick, names="value")
        self.history_of.observe(self._on_history, names="value")
        self.default_button.on_click(self._on_default)
        self.poll()  # the first picture is ready when the cell finishes
        self.thread = None
        if self.refresh_seconds:
            self.thread = threading.Thread(target=self._poll_loop, daemon=True,
                                           name="minitf-VariableStateView")
            self.thread.start()

    # -- polling ----------------------------------------------------------------------------------
    def _read(self):
        """``(variables, tasks answering, tasks asked)`` from the source."""
        if self.from_trace:
            found = trace_variables(read_step(self.source))
            return found, len({t for t, _ in found}), len({t for t, _ in found})
        tasks = read_tasks(self.source, values=True, timeout=self.timeout)
        self._down = [t["task"] for t in tasks if not t["up"]]
        return variables_of(tasks), sum(1 for t in tasks if t["up"]), len(tasks)

    def poll(self):
        """Read every variable once and update the picture (also called by the thread)."""
        self._down = []
        found, up, asked = self._read()
        found = {k: v for k, v in found.items() if self.wanted is None or k[1] in self.wanted}
        now = time.monotonic() - self._t0
        with self._lock:
            self.variables = found
            self.tasks_up = (up, asked)
            self.polls += 1
            self.polled_at = time.strftime("%H:%M:%S")
            for key, summary in found.items():
                if "value" in summary:
                    a = np.asarray(summary["value"], dtype=np.float64)
                    number = float(a.reshape(-1)[0]) if a.size == 1 else \
                        float(a.mean()) if a.size else 0.0
                    self.history.setdefault(key, deque(maxlen=HISTORY)).append(
                        (now, number, self.polls))
        self._refresh_picker()
        self.table.value = html_table(
            ["task", "device", "variable", "value"],
            [(short_device(t), short_device(s["device"]), n, self._describe(s))
             for (t, n), s in sorted(found.items())])
        self.redraw()

    def redraw(self):
        """Draw again; the status line says the same counts as the picture."""
        with self._lock:
            polls, at, (up, asked) = self.polls, self.polled_at, self.tasks_up
            n = len(self.variables)
        down = getattr(self, "_down", [])
        if self.from_trace:
            self.status.value = "from a trace: the variables the step used (%d); a trace " \
                "holds no values - give the view the cluster or a session to see them" % n
        else:
            self.status.value = "poll %d at %s: %d of %d tasks answered%s; %d variables, %d " \
                "in panels" % (polls, at, up, asked, " (not answering: %s)" % ", ".join(down)
                               if down else "", n, len(self.picked()))
        super().redraw()

    @staticmethod
    def _describe(s):
        if "value" in s:
            return describe(s["value"])
        if "writes" in s:  # from a trace
            return "%s%s, %s%s" % (s["dtype"], s["shape"], format_bytes(s["bytes"]),
                                   "; written by " + ", ".join(w for w, _, _ in s["writes"])
                                   if s["writes"] else "")
        return "(not initialized)"

    def _poll_loop(self):
        while not self._stop.wait(self.refresh_seconds):
            if self.mode.value != "live":
                continue
            try:
                self.poll()
            except Exception as e:  # noqa: BLE001 - a poll must never kill the thread
                self.status.value = "poll failed: %s: %s" % (type(e).__name__, e)

    def stop(self):
        """Stop polling (the view keeps its last picture)."""
        self._stop.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout=self.timeout * 4 + 5)

    def close(self):
        self.stop()
        super().close()

    # -- which variables get panels ---------------------------------------------------------------
    def default_picks(self):
        """The largest variables and the fastest-changing ones, at most
        MAX_PANELS. An optimizer's slot variables (``w/Adam`` lives in the
        scope of the variable ``w`` it belongs to) come after the model's own."""
        with self._lock:
            keys = sorted(self.variables)
            size = {k: self._size(self.variables[k]) for k in keys}
            rate = {k: change_rate(self.history.get(k, ())) for k in keys}
        names = {k[1] for k in keys}
        slot = {k: any(k[1].startswith(other + "/") for other in names) for k in keys}
        largest = sorted(keys, key=lambda k: (slot[k], -size[k], k))
        fastest = sorted((k for k in keys if rate[k] > 0), key=lambda k: (slot[k], -rate[k], k))
        picks = []
        for k in [x for pair in zip(largest, fastest) for x in pair] + largest:
            if k not in picks:
                picks.append(k)
        return picks[:MAX_PANELS]

    @staticmethod
    def _size(s):
        if "value" in s:
            return int(np.asarray(s["value"]).size)
        shape = s.get("shape") or []
        return int(np.prod([d or 1 for d in shape])) if shape else 1

    def picked(self):
        """The variables that have panels, in the picker's order."""
        return [k for k in self.panels.value if k in self.variables]

    def _refresh_picker(self):
        with self._lock:
            keys = sorted(self.variables)
            options = [(self._option(k), k) for k in keys]
        keep = self.default_picks() if self.auto_pick else \
            [k for k in self.panels.value if k in keys]
        focus = self.history_key()
        if focus is not None and focus in keys and focus not in keep:
            keep = [focus] + keep[:MAX_PANELS - 1]
        labels = ["all"] + [self.history_label(k) for k in keys]
        self._setting = True
        try:
            if list(self.panels.options) != options:
                self.panels.options = options
            self.panels.value = tuple(keep)
            if list(self.history_of.options) != labels:
                value = self.history_of.value if self.history_of.value in labels else "all"
                self.history_of.options = labels
                self.history_of.value = value
        finally:
            self._setting = False

    def _option(self, key):
        s = self.variables[key]
        shape = list(np.shape(s["value"])) if "value" in s else s.get("shape")
        return fixed_width("%-28s %-18s %-10s %s" % (
            shorten_name(key[1], 28), shorten_name(short_device(s["device"]), 18),
            shape, format_bytes(self._bytes(s))))

    @staticmethod
    def _bytes(s):
        return int(np.asarray(s["value"]).nbytes) if "value" in s else int(s.get("bytes", 0))

    def _on_pick(self, change):
        if self._setting:
            return
        self.auto_pick = False
        self.redraw()

    @staticmethod
    def history_label(key):
        """``ps/task:0 hidden1/kernel``: a variable as the "history" picker lists it."""
        return "%s %s" % (short_device(key[0]), key[1])

    def history_key(self):
        """The variable picked in "history" (drawn large under the panels), or None."""
        for key in self.variables:
            if self.history_label(key) == self.history_of.value:
                return key
        return None

    def _on_history(self, change):
        if self._setting:
            return
        self._refresh_picker()  # the variable gets a panel too
        self.redraw()

    def _on_default(self, _=None):
        self.auto_pick = True
        self._refresh_picker()
        self.redraw()

    # -- what the view shows ----------------------------------------------------------------------
    def values(self):
        """``{(task, variable name): numpy value}`` as of the last poll."""
        with self._lock:
            return {k: np.array(s["value"]) for k, s in self.variables.items() if "value" in s}

    def draw(self):
        with self._lock:
            variables = dict(self.variables)
            history = {k: list(v) for k, v in self.history.items()}
            polls, at = self.polls, self.polled_at
        picked = [k for k in self.picked() if k in variables]
        colors = device_colors(s["device"] for s in variables.values())
        per_row = max(1, (self.width - 16) // (PANEL_W + 12))
        rows = max(1, -(-len(picked) // per_row))
        panel_h = 38 + MAP_H + 26 + (SPARK_H + 26 if not self.from_trace else 0)
        focus = self.history_key()
        chart_h = 210 if focus is not None and history.get(focus) else 0
        panels_bottom = 34 + rows * (panel_h + 12)
        d = Drawing(self.width, panels_bottom + chart_h + 16)
        title = "%d variables on %d task%s, %d in panels" % (
            len(variables), len({t for t, _ in variables}),
            "" if len({t for t, _ in variables}) == 1 else "s", len(picked))
        title += " (from a trace: no values)" if self.from_trace else \
            " - poll %d at %s, %d of %d tasks answered" % (polls, at, *self.tasks_up)
        d.text(8, 20, title, size=13, weight="bold", css="title")
        if not picked:
            d.text(8, 44, "no variables found (yet)" if not variables else
                   "pick variables in \"panels\" below", color="#666", size=12)
        for i, key in enumerate(picked):
            x = 8 + (i % per_row) * (PANEL_W + 12)
            y = 34 + (i // per_row) * (panel_h + 12)
            self._draw_panel(d, x, y, panel_h, key, variables[key], history.get(key, []),
                             colors.get(variables[key]["device"], "#333"))
        if chart_h:
            self._draw_history(d, panels_bottom + 6, chart_h - 10, focus, variables[focus],
                               history[focus], colors.get(variables[focus]["device"], "#333"))
        return d

    def _draw_history(self, d, top, h, key, s, points, color):
        """A large chart of one variable's history (the "history" picker)."""
        x0, x1 = 70, self.width - 16
        y0, y1 = top + 26, top + h - 30
        a = np.asarray(s.get("value", 0))
        what = key[1] if a.size == 1 else "mean(%s)" % key[1]
        d.text(8, top + 14, "history of %s on %s: %d poll%s" % (
            what, short_device(key[0]), len(points), "" if len(points) == 1 else "s"),
            size=12, weight="bold", css="history-chart-title")
        values = [p[1] for p in points]
        lo, hi = min(values), max(values)
        if hi == lo:
            lo, hi = lo - 0.5, hi + 0.5
        t_lo, t_hi = points[0][0], max(points[-1][0], points[0][0] + 1e-6)
        d.rect(x0, y0, x1 - x0, y1 - y0, fill="white", stroke="#cccccc")
        for v in ticks(lo, hi, y1 - y0, 30):
            vy = y1 - (v - lo) / (hi - lo) * (y1 - y0)
            d.line(x0, vy, x1, vy, stroke="#eeeeee")
            d.text(x0 - 6, vy + 4, "%.3g" % v, anchor="end", color="#444")
        for v in ticks(t_lo, t_hi, x1 - x0, 70):
            vx = x0 + (v - t_lo) / (t_hi - t_lo) * (x1 - x0)
            d.text(vx, y1 + 16, "%g s" % round(v, 3), anchor="middle", color="#444")
        pts = [(x0 + (t - t_lo) / (t_hi - t_lo) * (x1 - x0),
                y1 - (v - lo) / (hi - lo) * (y1 - y0)) for t, v, _ in points]
        if len(pts) > 1:
            d.path([("M",) + pts[0]] + [("L",) + p for p in pts[1:]], stroke=color,
                   stroke_width=2, css="history-chart-line",
                   title="%s over %d polls: from %.6g to %.6g" % (what, len(points), values[0],
                                                                  values[-1]))
        for (px, py), (t, v, poll) in zip(pts, points):
            d.circle(px, py, 3, fill=color, css="history-chart-point",
                     title="poll %d, %.1f s after the view opened: %s = %.6g" % (
                         poll, t, what, v))

    def _draw_panel(self, d, x, y, h, key, s, points, color):
        task, name = key
        d.rect(x, y, PANEL_W, h, fill="#fafafa", stroke="#dddddd", radius=4,
               title="%s on %s: %s" % (name, s["device"], self._describe(s)),
               css="panel", data={"variable": name, "task": task})
        d.rect(x, y, 6, h, fill=color, radius=2)
        d.text(x + 12, y + 16, shorten_name(name, chars_that_fit(PANEL_W - 16)), mono=True,
               weight="bold", title="%s on %s" % (name, s["device"]), css="panel-title")
        d.text(x + 12, y + 31, shorten_name(short_device(s["device"]),
                                            chars_that_fit(PANEL_W - 16)), color="#555",
               mono=True)
        mx, my, mw = x + 12, y + 38, PANEL_W - 20
        if "value" not in s:
            shape = s.get("shape")
            d.rect(mx, my, mw, MAP_H, fill="#eeeeee", stroke="#cccccc",
                   title="%s: %s%s, %s" % (name, s.get("dtype", ""), shape,
                                           format_bytes(self._bytes(s))), css="no-value")
            d.text(mx + mw / 2, my + MAP_H / 2 - 6, "%s%s" % (s.get("dtype", ""), shape),
                   anchor="middle", mono=True)
            d.text(mx + mw / 2, my + MAP_H / 2 + 12,
                   "value not in a trace" if self.from_trace else "not initialized",
                   anchor="middle", color="#777")
            if s.get("writes"):
                d.text(mx, my + MAP_H + 18, shorten_name("written by " + s["writes"][0][1],
                                                         chars_that_fit(mw)), color="#555",
                       title="\n".join("%s (%s)%s" % (w, t, "" if at is None else
                                                      " at %.3f ms" % (at / 1000.0))
                                       for w, t, at in s["writes"]))
            return
        a = np.asarray(s["value"])
        if a.size == 1:
            v = float(a.reshape(-1)[0])
            d.rect(mx, my, mw, MAP_H, fill="white", stroke="#dddddd",
                   title="%s = %.6g (%s)" % (name, v, a.dtype.name), css="scalar")
            d.text(mx + mw / 2, my + MAP_H / 2 + 8, "%.4g" % v, size=26, weight="bold",
                   anchor="middle", color=color)
            d.text(mx + mw / 2, my + MAP_H - 8, a.dtype.name, anchor="middle", color="#666")
        else:
            m = as_matrix(a)
            lo, hi = float(m.min()), float(m.max())
            parts = blocks(m, *MAX_BLOCKS)
            n_rows = len({p[0] for p in parts})
            n_cols = len({p[1] for p in parts})
            bw, bh = mw / n_cols, min(MAP_H / n_rows, 24.0)
            for (r0, r1), (c0, c1), values in parts:
                row = sorted({p[0] for p in parts}).index((r0, r1))
                col = sorted({p[1] for p in parts}).index((c0, c1))
                mean = float(values.mean())
                d.rect(mx + col * bw, my + row * bh, bw + 0.3, bh + 0.3,
                       fill=viridis((mean - lo) / (hi - lo) if hi > lo else 0.5),
                       title="%s[%d:%d, %d:%d]: mean %.4g (min %.4g, max %.4g)" % (
                           name, r0, r1, c0, c1, mean, values.min(), values.max()),
                       css="cell")
            d.text(mx, my + MAP_H + 16, "%s%s" % (a.dtype.name, list(a.shape)),
                   color="#444", mono=True)
            d.text(mx + mw, my + MAP_H + 16, "%.2g…%.2g" % (lo, hi), color="#444",
                   anchor="end", title="colour scale: dark %.4g, yellow %.4g" % (lo, hi),
                   css="scale")
        if not points:
            return
        sy = y + 38 + MAP_H + 28
        values = [p[1] for p in points]
        lo, hi = min(values), max(values)
        span_t = max(points[-1][0] - points[0][0], 1e-9)
        d.text(mx, sy + 10, "history, %d poll%s" % (len(points), "" if len(points) == 1
                                                     else "s"), color="#444", css="history-title")
        d.text(mx + mw, sy + 10, "%.2g…%.2g" % (lo, hi), color="#444", anchor="end")
        top, height = sy + 16, SPARK_H - 18
        pts = [(mx + (t - points[0][0]) / span_t * mw if len(points) > 1 else mx + mw / 2,
                top + height - ((v - lo) / (hi - lo) * height if hi > lo else height / 2))
               for t, v, _ in points]
        d.rect(mx, top, mw, height, fill="white", stroke="#e0e0e0")
        if len(pts) > 1:
            d.path([("M",) + pts[0]] + [("L",) + p for p in pts[1:]], stroke=color,
                   stroke_width=1.5, css="history-line",
                   title="%s over %d polls: from %.6g to %.6g" % (
                       name if a.size == 1 else "mean(%s)" % name, len(points), values[0],
                       values[-1]))
        for (px, py), (t, v, poll) in list(zip(pts, points))[-60:]:
            d.circle(px, py, 2.2, fill=color, title="poll %d, %.1f s after the view opened: "
                     "%.6g" % (poll, t, v), css="history-point")

    def __repr__(self):
        values = self.values()
        tasks = sorted({t for t, _ in self.variables})
        return "VariableStateView(%d variables on %d task%s: %s)" % (
            len(self.variables), len(tasks), "" if len(tasks) == 1 else "s", ", ".join(
                "%s %s %s" % (t, n, describe(values[(t, n)]) if (t, n) in values
                              else "(no value in a trace)" if self.from_trace
                              else "(not initialized)") for t, n in sorted(self.variables)))
