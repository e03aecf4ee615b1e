"""ClusterView: the tasks of a cluster, whether they answer, their devices
and what their containers hold.

::

    cluster = LocalCluster({"ps": 1, "worker": 2}, echo=False)
    ClusterView(cluster)      # or a ClusterSpec / dict / target string

For a cluster started by minitf's launcher, "start" and "stop" buttons start
and stop its server processes; "refresh" asks every task again. "Memory in
use" is what the device's allocator reports (``bytes_in_use``) where it does,
else what the task's containers hold (variables' bytes), next to the
device's memory limit. A virtual GPU (a lesson's stand-in for a real one) is
marked as such.
"""

import ipywidgets as widgets
from matplotlib.patches import FancyBboxPatch, Rectangle

from .base import FigureView, html_table
from .names import device_colors, ellipsize, format_bytes, short_device
from .state import nbytes, read_tasks

UP, DOWN = "#2ca02c", "#d62728"
#: Characters of one "holds:" line that fit a task's box (7.5 pt monospace).
HELD_WIDTH = 44


def task_summary(task):
    """What one task's row says: devices, bytes held per device, what it holds."""
    devices = task.get("devices") or []
    held, used = [], {}
    for device, containers in (task.get("resources") or {}).items():
        for container, resources in containers.items():
            for name, summary in resources.items():
                used[device] = used.get(device, 0) + nbytes(summary)
                shape = summary.get("shape")
                held.append({"device": device, "container": container, "name": name,
                             "kind": summary.get("kind", "?"),
                             "what": "%s %s%s" % (summary.get("kind", "?"),
                                                  summary.get("dtype", ""),
                                                  list(shape) if shape is not None else "")})
    for d in devices:  # a device that reports its allocator's bytes knows best
        if d.get("bytes_in_use") is not None:
            used[d["name"]] = int(d["bytes_in_use"])
    return devices, used, sorted(held, key=lambda h: (h["device"], h["container"], h["name"]))


class ClusterView(FigureView):
    """The tasks of a cluster (see the module docstring)."""

    css_class = "minitf-cluster-view"

    def __init__(self, cluster, timeout=1.0):
        self.cluster = cluster
        self.timeout = timeout
        self.tasks = []
        launched = hasattr(cluster, "start") and hasattr(cluster, "processes")
        self.start_button = widgets.Button(description="start", icon="play",
                                           disabled=not launched)
        self.stop_button = widgets.Button(description="stop", icon="stop",
                                          disabled=not launched)
        self.refresh_button = widgets.Button(description="refresh", icon="refresh")
        self.table = widgets.HTML()
        super().__init__(controls=[self.refresh_button, self.start_button, self.stop_button],
                         details=[self.table])
        self.refresh_button.on_click(lambda _: self.refresh())
        self.start_button.on_click(lambda _: self.start())
        self.stop_button.on_click(lambda _: self.stop())
        self.refresh()

    # -- actions ----------------------------------------------------------------------------------
    def refresh(self):
        """Ask every task again (short deadlines) and redraw."""
        self.tasks = read_tasks(self.cluster, values=False, timeout=self.timeout)
        self.table.value = html_table(
            ["task", "address", "answers", "devices", "memory in use", "holds"],
            [self._row(t) for t in self.tasks])
        self.legend.value = ('<span style="color:%s">●</span> answers &nbsp; '
                             '<span style="color:%s">●</span> does not answer' % (UP, DOWN))
        self.redraw()

    def start(self):
        """Start the launcher's cluster (every task that is not running)."""
        self.cluster.start()
        self.refresh()

    def stop(self):
        """Stop the launcher's cluster."""
        self.cluster.stop()
        self.refresh()

    def _row(self, task):
        devices, used, held = task_summary(task)
        return (task["task"], task["address"], "yes" if task["up"] else "no",
                ", ".join(short_device(d["name"]).split("/")[-1] +
                          (" (virtual)" if d.get("virtual") else "") for d in devices) or "-",
                format_bytes(sum(used.values())),
                ", ".join("%s (%s)" % (h["name"], h["kind"]) for h in held) or "-")

    # -- the picture -------------------------------------------------------------------------------
    def draw(self, fig):
        tasks = self.tasks
        colors = device_colors(d["name"] for t in tasks for d in t.get("devices") or [])
        summaries = [task_summary(t) for t in tasks]
        lines = max([3 + 2 * len(s[0]) + min(len(s[2]), 8) for s in summaries] + [6])
        fig.set_size_inches(max(6, 3.3 * len(tasks)), 0.9 + 0.27 * lines)
        ax = fig.add_axes([0, 0, 1, 0.9])
        ax.set_axis_off()
        ax.set_xlim(0, max(1, len(tasks)))
        ax.set_ylim(-lines, 0.3)
        for i, (task, (devices, used, held)) in enumerate(zip(tasks, summaries)):
            up = task["up"]
            ax.add_patch(FancyBboxPatch((i + 0.04, -lines + 0.2), 0.92, lines - 0.1,
                                        boxstyle="round,pad=0.0,rounding_size=0.05",
                                        facecolor="#f6f6f6", edgecolor=UP if up else DOWN,
                                        lw=2))
            ax.text(i + 0.08, -0.15, short_device(task["task"]), fontsize=10,
                    fontweight="bold", va="top")
            ax.text(i + 0.92, -0.15, "up" if up else "down", fontsize=9, va="top", ha="right",
                    color="white", fontweight="bold",
                    bbox=dict(boxstyle="round,pad=0.2", fc=UP if up else DOWN, ec="none"))
            ax.text(i + 0.08, -0.95, task["address"], fontsize=8, color="#555", va="top")
            y = -2.0
            if not up:
                ax.text(i + 0.08, y, "does not answer", fontsize=8.5, color=DOWN, va="top")
                continue
            for d in devices:
                name = d["name"]
                ax.add_patch(Rectangle((i + 0.08, y - 0.55), 0.06, 0.5,
                                       color=colors.get(name, "#888")))
                ax.text(i + 0.17, y, short_device(name).split("/")[-1] +
                        ("  (virtual)" if d.get("virtual") else ""), fontsize=8.5, va="top")
                limit = d.get("memory_limit") or 0
                mem = used.get(name, 0)
                ax.add_patch(Rectangle((i + 0.17, y - 0.95), 0.7, 0.22, facecolor="white",
                                       edgecolor="#999", lw=0.6))
                if limit:
                    ax.add_patch(Rectangle((i + 0.17, y - 0.95), 0.7 * min(1, mem / limit)
                                           + 0.004, 0.22, color=colors.get(name, "#888")))
                ax.text(i + 0.88, y, "%s of %s" % (format_bytes(mem), format_bytes(limit)),
                        fontsize=7.5, va="top", ha="right", color="#444")
                y -= 2.0
            ax.text(i + 0.08, y, "holds:" if held else "holds nothing yet", fontsize=8.5,
                    va="top", color="#333")
            for h in held[:8]:
                y -= 1.0
                ax.text(i + 0.12, y, ellipsize("%s  %s" % (h["name"], h["what"]), HELD_WIDTH),
                        fontsize=7.5,
                        va="top", family="monospace", color="#222")
            if len(held) > 8:
                ax.text(i + 0.12, y - 1.0, "... and %d more" % (len(held) - 8), fontsize=7.5,
                        va="top", color="#666")
        fig.suptitle("Cluster: %d tasks, %d answering" % (
            len(tasks), sum(1 for t in tasks if t["up"])), fontsize=10, x=0.01, ha="left")

    def __repr__(self):
        parts = []
        for task in self.tasks:
            devices, used, held = task_summary(task)
            parts.append("%s %s [%s] holds [%s]" % (
                task["task"], "up" if task["up"] else "down",
                ", ".join(short_device(d["name"]).split("/")[-1] for d in devices),
                ", ".join(h["name"] for h in held)))
        return "ClusterView(%d tasks, %d answering: %s)" % (
            len(self.tasks), sum(1 for t in self.tasks if t["up"]), "; ".join(parts))
