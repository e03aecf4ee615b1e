"""PlacementView: the graph as TensorBoard draws it, coloured by device, in
one box per task with one row per device.

::

    md = tf.RunMetadata()
    sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                      output_partition_graphs=True), run_metadata=md)
    PlacementView(graph, run_metadata=md)  # or PlacementView(md), or (graph, session=sess)

What the picture shows:

* each op is a pill in the colour of the device it ran on, one row per
  layer (an op sits below the ops that feed it); a name scope whose ops
  are not shown one by one is a box ``+ gradients (48)``: pick it in
  "expand" to open it (one scope at a time; "every op" opens them all).
  Graphs of up to 40 ops start with every op shown, bigger ones collapsed;
* each task is a grey box, with a column per device inside it;
* an arrow between boxes is a tensor a ``_Send``/``_Recv`` pair carried over
  the network (red, dashed); one between two device columns of a task is a
  copy between devices (orange, dashed); grey arrows stay on one device
  (dotted: a control dependency);
* a dashed black outline marks an op that soft placement moved off the
  device it asked for;
* "find op" picks an op by name (type to search): its scope opens, the op is
  highlighted and its details appear under the picture.

Hover any mark for its details. The legend counts what is drawn.
"""

import html

import ipywidgets as widgets
import numpy as np

from .base import SvgView
from .colors import EDGE, NEUTRAL, device_colors, lighter
from .drawing import Drawing, chars_that_fit, text_width
from .names import device_kind, format_bytes, format_micros, short_device, shorten_name, task_of
from .placement_layout import (EVERY_OP, SLOT_H, expanded_scopes, group_nodes, layout,
                               node_label)
from .placement_model import PlacementModel

#: Graphs with at most this many ops start with every op shown.
SMALL_GRAPH = 40
_RANK = {"control": 0, "data": 1, "copy": 2, "network": 3}
_LEGEND = {"network": "sent between tasks", "copy": "copied between devices",
           "data": "data edge", "control": "control dependency"}


def _nbytes(dtype, shape):
    """Bytes of a tensor of ``dtype`` and fully known ``shape``, or None."""
    if shape is None or any(d is None for d in shape) or not dtype:
        return None
    try:
        return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype.replace("_ref", "")).itemsize
    except TypeError:
        return None


class PlacementView(SvgView):
    """Where each op of a graph ran (see the module docstring)."""

    css_class = "minitf-placement-view"

    def __init__(self, graph_or_run_metadata, run_metadata=None, session=None,
                 group_by="auto", width=900):
        if group_by not in ("auto", "scopes", "every op", 0):
            raise ValueError('group_by must be "auto", "scopes" or "every op" (or 0, every '
                             'op), not %r' % (group_by,))
        self.model = PlacementModel.build(graph_or_run_metadata, run_metadata, session)
        self.colors = device_colors(self.model.devices())
        scopes = sorted(self.model.scopes())
        every = group_by in ("every op", 0) or (group_by == "auto" and
                                                 len(self.model.ops) <= SMALL_GRAPH)
        self.scope_selector = widgets.Dropdown(
            description="expand", value=EVERY_OP if every else "",
            options=[("(all scopes collapsed)", ""), ("every op", EVERY_OP)] +
            [(s, s) for s in scopes], layout=widgets.Layout(width="360px"))
        self.op_selector = widgets.Combobox(
            description="find op", placeholder="type an op name", ensure_option=True,
            options=sorted(self.model.ops), layout=widgets.Layout(width="360px"))
        self.op_details = widgets.HTML()
        super().__init__(controls=[self.scope_selector, self.op_selector],
                         details=[self.op_details], width=width)
        self.scope_selector.observe(lambda change: self.redraw(), names="value")
        self.op_selector.observe(self._on_pick, names="value")
        self._on_pick()

    # -- what the view shows ---------------------------------------------------------------------
    @property
    def selected(self):
        """The picked op's name, or None."""
        name = self.op_selector.value
        return name if name in self.model.ops else None

    def expanded(self):
        """The scopes shown open."""
        return expanded_scopes(self.scope_selector.value, self.model.scopes())

    def nodes(self):
        """``{op name: Node}`` as currently drawn (a collapsed scope is one
        Node for all its ops on one device)."""
        return group_nodes(self.model, self.expanded())

    def nodes_per_device(self):
        """``{device: number of ops drawn in its colour}``."""
        counts = {d: 0 for d in self.model.devices()}
        for node in {id(n): n for n in self.nodes().values()}.values():
            counts[node.device] += len(node.members)
        return counts

    def crossing_edges(self):
        """The Send/Recv pairs (tensor, from, to) of the step."""
        return [(p.tensor, p.src_device, p.dst_device) for p in self.model.send_recv]

    def drawn_edges(self, by_op=None):
        """``[(from Node, to Node, kind, tensors)]``: one arrow per pair of
        nodes, of its strongest kind (network > copy > data > control)."""
        by_op = self.nodes() if by_op is None else by_op
        drawn = {}
        for src, dst, tensor in self.model.edges:
            a, b = by_op[src], by_op[dst]
            if a is b:
                continue
            kind = "data" if tensor is not None else "control"
            if a.device != b.device:
                kind = "network" if task_of(a.device) != task_of(b.device) else "copy"
            entry = drawn.setdefault((id(a), id(b)), [a, b, kind, set()])
            if _RANK[kind] > _RANK[entry[2]]:
                entry[2] = kind
            entry[3].add(tensor if tensor is not None else "^" + src)
        return [(a, b, kind, sorted(tensors)) for a, b, kind, tensors in drawn.values()]

    def _on_pick(self, change=None):
        name = self.selected
        if name is not None:
            parent = name.rsplit("/", 1)[0] if "/" in name else ""
            scopes = self.model.scopes()
            # Open the op's scope so it is drawn by itself (unless all are open).
            if self.scope_selector.value != EVERY_OP:
                target = name if name in scopes else parent
                if target and target not in self.expanded():
                    self.scope_selector.value = target  # redraws
                    self.op_details.value = self._details_html(name)
                    return
        self.op_details.value = self._details_html(name)
        self.redraw()

    def _details_html(self, name):
        op = self.model.ops.get(name)
        if op is None:
            return "<i>Type an op's name in \"find op\" to see where it asked to run and " \
                   "where it ran.</i>"
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
        if op.micros is not None:
            rows.append(("ran for", format_micros(op.micros)))
        return "<table class='minitf-op-details'>%s</table>" % "".join(
            "<tr><th style='text-align:left;padding-right:1em'>%s</th><td><code>%s</code>"
            "</td></tr>" % (k, html.escape(str(v))) for k, v in rows)

    # -- tooltips -----------------------------------------------------------------------------
    def _op_title(self, op):
        lines = ["%s (%s)" % (op.name, op.type), "on %s" % op.device]
        if op.requested and op.requested != op.assigned:
            lines.append("asked for %s" % op.requested)
        for t, dtype, shape in op.outputs:
            size = _nbytes(dtype, shape)
            lines.append("%s: %s%s%s" % (t, dtype, "" if shape is None else list(shape),
                                         "" if size is None else ", " + format_bytes(size)))
        if op.micros is not None:
            lines.append("ran for %s" % format_micros(op.micros))
        if op.soft_placed:
            lines.append("moved by soft placement")
        return "\n".join(lines)

    def _scope_title(self, node):
        types = {}
        for m in node.members:
            types[self.model.ops[m].type] = types.get(self.model.ops[m].type, 0) + 1
        kinds = ", ".join("%s x%d" % (t, n) for t, n in sorted(types.items(),
                                                               key=lambda kv: -kv[1])[:6])
        return "scope %s: %d ops on %s\n%s\npick it in \"expand\" to open it" % (
            node.group, len(node.members), node.device, kinds)

    # -- the picture ----------------------------------------------------------------------------
    def draw(self):
        W = self.width
        by_op = self.nodes()
        edges = self.drawn_edges(by_op)
        counts = {k: sum(1 for e in edges if e[2] == k) for k in _RANK}
        soft = [n for n in self.model.soft_placed()]

        # The legend first: its height decides where the boxes start.
        items = [("device", d, "%s: %d op%s" % (short_device(d), n, "" if n == 1 else "s"))
                 for d, n in self.nodes_per_device().items()]
        items += [("edge", k, "%s (%d)" % (_LEGEND[k], counts[k]))
                  for k in ("network", "copy", "data", "control") if counts[k]]
        if soft:
            items.append(("soft", None, "moved by soft placement (%d)" % len(soft)))
        placed = []
        x, y = 8, 44
        for kind, key, label in items:
            w = 30 + text_width(label, mono=False)
            if x + w > W - 8 and x > 8:
                x, y = 8, y + 18
            placed.append((kind, key, label, x, y))
            x += w + 14
        lay = layout(self.model, by_op, W, y + 18)
        d = Drawing(lay.width, lay.height)

        nodes = lay.nodes
        title = "Placement: %d ops on %d device%s, %d nodes drawn" % (
            len(self.model.ops), len(self.model.devices()),
            "" if len(self.model.devices()) == 1 else "s", len(nodes))
        if not self.model.placed:
            title += " - requested devices, not placed yet"
        if self.model.source == "tensorflow":
            title += " (real TensorFlow)"
        d.text(8, 20, title, size=13, weight="bold", css="title")
        for kind, key, label, lx, ly in placed:
            if kind == "device":
                d.rect(lx, ly - 10, 22, 12, fill=lighter(self.colors[key], 0.55),
                       stroke=self.colors[key], stroke_width=1.5, radius=6)
            elif kind == "edge":
                d.arrow(lx, ly - 4, lx + 22, ly - 4, color=EDGE[key], width=1.6,
                        dash=(4, 3) if key in ("network", "copy") else
                        (1.5, 2.5) if key == "control" else None)
            else:
                d.rect(lx, ly - 11, 22, 14, fill="white", stroke="#111", dash=(3, 2),
                       radius=7)
            d.text(lx + 28, ly, label, css="legend-item",
                   data={"kind": kind, "key": key or ""})

        # Task boxes and their device columns.
        for box in lay.tasks:
            n_ops = sum(len(n.members) for n in nodes if task_of(n.device) == box.task)
            d.rect(box.x, box.y, box.w, box.h, fill="#f5f5f5", stroke="#9e9e9e",
                   stroke_width=1.2, radius=6, css="task-box", data={"task": box.task},
                   title="%s: %d ops" % (box.task, n_ops))
            d.text(box.x + 8, box.y + 17, shorten_name("%s  (%d ops)" % (
                short_device(box.task), n_ops), chars_that_fit(box.w - 16, 12)),
                size=12, weight="bold", color="#333")
            for i, col in enumerate(box.columns):
                if i:
                    d.line(col.x, box.y + 26, col.x, box.y + box.h - 6, stroke="#dddddd")
                color = self.colors.get(col.device, NEUTRAL)
                d.rect(col.x + 6, box.y + 28, col.w - 12, 5, fill=color, radius=2)
                d.text(col.x + 6, box.y + 46, shorten_name(device_kind(col.device),
                                                           chars_that_fit(col.w - 12)),
                       mono=True, title=col.device, css="device-row",
                       data={"device": col.device})

        # Edges under the nodes.
        label_edges = [e for e in edges if e[2] in ("network", "copy")]
        for a, b, kind, tensors in sorted(edges, key=lambda e: _RANK[e[2]]):
            x1, y1, x2, y2, via = self._edge_geometry(a, b, lay)
            title = ("%s -> %s\n" % (a.group, b.group)) + (
                "control dependency" if kind == "control" else "tensors: " + ", ".join(tensors))
            if kind == "network":
                title += "\nsent by a _Send/_Recv pair over the network"
            elif kind == "copy":
                title += "\ncopied between devices of %s" % short_device(task_of(a.device))
            d.arrow(x1, y1, x2, y2, color=EDGE[kind], via=via,
                    width=1.8 if kind in ("network", "copy") else 1.1,
                    dash=(5, 3) if kind in ("network", "copy") else
                    (1.5, 2.5) if kind == "control" else None, head=7,
                    title=title, css="edge edge-%s" % kind,
                    data={"from": a.group, "to": b.group})
            if kind in ("network", "copy") and len(label_edges) <= 8:
                text = shorten_name(", ".join(t for t in tensors if not t.startswith("^"))
                                    or "control", 22)
                tx, ty = x1 + 0.5 * (x2 - x1), y1 + 0.5 * (y2 - y1)
                w = text_width(text) + 6
                d.rect(tx - w / 2, ty - 9, w, 14, fill="white", opacity=0.9, radius=3)
                d.text(tx, ty + 2, text, mono=True, anchor="middle", color="#8b1a1a",
                       title=title, css="edge-label")

        # Nodes and their labels.
        selected = by_op.get(self.selected)
        for n in nodes:
            color = self.colors.get(n.device, NEUTRAL)
            if n is selected:
                d.rect(n.x - 4, n.y - 4, n.w + 8, n.h + 8, fill="#ffe066", stroke="#e0a800",
                       stroke_width=2, radius=8, css="selected")
            soft_here = any(self.model.ops[m].soft_placed for m in n.members)
            if soft_here:
                d.rect(n.x - 3, n.y - 3, n.w + 6, n.h + 6, fill="none", stroke="#111",
                       dash=(3, 2), stroke_width=1.4, radius=9, css="soft-placed")
            text = node_label(n, chars_that_fit(n.w - 10))
            if n.is_scope:
                d.rect(n.x, n.y, n.w, n.h, fill=lighter(color, 0.55), stroke=color,
                       stroke_width=2.5, radius=3, title=self._scope_title(n),
                       css="node node-scope", data={"scope": n.group, "device": n.device,
                                                    "ops": len(n.members)})
            else:
                op = self.model.ops[n.members[0]]
                d.rect(n.x, n.y, n.w, n.h, fill=lighter(color, 0.7), stroke=color,
                       stroke_width=1.6, radius=n.h / 2.0, title=self._op_title(op),
                       css="node node-op", data={"op": n.group, "device": n.device})
            d.text(n.cx, n.y + 15, text, mono=True, anchor="middle", color="#1a1a1a",
                   title=self._scope_title(n) if n.is_scope else
                   self._op_title(self.model.ops[n.members[0]]), css="node-label")
        return d

    @staticmethod
    def _edge_geometry(a, b, lay):
        """Start, end and optional curve control point of an arrow a -> b
        (data flows down; between tasks, sideways from box to box)."""
        if task_of(a.device) != task_of(b.device):
            if b.x > a.x + a.w:
                return a.x + a.w, a.cy, b.x, b.cy, None
            if b.x + b.w < a.x:
                return a.x, a.cy, b.x + b.w, b.cy, None
            return a.cx, a.y + a.h, b.cx, b.y, None
        box = [t for t in lay.tasks if t.task == task_of(a.device)][0]
        if b.y > a.y + a.h:  # downwards, the usual case
            x1, y1, x2, y2 = a.cx, a.y + a.h, b.cx, b.y
            if abs(x1 - x2) < 2 and y2 - y1 > 2 * SLOT_H:
                # Straight down past other layers: bow sideways, inside the box.
                side = min(box.x + box.w - 6, max(a.x + a.w, b.x + b.w) + 14)
                return x1, y1, x2, y2, (side, (y1 + y2) / 2.0)
            return x1, y1, x2, y2, None
        if abs(a.y - b.y) < 1:  # one layer (a cycle between scopes): side to side
            if b.x > a.x:
                return a.x + a.w, a.cy, b.x, b.cy, None
            return a.x, a.cy, b.x + b.w, b.cy, None
        # Upwards (a cycle between scopes): loop round the side, inside the box.
        side = min(box.x + box.w - 6, max(a.x + a.w, b.x + b.w) + 20)
        return a.x + a.w, a.cy, b.x + b.w, b.cy, (side, (a.cy + b.cy) / 2.0)

    def __repr__(self):
        counts = self.model.ops_per_device()
        return "PlacementView(%d ops on %d devices: %s; %d Send/Recv pairs; %d moved by " \
               "soft placement)" % (len(self.model.ops), len(counts), ", ".join(
                   "%s %d" % (d, n) for d, n in counts.items()), len(self.model.send_recv),
                   len(self.model.soft_placed()))
