"""PlacementView: the graph as a layered DAG, coloured by device, boxed by task.

::

    md = tf.RunMetadata()
    sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=md)
    PlacementView(graph, run_metadata=md)   # or PlacementView(md), or (graph, session=sess)

What the picture shows:

* each op is a dot in the colour of the device it ran on, one column per
  layer (an op sits one column right of its latest input);
* each task is a grey box; ops on that task sit inside it;
* an edge that crosses boxes is a tensor a ``_Send``/``_Recv`` pair carried
  over the network (red, dashed); one between two devices of the same task is
  a device copy (orange, dashed);
* a red ring marks an op that soft placement moved off the device it asked for;
* big graphs are collapsed by name scope (``layer1/...`` becomes one dot per
  device, labelled ``layer1 ×12``), so a few hundred ops stay legible.
"""

import html

import ipywidgets as widgets
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch

from .base import FigureView, legend_html
from .names import device_colors, device_sort_key, short_device, task_of
from .placement_model import PlacementModel

MAX_NODES = 60  # more than this and "auto" collapses by name scope


class Node:
    """One dot in the picture: an op, or all ops of a scope on one device."""

    def __init__(self, key, label, device, members, layer):
        self.key, self.label, self.device = key, label, device
        self.members, self.layer = members, layer
        self.x = self.y = 0.0


def group_ops(model, depth):
    """Dots for ``model`` with ops grouped by the first ``depth`` parts of
    their name (``depth=0``: one dot per op). Returns ``{op name: Node}``."""
    groups, key_of = {}, {}
    for name, op in model.ops.items():
        scope = name if depth == 0 else "/".join(name.split("/")[:depth])
        groups.setdefault((scope, op.device), []).append(name)
        key_of[name] = (scope, op.device)
    layers = model.generations(key_of)
    out = {}
    for (scope, device), members in groups.items():
        label = scope if len(members) == 1 and members[0] == scope else \
            "%s ×%d" % (scope, len(members)) if len(members) > 1 else members[0]
        node = Node((scope, device), label, device, members,
                    min(layers[m] for m in members))
        for m in members:
            out[m] = node
    return out


def auto_depth(model, limit=MAX_NODES):
    """0 (every op) if the graph is small, else the shallowest name-scope
    depth that leaves at most ``limit`` dots."""
    if len(model.ops) <= limit:
        return 0
    for depth in range(1, 8):
        if len({n.key for n in group_ops(model, depth).values()}) <= limit:
            return depth
    return 1


def layout(nodes, tasks):
    """Place dots: x = layer (ranked), y = a slot inside the task's band.
    Returns ``{task: (top y, bottom y)}`` for the task boxes."""
    unique = list({id(n): n for n in nodes}.values())
    ranks = {layer: i for i, layer in enumerate(sorted({n.layer for n in unique}))}
    bands, top = {}, 0.0
    for task in tasks:
        mine = [n for n in unique if task_of(n.device) == task]
        columns = {}
        for n in sorted(mine, key=lambda n: (device_sort_key(n.device), n.label)):
            columns.setdefault(ranks[n.layer], []).append(n)
        height = max((len(c) for c in columns.values()), default=1)
        for x, column in columns.items():
            for slot, n in enumerate(column):
                n.x, n.y = float(x), top - slot - (height - len(column)) / 2.0
        bands[task] = (top + 0.55, top - height + 1 - 0.55)
        top -= height + 0.6
    return bands


def _short(label, width=18):
    return label if len(label) <= width else "…" + label[-(width - 1):]


class PlacementView(FigureView):
    """Where each op of a graph ran (see the module docstring)."""

    css_class = "minitf-placement-view"

    def __init__(self, graph_or_run_metadata, run_metadata=None, session=None,
                 group_by="auto"):
        self.model = PlacementModel.build(graph_or_run_metadata, run_metadata, session)
        self.colors = device_colors(self.model.devices())
        self.op_selector = widgets.Dropdown(
            description="op", options=["(none)"] + sorted(self.model.ops), value="(none)")
        self.group_selector = widgets.Dropdown(
            description="group by", value="auto",
            options=[("auto", "auto"), ("every op", 0), ("scope depth 1", 1),
                     ("scope depth 2", 2), ("scope depth 3", 3)])
        self.op_details = widgets.HTML()
        super().__init__(controls=[self.op_selector, self.group_selector],
                         details=[self.op_details])
        self.legend.value = legend_html(
            self.colors, self.model.ops_per_device(),
            extra=[('<span style="color:#d62728">- - ▶</span>', "Send/Recv between tasks"),
                   ('<span style="color:#ff7f0e">- - ▶</span>', "copy between devices"),
                   ('<span style="color:#d62728">◯</span>', "moved by soft placement")])
        self.group_selector.value = group_by
        self.op_selector.observe(self._on_change, names="value")
        self.group_selector.observe(self._on_change, names="value")
        self._on_change()

    # -- what the view shows ---------------------------------------------------------------------
    @property
    def depth(self):
        """The name-scope depth in use (0 = one dot per op)."""
        v = self.group_selector.value
        return auto_depth(self.model) if v == "auto" else int(v)

    def nodes(self):
        """``{op name: Node}`` as currently drawn."""
        return group_ops(self.model, self.depth)

    def nodes_per_device(self):
        """``{device: number of ops drawn in its colour}``."""
        counts = {d: 0 for d in self.model.devices()}
        for node in {id(n): n for n in self.nodes().values()}.values():
            counts[node.device] += len(node.members)
        return counts

    def crossing_edges(self):
        """The Send/Recv pairs (tensor, from, to) drawn as edges across boxes."""
        return [(p.tensor, p.src_device, p.dst_device) for p in self.model.send_recv]

    def _on_change(self, change=None):
        self.op_details.value = self._details_html(self.op_selector.value)
        self.redraw()

    def _details_html(self, name):
        op = self.model.ops.get(name)
        if op is None:
            return "<i>Pick an op to see where it asked to run and where it ran.</i>"
        sends = [p for p in self.model.send_recv if p.tensor.split(":")[0] == name]
        rows = [("op", "%s (%s)" % (op.name, op.type)),
                ("requested device", op.requested or "(none: the placer chose)"),
                ("assigned device", op.assigned or "(not placed yet)"),
                ("soft placement", "moved off its request" if op.soft_placed else "-"),
                ("inputs", ", ".join(op.inputs) or "-"),
                ("control inputs", ", ".join(op.control_inputs) or "-"),
                ("outputs", ", ".join("%s %s%s" % (t, d, "" if s is None else list(s))
                                      for t, d, s in op.outputs) or "-"),
                ("sent to", ", ".join(sorted({short_device(p.dst_device) for p in sends}))
                 or "-")]
        return "<table class='minitf-op-details'>%s</table>" % "".join(
            "<tr><th style='text-align:left;padding-right:1em'>%s</th><td><code>%s</code>"
            "</td></tr>" % (k, html.escape(str(v))) for k, v in rows)

    # -- the picture --------------------------------------------------------------------------
    def draw(self, fig):
        by_op = self.nodes()
        nodes = list({id(n): n for n in by_op.values()}.values())
        tasks = self.model.tasks()
        bands = layout(nodes, tasks)
        ncols = max((int(n.x) for n in nodes), default=0) + 1
        nrows = sum(top - bottom for top, bottom in bands.values())
        fig.set_size_inches(min(24, max(6.5, 1.5 + 1.35 * ncols)),
                            min(22, max(3.0, 1.2 + 0.62 * nrows)))
        ax = fig.add_subplot(1, 1, 1)
        ax.set_axis_off()

        for task, (top, bottom) in bands.items():
            ax.add_patch(FancyBboxPatch((-0.6, bottom), ncols + 0.2, top - bottom,
                                        boxstyle="round,pad=0.02,rounding_size=0.15",
                                        facecolor="#f4f4f4", edgecolor="#888", lw=1.2,
                                        zorder=0))
            ax.text(-0.55, top - 0.08, short_device(task), fontsize=9, fontweight="bold",
                    va="top", ha="left", color="#444", zorder=1)

        # Edges first (under the dots); one line per pair of dots.
        drawn = {}
        for src, dst, tensor in self.model.edges:
            a, b = by_op[src], by_op[dst]
            if a is b:
                continue
            kind = "data" if tensor is not None else "control"
            if a.device != b.device:
                kind = "send" if task_of(a.device) != task_of(b.device) else "copy"
            old = drawn.get((id(a), id(b)))
            if old is None or _RANK[kind] > _RANK[old[2]]:
                drawn[(id(a), id(b))] = (a, b, kind)
        crossing = [(a, b) for a, b, kind in drawn.values() if kind in ("send", "copy")]
        for a, b, kind in drawn.values():
            style = _EDGE[kind]
            # Bend edges that cross devices, or that skip a column on one row
            # (a straight one would run behind the dots in between).
            bend = 0.12 if kind in ("send", "copy") else \
                0.25 if a.y == b.y and abs(b.x - a.x) > 1 else 0
            ax.annotate("", xy=(b.x, b.y), xytext=(a.x, a.y), zorder=2 if bend else 1,
                        arrowprops=dict(arrowstyle="-|>", color=style["color"], lw=style["lw"],
                                        linestyle=style["ls"], shrinkA=7, shrinkB=7,
                                        mutation_scale=9,
                                        connectionstyle="arc3,rad=%s" % bend))
        if len(crossing) <= 12 and not self.depth:  # name what each pair carries
            for a, b in crossing:
                tensors = sorted({t for s, d, t in self.model.edges if t is not None
                                  and by_op[s] is a and by_op[d] is b})
                ax.text(a.x + 0.35 * (b.x - a.x), a.y + 0.35 * (b.y - a.y),
                        _short(", ".join(tensors), 24), fontsize=7, color="#b71c1c",
                        ha="center", va="center", zorder=6,
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8))

        selected = by_op.get(self.op_selector.value)
        for n in nodes:
            soft = any(self.model.ops[m].soft_placed for m in n.members)
            size = 110 if len(n.members) == 1 else 110 + 25 * min(len(n.members), 12)
            if n is selected:
                ax.scatter([n.x], [n.y], s=size * 3.2, color="#ffdd33", zorder=3, lw=0)
            ax.scatter([n.x], [n.y], s=size, color=self.colors[n.device], zorder=4,
                       edgecolors="#d62728" if soft else "#222",
                       linewidths=2.6 if soft else 0.8)
            ax.text(n.x, n.y - 0.2, _short(n.label), fontsize=7.5, ha="center", va="top",
                    zorder=5, bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none",
                                        alpha=0.7))

        ax.set_xlim(-0.7, ncols - 0.3)
        lows = [b for _, b in bands.values()] or [-1]
        highs = [t for t, _ in bands.values()] or [1]
        ax.set_ylim(min(lows) - 0.1, max(highs) + 0.1)
        handles = [Patch(facecolor=c, edgecolor="#222", label="%s (%d ops)" % (
            short_device(d), self.model.ops_per_device()[d])) for d, c in self.colors.items()]
        network = sum(1 for p in self.model.send_recv if p.crosses_tasks)
        copies = len(self.model.send_recv) - network
        if network or not copies:
            handles.append(Line2D([], [], color=_EDGE["send"]["color"], ls="--", lw=1.8,
                                  label="Send/Recv between tasks (%d)" % network))
        if copies:
            handles.append(Line2D([], [], color=_EDGE["copy"]["color"], ls="--", lw=1.6,
                                  label="Send/Recv between devices of a task (%d)" % copies))
        handles += [Line2D([], [], marker="o", ls="", markerfacecolor="white",
                           markeredgecolor="#d62728", markeredgewidth=2.2,
                           label="moved by soft placement (%d)" % len(self.model.soft_placed()))]
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  ncol=min(3, len(handles)), fontsize=8, frameon=False)
        title = "Placement: %d ops on %d devices" % (len(self.model.ops),
                                                      len(self.model.devices()))
        if self.depth:
            title += " (grouped by name scope, depth %d)" % self.depth
        if not self.model.placed:
            title += " - requested devices, not placed yet"
        ax.set_title(title, fontsize=10, loc="left")

    def __repr__(self):
        counts = self.model.ops_per_device()
        return "PlacementView(%d ops on %d devices: %s; %d Send/Recv pairs; %d moved by " \
               "soft placement)" % (len(self.model.ops), len(counts), ", ".join(
                   "%s %d" % (d, n) for d, n in counts.items()), len(self.model.send_recv),
                   len(self.model.soft_placed()))


_RANK = {"control": 0, "data": 1, "copy": 2, "send": 3}
_EDGE = {"data": dict(color="#777", lw=0.9, ls="-"),
         "control": dict(color="#aaa", lw=0.8, ls=":"),
         "copy": dict(color="#ff7f0e", lw=1.6, ls="--"),
         "send": dict(color="#d62728", lw=1.8, ls="--")}
