"""Where PlacementView puts each mark: ops grouped by name scope, in task
boxes side by side with one column per device, one row per layer of the
graph (data flows down, as in TensorBoard, so a long chain of ops grows the
picture downwards - the way a notebook scrolls - not sideways).

Grouping works like TensorBoard's graph: a *collapsed* scope (``gradients``
with its 48 ops) is one node per device it has ops on; an *expanded* scope
shows what it holds, its own sub-scopes collapsed. :func:`expanded_scopes`
turns the scope a learner picked into the set of expanded scopes (the
scope and every scope above it).
"""

from dataclasses import dataclass, field

from .drawing import text_width
from .names import device_sort_key, shorten_name, task_of

NODE_H = 22          # a node's height (px)
SLOT_H = 34          # vertical room per line of nodes in a layer
HEADER_H = 48        # a task box's title line and its devices' names
MIN_DEV_W = 170      # a device column is never narrower (the picture scrolls)
NODE_GAP = 10        # between nodes side by side
TASK_GAP = 36        # between task boxes (cross-task arrows run here)
PAD = 8              # inside a task box, around its device columns
MARGIN = 8

EVERY_OP = "*"       # the "scope" that means: expand everything


@dataclass
class Node:
    """One mark: an op, or the ops of a collapsed scope on one device."""
    key: tuple            # (group name, device)
    group: str            # the op's or the scope's name
    device: str
    members: list         # op names
    is_scope: bool
    layer: int = 0
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = NODE_H

    @property
    def cx(self):
        return self.x + self.w / 2.0

    @property
    def cy(self):
        return self.y + self.h / 2.0


@dataclass
class DeviceColumn:
    device: str
    x: float
    w: float


@dataclass
class TaskBox:
    task: str
    x: float
    y: float
    w: float
    h: float
    columns: list = field(default_factory=list)


@dataclass
class Layout:
    nodes: list
    by_op: dict           # op name -> Node
    tasks: list           # TaskBox
    width: float
    height: float
    top: float


def expanded_scopes(choice, scopes):
    """The scopes to show open: none (``""``), all (:data:`EVERY_OP`), or
    ``choice`` and every scope above it."""
    if not choice:
        return set()
    if choice == EVERY_OP:
        return set(scopes)
    parts = choice.split("/")
    return {"/".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(scopes)


def group_of(name, scopes, expanded):
    """The node an op belongs to: its outermost collapsed scope, else itself.
    An op named like a scope (the variable ``w`` next to ``w/read``) belongs
    to that scope's node while the scope is collapsed."""
    parts = name.split("/")
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        if prefix in scopes and prefix not in expanded:
            return prefix
    return name


def group_nodes(model, expanded):
    """``{op name: Node}`` with ops grouped by their collapsed scope."""
    scopes = model.scopes()
    groups = {}
    for name, op in model.ops.items():
        group = group_of(name, scopes, expanded)
        groups.setdefault((group, op.device), []).append(name)
    key_of = {m: key for key, members in groups.items() for m in members}
    layers = model.generations(key_of)
    out = {}
    for (group, device), members in groups.items():
        node = Node((group, device), group, device, sorted(members),
                    is_scope=group in scopes and group not in expanded,
                    layer=min(layers[m] for m in members))
        for m in members:
            out[m] = node
    return out


def node_label(node, chars=None):
    """The text inside a node: the op's name, or ``+ scope (ops)``; cut from
    the front at a scope boundary to ``chars`` characters."""
    if node.is_scope:
        count = " (%d)" % len(node.members)
        name = node.group if chars is None else shorten_name(node.group, chars - 2 - len(count))
        return "+ " + name + count
    return node.group if chars is None else shorten_name(node.group, chars)


def layout(model, by_op, width, top):
    """Positions for every node, task box and device column. Device columns
    share the width; a layer's nodes on one device sit side by side, on as
    many lines as they need; labels are shortened to fit their column."""
    nodes = list({id(n): n for n in by_op.values()}.values())
    ranks = {layer: i for i, layer in enumerate(sorted({n.layer for n in nodes}))}
    tasks = sorted({task_of(n.device) for n in nodes}, key=device_sort_key)
    devices = {t: sorted({n.device for n in nodes if task_of(n.device) == t},
                         key=device_sort_key) for t in tasks}
    n_dev = sum(len(d) for d in devices.values())
    fixed = 2 * MARGIN + TASK_GAP * (len(tasks) - 1) + 2 * PAD * len(tasks)
    dev_w = max(MIN_DEV_W, (width - fixed) / max(1, n_dev))
    total_w = max(width, fixed + n_dev * dev_w)

    # Columns, left to right: task boxes, each with its devices' columns.
    boxes, column_of, x = [], {}, MARGIN
    for t in tasks:
        box = TaskBox(t, x, top, 2 * PAD + dev_w * len(devices[t]), 0)
        for i, d in enumerate(devices[t]):
            column_of[d] = DeviceColumn(d, x + PAD + i * dev_w, dev_w)
            box.columns.append(column_of[d])
        boxes.append(box)
        x += box.w + TASK_GAP

    preds = {}
    for a, b, _ in model.edges:
        na, nb = by_op[a], by_op[b]
        if na is not nb:
            preds.setdefault(id(nb), set()).add(id(na))
    cells = {}
    for n in nodes:
        cells.setdefault((ranks[n.layer], n.device), []).append(n)
        n.w = min(dev_w - 2 * NODE_GAP, text_width(node_label(n)) + 24)
    y = top + HEADER_H
    placed = {}  # id(node) -> its centre x, once placed
    for rank in range(len(ranks)):
        lines_here = 1
        for device, column in column_of.items():
            cell = cells.get((rank, device), [])

            # One pass of the barycentre heuristic: a node sits under the
            # mean x of the nodes that feed it (fewer crossings).
            def order(n):
                xs = [placed[p] for p in preds.get(id(n), ()) if p in placed]
                return (sum(xs) / len(xs) if xs else 1e9, n.group)
            cell.sort(key=order)
            lines = [[]]
            for n in cell:  # fill a line, then start the next
                used = sum(m.w + NODE_GAP for m in lines[-1])
                if lines[-1] and used + n.w > column.w - NODE_GAP:
                    lines.append([])
                lines[-1].append(n)
            for i, line in enumerate(lines):
                span = sum(m.w for m in line) + NODE_GAP * (len(line) - 1)
                nx = column.x + (column.w - span) / 2.0
                for n in line:
                    n.x, n.y = nx, y + i * SLOT_H + (SLOT_H - NODE_H) / 2.0
                    nx += n.w + NODE_GAP
                    placed[id(n)] = n.cx
            lines_here = max(lines_here, len(lines))
        y += lines_here * SLOT_H
    for box in boxes:
        box.h = y - top + PAD
    return Layout(nodes, by_op, boxes, total_w, y + PAD + MARGIN, top)
