"""ClusterView: the tasks of a cluster, whether they answer, their devices
and what their containers hold.

::

    cluster = LocalCluster({"ps": 1, "worker": 2}, echo=False)
    ClusterView(cluster)      # or a ClusterSpec / dict / target string / Session
    ClusterView(md)           # or a RunMetadata (minitf's or real TF's): the tasks
                              # and devices that took part in that step

For a cluster started by minitf's launcher, "start" and "stop" buttons start
and stop its server processes; "refresh" asks every task again, and the
title says when it last did.

Memory: a GPU has a real budget (its allocator's limit), so it gets a bar of
what is in use (the allocator's ``bytes_in_use`` where the task reports it,
else the bytes of the variables it holds). A CPU's "memory limit" is a
placeholder (TF reports the same 256 MiB), so a CPU gets no bar, only the
bytes its variables hold. A virtual GPU (a lesson's stand-in for a real
one) is marked as such.
"""

import time

import ipywidgets as widgets

from .base import SvgView, html_table
from .colors import STATUS, device_colors
from .drawing import Drawing, chars_that_fit
from .names import device_kind, format_bytes, short_device, shorten_name
from .state import nbytes, read_tasks
from .step_trace import read_step
from .trace_state import trace_tasks

CARD_W = 282
#: "holds" lines listed per task before "... and N more".
MAX_HELD = 8


def task_summary(task):
    """What one task's card says: devices, bytes held per device, what it holds."""
    devices = task.get("devices") or []
    held, used = [], {}
    for device, containers in (task.get("resources") or {}).items():
        for container, resources in containers.items():
            for name, summary in resources.items():
                used[device] = used.get(device, 0) + nbytes(summary)
                shape = summary.get("shape")
                held.append({"device": device, "container": container, "name": name,
                             "kind": summary.get("kind", "?"), "bytes": nbytes(summary),
                             "what": "%s%s" % (summary.get("dtype", ""),
                                               list(shape) if shape is not None else "")})
    return devices, used, sorted(held, key=lambda h: (h["device"], h["container"], h["name"]))


def memory_in_use(device, used):
    """``(bytes in use, budget)`` for a device with a real budget (a GPU), else
    ``(bytes its variables hold, None)``."""
    held = used.get(device["name"], 0)
    if device.get("device_type") == "GPU" and device.get("memory_limit"):
        in_use = device.get("bytes_in_use")
        return (int(in_use) if in_use is not None else held), int(device["memory_limit"])
    return held, None


class ClusterView(SvgView):
    """The tasks of a cluster (see the module docstring)."""

    css_class = "minitf-cluster-view"

    def __init__(self, cluster, timeout=1.0, width=900):
        self.cluster = cluster
        self.from_trace = hasattr(cluster, "step_stats")
        self.timeout = timeout
        self.tasks = []
        self.refreshes = 0
        self.refreshed_at = None
        launched = hasattr(cluster, "start") and hasattr(cluster, "processes")
        self.start_button = widgets.Button(description="start", icon="play",
                                           disabled=not launched)
        self.stop_button = widgets.Button(description="stop", icon="stop",
                                          disabled=not launched)
        self.refresh_button = widgets.Button(description="refresh", icon="refresh",
                                             disabled=self.from_trace)
        self.status = widgets.HTML()
        self.table = widgets.HTML()
        super().__init__(controls=[self.refresh_button, self.start_button, self.stop_button,
                                   self.status], details=[self.table], width=width)
        self.refresh_button.on_click(lambda _: self.refresh())
        self.start_button.on_click(lambda _: self.start())
        self.stop_button.on_click(lambda _: self.stop())
        self.refresh()

    # -- actions ----------------------------------------------------------------------------------
    def refresh(self):
        """Ask every task again (short deadlines) and redraw."""
        if self.from_trace:
            self.tasks = trace_tasks(read_step(self.cluster))
        else:
            self.tasks = read_tasks(self.cluster, values=False, timeout=self.timeout)
        self.refreshes += 1
        self.refreshed_at = time.strftime("%H:%M:%S")
        self.status.value = "<span class='minitf-refreshed'>%s at %s (refresh %d)</span>" % (
            "read from a trace" if self.from_trace else "refreshed", self.refreshed_at,
            self.refreshes)
        self.table.value = html_table(
            ["task", "address", "answers", "devices", "memory in use", "holds"],
            [self._row(t) for t in self.tasks])
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
                ", ".join(device_kind(d["name"]) + (" (virtual)" if d.get("virtual") else "")
                          for d in devices) or "-",
                format_bytes(sum(used.values())),
                ", ".join("%s (%s)" % (h["name"], h["kind"]) for h in held) or "-")

    # -- the picture -------------------------------------------------------------------------------
    def _card_height(self, task):
        devices, _, held = task_summary(task)
        if not task["up"]:
            return 70
        lines = min(len(held), MAX_HELD) + (1 if len(held) > MAX_HELD else 0)
        return 56 + 40 * len(devices) + 20 + 16 * lines + 10

    def draw(self):
        tasks = self.tasks
        colors = device_colors(d["name"] for t in tasks for d in t.get("devices") or [])
        per_row = max(1, (self.width - 8) // (CARD_W + 10))
        rows = [tasks[i:i + per_row] for i in range(0, len(tasks), per_row)] or [[]]
        heights = [max([self._card_height(t) for t in row] + [70]) for row in rows]
        d = Drawing(self.width, 36 + sum(h + 10 for h in heights) + 4)
        answering = sum(1 for t in tasks if t["up"])
        d.text(8, 20, "Cluster: %d task%s, %d %s · %s at %s (refresh %d)" % (
            len(tasks), "" if len(tasks) == 1 else "s", answering,
            "in the step" if self.from_trace else "answering",
            "from a trace" if self.from_trace else "refreshed", self.refreshed_at,
            self.refreshes), size=13, weight="bold", css="title")
        y = 32
        for row, h in zip(rows, heights):
            for i, task in enumerate(row):
                self._draw_card(d, 8 + i * (CARD_W + 10), y, h, task, colors)
            y += h + 10
        return d

    def _draw_card(self, d, x, y, h, task, colors):
        up = task["up"]
        devices, used, held = task_summary(task)
        width_chars = chars_that_fit(CARD_W - 24)
        d.rect(x, y, CARD_W, h, fill="#f7f7f7", stroke=STATUS["up" if up else "down"],
               stroke_width=2, radius=6, dash=None if up else (6, 3), css="task-card",
               data={"task": task["task"], "up": "yes" if up else "no"},
               title="%s at %s: %s" % (task["task"], task["address"],
                                       "answers" if up else task.get("error", "does not answer")))
        d.text(x + 10, y + 20, shorten_name(short_device(task["task"]), width_chars - 6),
               size=13, weight="bold", mono=True)
        badge = "in step" if self.from_trace else "up" if up else "down"
        d.rect(x + CARD_W - 64, y + 7, 56, 18, fill=STATUS["up" if up else "down"], radius=9)
        d.text(x + CARD_W - 36, y + 20, badge, anchor="middle", color="white", weight="bold")
        d.text(x + 10, y + 38, shorten_name(task["address"], width_chars), color="#555",
               mono=True)
        if not up:
            d.text(x + 10, y + 58, "does not answer", color=STATUS["down"])
            return
        yy = y + 56
        for dev in devices:
            name = dev["name"]
            color = colors.get(name, "#888")
            d.rect(x + 10, yy, 8, 32, fill=color, radius=2)
            label = device_kind(name) + ("  (virtual)" if dev.get("virtual") else "")
            d.text(x + 24, yy + 12, label, mono=True, title=name + "\n" +
                   dev.get("description", ""), css="device", data={"device": name})
            mem, budget = memory_in_use(dev, used)
            if budget:
                bx, bw = x + 24, CARD_W - 36
                fraction = min(1.0, mem / float(budget))
                d.rect(bx, yy + 18, bw, 10, fill="white", stroke="#999",
                       title="%s of %s in use (%.1f%%)" % (format_bytes(mem), format_bytes(budget),
                                                           100 * fraction), css="memory-bar")
                d.rect(bx, yy + 18, max(1.0, bw * fraction), 10, fill=color,
                       css="memory-used")
                d.text(x + CARD_W - 12, yy + 12, "%s of %s" % (format_bytes(mem),
                                                               format_bytes(budget)),
                       anchor="end", color="#444")
            else:
                text = "variables hold %s" % format_bytes(mem)
                if dev.get("peak_bytes"):
                    text += ", step peak %s" % format_bytes(dev["peak_bytes"])
                d.text(x + 24, yy + 27, text, color="#444",
                       title="a CPU has no memory budget of its own: this is what the "
                             "task's containers hold on it", css="memory-text")
            yy += 40
        d.text(x + 10, yy + 8, "holds:" if held else "holds nothing yet", color="#333")
        # Biggest first: the weights, not the optimizer's scalars, make the list.
        held = sorted(held, key=lambda h: (-h["bytes"], h["name"]))
        for hld in held[:MAX_HELD]:
            yy += 16
            what = "  " + hld["what"]
            name = shorten_name(hld["name"], max(8, width_chars - 2 - len(what)))
            d.text(x + 16, yy + 8, (name + what)[:width_chars], mono=True, color="#222",
                   title="%s (%s %s) on %s, container %r" % (
                       hld["name"], hld["kind"], hld["what"], hld["device"], hld["container"]),
                   css="held", data={"name": hld["name"]})
        if len(held) > MAX_HELD:
            yy += 16
            d.text(x + 16, yy + 8, "... and %d more (see the table)" % (len(held) - MAX_HELD),
                   color="#666", css="held-more")

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
