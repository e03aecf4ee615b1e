"""VariableStateView: the variables each server holds, live.

::

    view = VariableStateView(cluster)            # a LocalCluster, ClusterSpec, target,
    view                                          # Server or Session; refresh=1.0 s
    ...  train, or let several sessions update the same variables ...
    view.close()                                  # stops the polling thread

Each variable gets a panel: a scalar as a number, an array as a small heatmap
(bigger arrays are reshaped to two dimensions). Below, a history plot shows
every scalar (and the mean of every array) over time.

The polling runs in a background (daemon) thread, so the kernel stays free
to run your training cells; each poll asks every task with a short deadline.
``close()`` (or ``stop()``) ends the thread.
"""

import threading
import time
from collections import deque

import ipywidgets as widgets
import numpy as np

from .base import FigureView, html_table
from .names import device_colors, short_device
from .state import read_tasks, variables_of

MAX_PANELS = 6
HISTORY = 300  # polls kept per variable


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


class VariableStateView(FigureView):
    """The variables held in each server's containers (see the module docstring)."""

    css_class = "minitf-variable-view"

    def __init__(self, source, variables=None, refresh=1.0, timeout=1.0):
        self.source = source
        self.wanted = None if variables is None else {_name_of(v) for v in variables}
        self.refresh_seconds = refresh
        self.timeout = timeout
        self.variables = {}       # (task, name) -> summary with "value"
        self.history = {}         # (task, name) -> deque of (seconds, number)
        self.tasks_up = (0, 0)    # (answering, asked)
        self.polls = 0
        self._t0 = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.mode = widgets.ToggleButtons(options=["live", "paused"], value="live",
                                          description="polling")
        self.history_of = widgets.Dropdown(description="history", options=["all"],
                                           value="all")
        self.status = widgets.HTML()
        self.table = widgets.HTML()
        super().__init__(controls=[self.mode, self.history_of],
                         details=[self.status, self.table])
        self.history_of.observe(lambda change: self.redraw(), names="value")
        self.poll()  # the first picture is ready when the cell finishes
        self.thread = None
        if refresh:
            self.thread = threading.Thread(target=self._poll_loop, daemon=True,
                                           name="minitf-VariableStateView")
            self.thread.start()

    # -- polling ----------------------------------------------------------------------------------
    def poll(self):
        """Read every variable once and update the picture (also called by the thread)."""
        tasks = read_tasks(self.source, values=True, timeout=self.timeout)
        found = {k: v for k, v in variables_of(tasks).items()
                 if self.wanted is None or k[1] in self.wanted}
        now = time.monotonic() - self._t0
        with self._lock:
            changed = set(found) != set(self.variables) or any(
                not np.array_equal(found[k].get("value"), self.variables[k].get("value"))
                for k in found)
            self.variables = found
            self.tasks_up = (sum(1 for t in tasks if t["up"]), len(tasks))
            self.polls += 1
            for key, summary in found.items():
                if "value" in summary:
                    a = np.asarray(summary["value"], dtype=np.float64)
                    number = float(a.reshape(-1)[0]) if a.size == 1 else \
                        float(a.mean()) if a.size else 0.0
                    self.history.setdefault(key, deque(maxlen=HISTORY)).append((now, number))
        labels = ["all"] + ["%s %s" % (short_device(t), n) for t, n in sorted(found)]
        if list(self.history_of.options) != labels:
            keep = self.history_of.value if self.history_of.value in labels else "all"
            self.history_of.options = labels
            self.history_of.value = keep
        down = [t["task"] for t in tasks if not t["up"]]
        self.status.value = "poll %d: %d of %d tasks answered%s" % (
            self.polls, self.tasks_up[0], self.tasks_up[1],
            " (not answering: %s)" % ", ".join(down) if down else "")
        self.table.value = html_table(
            ["task", "device", "container", "variable", "value"],
            [(short_device(t), short_device(s["device"]), s["container"] or "''", n,
              describe(s["value"]) if "value" in s else "(not initialized)")
             for (t, n), s in sorted(found.items())])
        if changed or self.polls == 1:  # an unchanged picture is not sent again
            self.redraw()

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

    # -- what the view shows ----------------------------------------------------------------------
    def values(self):
        """``{(task, variable name): numpy value}`` as of the last poll."""
        with self._lock:
            return {k: np.array(s["value"]) for k, s in self.variables.items() if "value" in s}

    def draw(self, fig):
        with self._lock:
            variables = dict(self.variables)
            history = {k: list(v) for k, v in self.history.items()}
        keys = sorted(variables)
        colors = device_colors(s["device"] for s in variables.values())
        panels = keys[:MAX_PANELS]
        ncols = max(1, len(panels))
        fig.set_size_inches(max(8, 2.3 * ncols), 5.4)
        grid = fig.add_gridspec(2, ncols, height_ratios=[1.2, 1], hspace=0.6, wspace=0.45)
        for i, key in enumerate(panels):
            ax = fig.add_subplot(grid[0, i])
            self._draw_value(ax, key, variables[key], colors)
        if not panels:
            ax = fig.add_subplot(grid[0, :])
            ax.set_axis_off()
            ax.text(0.5, 0.5, "no variables found (yet)", ha="center", va="center",
                    fontsize=11, color="#666")
        hx = fig.add_subplot(grid[1, :])
        wanted = self.history_of.value
        for (task, name) in keys:
            label = "%s %s" % (short_device(task), name)
            points = history.get((task, name))
            if not points or wanted not in ("all", label):
                continue
            a = np.asarray(variables[(task, name)].get("value", 0))
            hx.plot([p[0] for p in points], [p[1] for p in points], marker=".", ms=4,
                    label=name if a.size == 1 else "mean(%s)" % name)
        latest = max((p[0] for points in history.values() for p in points), default=0.0)
        hx.set_xlim(0, max(latest * 1.05, 10 * (self.refresh_seconds or 1)))
        hx.set_xlabel("seconds since the view opened", fontsize=8.5)
        hx.set_title("history (%d polls)" % self.polls, fontsize=9, loc="left")
        hx.tick_params(labelsize=8)
        if hx.get_legend_handles_labels()[0]:
            hx.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        for side in ("top", "right"):
            hx.spines[side].set_visible(False)
        extra = "" if len(keys) <= MAX_PANELS else " (first %d of %d shown)" % (
            MAX_PANELS, len(keys))
        fig.suptitle("%d variables; %d of %d tasks answering%s" % (
            len(keys), self.tasks_up[0], self.tasks_up[1], extra), fontsize=10, x=0.01,
            ha="left")

    @staticmethod
    def _draw_value(ax, key, summary, colors):
        task, name = key
        color = colors.get(summary["device"], "#333")
        title = "%s\n%s" % (name, short_device(summary["device"]))
        ax.set_title(title, fontsize=8.5, color=color, fontweight="bold")
        if "value" not in summary:
            ax.set_axis_off()
            ax.text(0.5, 0.5, "not initialized", ha="center", va="center", fontsize=9,
                    color="#999", transform=ax.transAxes)
            return
        a = np.asarray(summary["value"])
        if a.size == 1:
            ax.set_axis_off()
            ax.text(0.5, 0.5, "%.4g" % float(a.reshape(-1)[0]), ha="center", va="center",
                    fontsize=20, fontweight="bold", color=color, transform=ax.transAxes)
            ax.text(0.5, 0.12, a.dtype.name, ha="center", fontsize=8, color="#666",
                    transform=ax.transAxes)
            return
        m = a.astype(np.float64).reshape(a.shape[0], -1) if a.ndim > 1 else \
            a.astype(np.float64).reshape(1, -1)
        image = ax.imshow(m, cmap="viridis", aspect="auto", interpolation="nearest")
        ax.figure.colorbar(image, ax=ax, fraction=0.08, pad=0.04).ax.tick_params(labelsize=7)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("%s%s" % (a.dtype.name, list(a.shape)), fontsize=7.5)

    def __repr__(self):
        values = self.values()
        tasks = sorted({t for t, _ in self.variables})
        return "VariableStateView(%d variables on %d task%s: %s)" % (
            len(self.variables), len(tasks), "" if len(tasks) == 1 else "s", ", ".join(
                "%s %s %s" % (t, n, describe(values[(t, n)]) if (t, n) in values
                              else "(not initialized)") for t, n in sorted(self.variables)))
