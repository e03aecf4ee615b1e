"""minitf.widgets, built from real traces of real steps.

Each test checks what a view *draws*: the marks of its SVG (their classes,
data attributes and ``<title>`` tooltips), its legend's counts, its tables,
repr and PNG fallback, against the trace or the servers it was built from.
Two real steps: a small two-task step (tests/unit/two_task_run.py) and a
data-parallel training step on 1 ps + 2 workers with int8-compressed
transfers and a control signal (tests/unit/training_step.py).
"""

import base64
import collections
import io
import json
import re
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

import matplotlib.image  # noqa: E402

import minitf.compat.v1 as tf  # noqa: E402
from minitf.distributed.inspect import variable_values  # noqa: E402
from minitf.runtime.config import RunMetadata, Transfer  # noqa: E402
from minitf.widgets import (ClusterView, PlacementView, TransferView,  # noqa: E402
                            VariableStateView, device_color)
from minitf.widgets.colors import EDGE, STATUS  # noqa: E402
from minitf.widgets.drawing import MIN_TEXT_PX, MONO_EM  # noqa: E402
from minitf.widgets.names import shorten_name  # noqa: E402
from training_step import start_training_step, stop_training_step  # noqa: E402
from two_task_run import start_two_task_step, stop_two_task_step  # noqa: E402

TASK0 = "/job:local/replica:0/task:0"
CPU0, CPU1 = TASK0 + "/device:CPU:0", "/job:local/replica:0/task:1/device:CPU:0"
PS = "/job:ps/replica:0/task:0/device:CPU:0"
SVG = "{http://www.w3.org/2000/svg}"
MARKS = ("rect", "circle", "path", "polygon")


@pytest.fixture(scope="module")
def step():
    s = start_two_task_step()
    yield s
    stop_two_task_step(s)


@pytest.fixture(scope="module")
def training():
    s = start_training_step()
    yield s
    stop_training_step(s)


# -- reading what a view drew ------------------------------------------------------------------
def svg_of(view):
    """The view's SVG as an ElementTree root (also checks the HTML holds it)."""
    assert view.svg() in view.picture.value
    return ET.fromstring(view.svg())


def marks(root, css):
    """Elements whose class list contains ``css``."""
    return [e for e in root.iter() if css in (e.get("class") or "").split()]


def title_of(e):
    t = e.find(SVG + "title")
    return t.text if t is not None else None


def texts(root):
    """Every text's words (without its tooltip)."""
    return [e.text or "" for e in root.iter(SVG + "text")]


def assert_crisp_and_hoverable(view):
    """Drawn at its own size, text >= 11 px, every classed mark has a tooltip."""
    root = svg_of(view)
    width, height = int(root.get("width")), int(root.get("height"))
    assert root.get("viewBox") == "0 0 %d %d" % (width, height)
    assert "max-width:none" in root.get("style")  # never stretched to the output
    assert min(float(e.get("font-size")) for e in root.iter(SVG + "text")) >= MIN_TEXT_PX
    classed = [e for tag in MARKS for e in root.iter(SVG + tag) if e.get("class")]
    assert classed
    untitled = [(e.tag, e.get("class")) for e in classed
                if not title_of(e) and e.get("class") not in ("selected", "transfer-label", "soft-placed")]
    assert not untitled, untitled[:5]
    return root


def assert_png_not_blank(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
    assert pixels.shape[0] > 100 and pixels.shape[1] > 300
    assert pixels[..., :3].std() > 0.05  # not one flat colour


def assert_bundle(view):
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == repr(view)
    png = base64.b64decode(bundle["image/png"])
    assert_png_not_blank(png)
    # The PNG is the SVG's drawing at the same size (1 px = 1 px).
    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
    assert abs(pixels.shape[1] - view.drawing.width) <= 1
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == view.model_id


# -- TransferView on a real training step ------------------------------------------------------------
def _network(view):
    return [t for t in view.transfers if t.kind == "network" and not t.fetch]


def test_a_transfer_starts_when_the_sender_had_its_value(training):
    """The arrow starts when the sender's value was ready (its _Send or its
    producer finished), never before: gradients do not leave a worker
    before they are computed."""
    view = TransferView(training.md)
    runs = {(o.device, o.name): o for o in view.ops}
    nodes = view.steps[0].nodes
    checked = 0
    for t in _network(view):
        send = runs[(t.src_device, t.sender)]
        assert send.type == "_Send" and t.sender in nodes
        producer = runs[(t.src_device, nodes[t.sender].inputs[0][0])]
        assert t.ready >= producer.end, (t.tensor, t.ready, producer)
        assert t.ready >= send.start and t.ready <= t.arrived
        assert t.ready == (send.end if send.end <= t.arrived else send.start)
        checked += 1
    assert checked >= 16
    # The receivers on the ps asked for the gradients long before they existed.
    grads = [t for t in _network(view) if t.dst_device == PS and not t.control]
    assert len(grads) == 8 and all(t.ready > t.asked for t in grads)
    # The SVG's arrows start at those times.
    t0 = view.origin()
    arrows = {(a.get("data-tensor"), a.get("data-dst")): a for a in marks(svg_of(view), "transfer")}
    for t in view.shown_transfers():
        a = arrows[(t.tensor, t.dst_device)]
        assert int(a.get("data-ready")) == t.ready - t0
        assert int(a.get("data-arrived")) == t.arrived - t0
        assert "sender ready at %.3f ms" % ((t.ready - t0) / 1000.0) in title_of(a)
    view.close()


def test_waiting_is_drawn_and_reported(training):
    view = TransferView(training.md)
    states = view.lane_states()
    span = view.span()
    for device, s in states.items():
        assert s["running"] + s["waiting"] + s["idle"] == span
    # The ps waits for the workers' gradients; every lane waits for something.
    assert states[PS]["waiting"] > states[PS]["running"] > 0
    root = svg_of(view)
    waiting = marks(root, "state-waiting")
    assert {w.get("data-device") for w in waiting} == set(states)
    assert all(title_of(w).startswith("waiting ") for w in waiting)
    assert marks(root, "state-running") and marks(root, "state-idle")
    # The _Recv bars are striped (waiting), not solid like running ops.
    recvs = [e for e in marks(root, "op-waiting") if "(_Recv)" in title_of(e)]
    assert recvs and all(e.get("fill").startswith("url(#minitf-hatch-") for e in recvs)
    assert all(not e.get("fill").startswith("url(") for e in marks(root, "op-running"))
    # Per transfer: how long the receiver waited for the sender, in the list and tooltip.
    waited = [t for t in view.shown_transfers() if t.waited > 0]
    assert waited
    labels = [label for label, i in view.rows.options if i >= 0]
    assert "waited" in view.rows_header.value
    tooltips = "\n".join(title_of(a) for a in marks(root, "transfer"))
    for t in waited:
        i = view.shown_transfers().index(t)
        assert _micros(t.waited) in labels[i].replace("\u00a0", " ")
        assert "waited %s for the sender" % _micros(t.waited) in tooltips
    assert "waited %s for the sender" % _micros(waited[0].waited) in \
            "\n".join(title_of(a) for a in marks(root, "transfer"))
    lane_totals = {e.get("data-device"): e.text for e in marks(root, "lane-totals")}
    assert lane_totals[PS].startswith("run ") and " · wait " in lane_totals[PS]
    assert len(labels) == len(view.shown_transfers())
    view.close()


def _micros(us):
    from minitf.widgets.names import format_micros
    return format_micros(us)


def test_control_signals_are_hidden_until_asked_for(training):
    view = TransferView(training.md)
    control = [t for t in view.transfers if t.control]
    assert control and all(t.bytes == 1 and t.tensor.startswith("^") for t in control)
    root = svg_of(view)
    assert not marks(root, "transfer-control")
    shown = len(marks(root, "transfer"))
    assert shown == len(view.shown_transfers()) == len(view.transfers) - len(control)
    assert "(%d control signal" % len(control) in texts(root)[0]
    assert len(view.rows.options) == shown + 1  # plus "(none)"
    view.control_toggle.value = True
    root = svg_of(view)
    assert len(marks(root, "transfer-control")) == len(control)
    assert len(marks(root, "transfer")) == len(view.transfers)
    assert len(view.rows.options) == len(view.transfers) + 1
    assert "hidden" not in texts(root)[0]
    view.close()
    assert TransferView(training.md, show_control=True).control_toggle.value


def test_compressed_transfers_report_wire_bytes(training):
    view = TransferView(training.md)
    # A compressed tensor's _Recv receives its int8 part (the partition graphs
    # mark it with minitf's compression attr), plus min and scale.
    int8 = {n.name for g in training.md.partition_graphs for n in g.node
            if n.op == "_Recv" and n.attr["_minitf_compression"].s == b"int8"}
    compressed = [t for t in _network(view) if t.receiver in int8]
    assert len(compressed) >= 16
    for t in compressed:  # int8: one byte per float32 plus an 8-byte min and scale
        assert t.wire_bytes == t.bytes // 4 + 8
    floats = [t for t in compressed if t.bytes > 12]  # a scalar's encoding is bigger
    assert len(floats) >= 12 and all(t.wire_bytes < t.bytes for t in floats)
    for t in floats:
        assert t.compression == pytest.approx(t.bytes / t.wire_bytes)
    # Only the int32 labels and the control signal cross uncompressed.
    assert {t.tensor for t in _network(view) if t not in compressed} == {
        "unstack_1:1"} | {t.tensor for t in view.transfers if t.control}
    root = svg_of(view)
    for t in floats:
        arrow = [a for a in marks(root, "transfer") if a.get("data-tensor") == t.tensor][0]
        assert "%d B, %d B on the wire" % (t.bytes, t.wire_bytes) in title_of(arrow)
    # The totals: per link, tensor bytes next to bytes on the wire.
    bars = marks(root, "link-bytes")
    wire = marks(root, "link-wire-bytes")
    assert len(bars) == len(wire) == len({t.link for t in view.transfers})
    assert sum(int(b.get("data-bytes")) for b in bars) == sum(t.bytes for t in view.transfers)
    assert sum(int(b.get("data-bytes")) for b in wire) == sum(t.wire_bytes
                                                              for t in view.transfers)
    assert "bytes on the wire" in view.totals.value
    view.close()


def test_the_totals_axis_labels_do_not_run_together(training):
    view = TransferView(training.md)
    ticks = marks(svg_of(view), "totals-tick")
    xs = [float(t.get("x")) for t in ticks]
    widths = [len(t.text) * MIN_TEXT_PX * MONO_EM for t in ticks]
    assert len(ticks) >= 2
    for (x1, w1), (x2, w2) in zip(zip(xs, widths), zip(xs[1:], widths[1:])):
        assert x1 + w1 / 2 + 4 < x2 - w2 / 2
    assert all(re.fullmatch(r"\d+(\.\d+)? k?B", t.text) for t in ticks)
    view.close()


def test_picking_a_row_highlights_its_arrow(training):
    view = TransferView(training.md)
    before = view.svg()
    assert not marks(svg_of(view), "transfer-selected")
    t = view.shown_transfers()[3]
    view.rows.value = 3
    root = svg_of(view)
    (picked,) = marks(root, "transfer-selected")
    assert picked.get("data-tensor") == t.tensor and view.selected is t
    (label,) = marks(root, "transfer-label-text")
    assert label.text.startswith(t.tensor)
    others = [a for a in marks(root, "transfer") if a is not picked]
    assert all(a.get("opacity") == "0.3" for a in others)
    assert t.tensor in view.transfer_details.value and view.svg() != before
    view.rows.value = -1
    assert not marks(svg_of(view), "transfer-selected")
    assert view.select(t.tensor).tensor == t.tensor
    view.close()


def test_the_time_window_zooms_in(training):
    view = TransferView(training.md)
    ops_all = len(marks(svg_of(view), "op"))
    assert ops_all == sum(len(view.lane_ops(d)) for d in view.lanes())
    lo, hi = view.window.value
    view.window.value = (lo, lo + (hi - lo) * 0.2)
    root = svg_of(view)
    zoomed = marks(root, "op")
    assert 0 < len(zoomed) < ops_all
    start, end = view.window_micros()
    for e in zoomed:  # every op drawn overlaps the window
        op = [o for o in view.lane_ops(e.get("data-device")) if o.name == e.get("data-op")][0]
        assert op.end >= start and op.start <= end
    assert max(float(t.text) for t in marks(root, "tick")) <= (hi - lo) * 0.2 + 1e-9
    view.close()


def test_export_chrome_trace_has_the_same_arrows(training, tmp_path):
    view = TransferView(training.md)
    path = view.export_chrome_trace(str(tmp_path / "step.json"))
    trace = json.load(open(path))["traceEvents"]
    flows = {e["id"]: e for e in trace if e["ph"] == "s"}
    ends = {e["id"]: e for e in trace if e["ph"] == "f"}
    assert len(flows) == len(ends) == len(view.transfers)
    by_tensor = collections.defaultdict(list)
    for e in flows.values():
        by_tensor[e["name"]].append(e["ts"])
    for t in view.transfers:
        assert t.ready in by_tensor[t.tensor]
    assert {e["cat"] for e in flows.values()} == {"transfer", "control"}
    ops = [e for e in trace if e["ph"] == "X" and e["cat"] in ("Op", "wait")]
    assert len(ops) == len(view.ops)
    assert {e["args"]["name"] for e in ops if e["cat"] == "wait"} >= {
        o.name for o in view.ops if o.type == "_Recv"}
    view.close()


def test_transfer_view_repr_png_and_every_mark_titled(training, step):
    for md in (training.md, step.md):
        view = TransferView(md)
        assert_crisp_and_hoverable(view)
        assert_bundle(view)
        transfers = md.step_stats.transfers
        assert "%d transfers, %d bytes" % (len(transfers), sum(t.bytes for t in transfers)) \
            in repr(view)
        view.close()


# -- TransferView on the small two-task step -----------------------------------------------------------
def test_transfer_view_rows_and_bytes_equal_the_trace(step):
    transfers = step.md.step_stats.transfers
    view = TransferView(step.md)
    assert len(view.transfers) == len(transfers) > 0
    assert sorted((t.tensor + (" (fetch)" if t.fetch else ""), t.bytes) for t in view.transfers) \
        == sorted((t.tensor, t.bytes) for t in transfers)
    assert len(view.rows.options) == len(transfers) + 1  # plus "(none)"
    # Two links: inputs task 0 -> task 1, and the fetched result back to the
    # master on task 0.
    assert view.totals.value.count("<tr>") == 3
    assert all(t.kind == "network" for t in view.transfers)
    assert {t.link for t in view.transfers if not t.fetch} == {(CPU0, CPU1)}
    assert {t.link for t in view.transfers if t.fetch} == {(CPU1, CPU0)}
    fetch = [t for t in view.transfers if t.fetch][0]
    z = [o for o in view.ops if o.name == fetch.tensor.split(":")[0]][0]
    assert fetch.ready == z.end and fetch.asked is None  # from the op that made it
    n_ops = sum(1 for d in step.md.step_stats.dev_stats for ns in d.node_stats
                if ns.node_name != "RecvTensor")  # TF's receive records are transfers
    assert len(view.ops) == n_ops
    view.close()


def test_transfer_view_of_several_steps(step):
    view = TransferView([step.md, step.md2])
    n = len(step.md.step_stats.transfers) + len(step.md2.step_stats.transfers)
    assert len(view.shown_transfers()) == n and repr(view).startswith("TransferView(2 steps")
    assert len(marks(svg_of(view), "step-mark")) == 2
    view.step_selector.value = 2
    assert sorted(t.tensor for t in view.shown_transfers()) == sorted(
        t.tensor.replace(" (fetch)", "") for t in step.md2.step_stats.transfers)
    assert not marks(svg_of(view), "step-mark")
    assert view.window.value[0] == 0 and view.window.value[1] == pytest.approx(
        view.span() / 1000.0)
    view.close()


def test_transfer_view_shows_host_to_gpu_copies_like_transfers(step):
    md = RunMetadata()
    md.CopyFrom(step.md)
    gpu = TASK0 + "/device:GPU:0"
    start = step.md.step_stats.transfers[0].start_micros
    md.step_stats.transfers = list(step.md.step_stats.transfers) + [
        Transfer(tensor="x:0", src_device="host", dst_device=gpu, bytes=16,
                 start_micros=start, end_micros=start + 40, wire_bytes=16)]
    view = TransferView(md)
    (copy,) = [t for t in view.transfers if t.kind == "copy"]
    assert copy.src_device == CPU0 and copy.ready == start and copy.wire_micros == 40
    assert copy.mb_per_s == pytest.approx(0.4) and gpu in view.colors
    (arrow,) = marks(svg_of(view), "transfer-copy")
    assert arrow.get("stroke") == EDGE["copy"]
    view.close()


# -- PlacementView ----------------------------------------------------------------------------------------
def _legend_counts(root):
    out = {}
    for e in marks(root, "legend-item"):
        m = re.search(r"\((\d+)\)$", e.text or "")
        if m:
            out[e.get("data-key")] = int(m.group(1))
        m = re.search(r": (\d+) ops?$", e.text or "")
        if m:
            out[e.get("data-key")] = int(m.group(1))
    return out


def test_placement_view_legend_counts_what_is_drawn(training, step):
    for view in (PlacementView(training.graph, run_metadata=training.md),
                 PlacementView(training.md), PlacementView(step.graph, run_metadata=step.md)):
        root = assert_crisp_and_hoverable(view)
        legend = _legend_counts(root)
        for kind in ("network", "copy", "data", "control"):
            assert legend.get(kind, 0) == len(marks(root, "edge-" + kind)), kind
        for device, n in view.nodes_per_device().items():
            drawn = sum(int(e.get("data-ops") or 1) for e in marks(root, "node")
                        if e.get("data-device") == device)
            assert legend[device] == n == drawn
        assert legend["network"] > 0
        assert_bundle(view)
        view.close()


def test_placement_view_collapses_scopes_and_expands_one_at_a_time(training):
    view = PlacementView(training.graph, run_metadata=training.md)
    assert len(view.model.ops) > 40 and view.scope_selector.value == ""  # collapsed
    root = svg_of(view)
    scopes = {e.get("data-scope") for e in marks(root, "node-scope")}
    assert {"tower_0", "tower_1"} <= scopes
    assert not any("/" in s for s in scopes)  # only top-level scopes
    n_collapsed = len(marks(root, "node"))
    view.scope_selector.value = "tower_0"
    root = svg_of(view)
    assert "tower_0" not in {e.get("data-scope") for e in marks(root, "node-scope")}
    assert "tower_0/gradients" in {e.get("data-scope") for e in marks(root, "node-scope")}
    assert "tower_1" in {e.get("data-scope") for e in marks(root, "node-scope")}
    assert len(marks(root, "node")) > n_collapsed
    view.scope_selector.value = "*"  # every op
    assert len(marks(svg_of(view), "node-op")) == len(view.model.ops)
    view.close()


def test_placement_view_finds_an_op_and_opens_its_scope(training):
    view = PlacementView(training.graph, run_metadata=training.md)
    name = "tower_1/gradients/tower_1/MatMul_grad/MatMul_1"
    assert name in view.op_selector.options
    view.op_selector.value = name
    assert view.scope_selector.value == name.rsplit("/", 1)[0]
    root = svg_of(view)
    assert len(marks(root, "selected")) == 1
    (node,) = [e for e in marks(root, "node-op") if e.get("data-op") == name]
    assert "MatMul" in title_of(node) and "/job:worker/replica:0/task:1" in title_of(node)
    assert "MatMul" in view.op_details.value
    view.close()


def test_placement_view_keeps_labels_and_edges_inside_their_boxes(training):
    view = PlacementView(training.graph, run_metadata=training.md)
    view.scope_selector.value = "tower_0/gradients/tower_0"
    root = svg_of(view)
    nodes = marks(root, "node")
    for label, node in zip(marks(root, "node-label"), nodes):
        width = len(label.text) * MIN_TEXT_PX * MONO_EM
        assert width <= float(node.get("width")) - 4, (label.text, node.get("width"))
        full = node.get("data-op") or node.get("data-scope")
        kept = re.sub(r"^\+ | \(\d+\)$", "", label.text)
        if kept != full:  # shortened: a tail of the name, cut at a "/" or "_"
            assert kept.startswith("…") and full.endswith(kept[1:]), (kept, full)
            assert full[-len(kept[1:]) - 1] in "/_" or kept.startswith("…/"), (kept, full)
    boxes = {b.get("data-task"): b for b in marks(root, "task-box")}

    def inside(x, y, box):
        return float(box.get("x")) <= x <= float(box.get("x")) + float(box.get("width")) and \
            float(box.get("y")) <= y <= float(box.get("y")) + float(box.get("height"))
    for node in nodes:
        task = node.get("data-device").rsplit("/device:", 1)[0]
        x, y = float(node.get("x")), float(node.get("y"))
        assert inside(x, y, boxes[task]) and inside(x + float(node.get("width")),
                                                    y + float(node.get("height")), boxes[task])
    by_name = {}
    for node in nodes:
        by_name[(node.get("data-op") or node.get("data-scope"), node.get("data-device"))] = node
    for edge in marks(root, "edge-data") + marks(root, "edge-control"):
        points = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", edge.get("d"))]
        task = [b for b in boxes.values() if inside(points[0], points[1], b)]
        assert task and all(inside(x, y, task[0]) for x, y in zip(points[::2], points[1::2]))
    view.close()


def test_shorten_name_cuts_at_scope_boundaries():
    assert shorten_name("tower_0/gradients/tower_0/MatMul_grad/MatMul_1", 24) == \
        "…/MatMul_grad/MatMul_1"
    assert shorten_name("short", 20) == "short"
    assert shorten_name("sparse_softmax_cross_entropy_loss", 20) == "…cross_entropy_loss"
    assert shorten_name("tower_1/sparse_softmax_cross_entropy_loss/value", 20) == "…/value"


def test_device_colours_are_the_same_in_every_view_and_never_an_edge_colour(training):
    placement = PlacementView(training.graph, run_metadata=training.md)
    transfers = TransferView(training.md)
    cluster = ClusterView(training.cluster)
    devices = placement.model.devices()
    colors = [device_color(d) for d in devices]
    assert len(set(colors)) == len(devices)
    assert not set(colors) & set(EDGE.values()) and not set(colors) & set(STATUS.values())
    assert placement.colors == {d: device_color(d) for d in devices}
    assert transfers.colors == {d: device_color(d) for d in transfers.colors}
    # In the SVGs: each lane's and each device row's swatch.
    for root, css in ((svg_of(transfers), "lane-label"), (svg_of(placement), "device-row"),
                      (svg_of(cluster), "device")):
        assert {e.get("data-device") for e in marks(root, css)} >= set(devices) - {"(unplaced)"}
    for running in marks(svg_of(transfers), "state-running"):
        assert running.get("fill") == device_color(running.get("data-device"))
    for node in marks(svg_of(placement), "node"):
        assert node.get("stroke") == device_color(node.get("data-device"))
    for view in (placement, transfers, cluster):
        view.close()


def test_placement_view_draws_every_op_in_its_devices_colour(step):
    view = PlacementView(step.graph, run_metadata=step.md)
    expected = collections.Counter(step.md.placement.values())
    assert view.nodes_per_device() == dict(expected)
    assert set(view.nodes()) == set(step.md.placement)
    assert view.scope_selector.value == "*"  # a small graph: every op
    assert "%d ops on 2 devices: %s %d, %s %d" % (
        len(step.md.placement), CPU0, expected[CPU0], CPU1, expected[CPU1]) in repr(view)
    view.close()


def test_placement_view_crossing_edges_are_the_send_recv_pairs(step):
    sends = [n for g in step.md.partition_graphs for n in g.node
             if n.op == "_Send" and not n.attr["client_terminated"].b]
    assert sends, "the step should have Send/Recv pairs"
    sent = sorted(n.input[0] if ":" in n.input[0] else n.input[0] + ":0" for n in sends)
    for view in (PlacementView(step.graph, run_metadata=step.md), PlacementView(step.md)):
        crossing = view.crossing_edges()
        assert sorted(t for t, _, _ in crossing) == sent
        assert all((a, b) == (CPU0, CPU1) for _, a, b in crossing)
        assert "%d Send/Recv pairs" % len(sends) in repr(view)
        tooltips = "\n".join(title_of(e) for e in marks(svg_of(view), "edge-network"))
        assert all(t in tooltips for t, _, _ in crossing)
        view.close()


def test_placement_view_from_run_metadata_alone_matches_the_graph(step):
    from_graph = PlacementView(step.graph, run_metadata=step.md)
    from_md = PlacementView(step.md)
    assert from_md.nodes_per_device() == from_graph.nodes_per_device()
    # The partition graphs' edges, with each Send/Recv pair followed back.
    assert sorted(from_md.model.ops["layer/y"].inputs) == ["w/read:0", "x:0"]
    for v in (from_graph, from_md):
        v.close()


def test_placement_view_details_of_one_op(step):
    view = PlacementView(step.graph, run_metadata=step.md)
    view.op_selector.value = "layer/y"
    details = view.op_details.value
    for text in ("MatMul", "/job:local/task:1", CPU1, "x:0", "w/read:0", "float32[1, 3]"):
        assert text in details
    assert [e.get("data-op") for e in marks(svg_of(view), "node-op")
            if e.get("x") is not None].count("layer/y") == 1
    view.op_selector.value = "x"
    assert "local/task:1/CPU:0" in view.op_details.value  # "sent to" task 1
    view.close()


def test_placement_view_marks_soft_placed_ops():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/device:CPU:7"):  # there is no CPU:7: soft placement moves it
            a = tf.constant(2.0, name="a")
        b = tf.add(a, 1.0, name="b")
    with tf.Session(graph=g, config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        md = tf.RunMetadata()
        sess.run(b, run_metadata=md)
        assert "a" in md.soft_placed
        view = PlacementView(g, run_metadata=md)
        assert view.model.soft_placed() == sorted(md.soft_placed)
        assert "%d moved by soft placement" % len(md.soft_placed) in repr(view)
        root = svg_of(view)
        assert len(marks(root, "soft-placed")) == len(md.soft_placed)
        assert _legend_counts(root)[""] == len(md.soft_placed)
        # From the session alone, the placer's own record says the same.
        assert PlacementView(g, session=sess).model.soft_placed() == sorted(md.soft_placed)
    view.close()


def test_placement_view_of_a_300_op_graph_starts_collapsed():
    g = tf.Graph()
    with g.as_default():
        h = tf.constant(np.ones((2, 2), np.float32), name="input")
        for layer in range(12):
            with tf.device("/device:CPU:%d" % (layer % 2)), tf.name_scope("layer%d" % layer):
                for _ in range(6):
                    h = tf.tanh(h * 0.5 + 0.1)
                h = tf.identity(h, name="out")
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(graph=g, config=config) as sess:
        md = tf.RunMetadata()
        sess.run(h, run_metadata=md)
    assert len(md.placement) >= 250
    view = PlacementView(g, run_metadata=md)
    root = svg_of(view)
    assert len(marks(root, "node")) == 13  # input + 12 layers
    assert view.nodes_per_device() == dict(collections.Counter(md.placement.values()))
    assert len(marks(root, "edge-copy")) == 11  # each layer hands over to the other CPU
    assert int(root.get("width")) <= view.width
    view.scope_selector.value = "*"
    assert len(marks(svg_of(view), "node-op")) == len(md.placement)
    view.close()
    with pytest.raises(ValueError):
        PlacementView(g, run_metadata=md, group_by=2)


def test_placement_view_of_a_graph_that_did_not_run_shows_requests():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.constant(1.0, name="v")
        tf.identity(v, name="w")
    view = PlacementView(g)
    assert not view.model.placed
    assert view.nodes_per_device() == {"/job:ps/task:0": 1, "(unplaced)": 1}
    assert "not placed yet" in texts(svg_of(view))[0]
    view.close()


# -- VariableStateView -----------------------------------------------------------------------------------
def test_variable_view_shows_the_servers_values(step):
    view = VariableStateView(step.cluster, refresh=0)
    assert view.thread is None
    truth = variable_values(step.cluster)
    shown = view.values()
    assert set(shown) == set(truth) == {(TASK0, "w"), (TASK0, "b")}
    for key in truth:
        np.testing.assert_array_equal(shown[key], truth[key])
    b = float(truth[(TASK0, "b")])
    assert "%s b float32[] = %.4g" % (TASK0, b) in repr(view)
    assert "%s w float32[4, 3] mean=1" % TASK0 in repr(view)
    root = assert_crisp_and_hoverable(view)
    assert len(marks(root, "cell")) == 12 and len(marks(root, "scalar")) == 1
    assert_bundle(view)
    view.close()


def test_variable_view_picks_weight_matrices_and_lets_the_learner_choose(training):
    view = VariableStateView(training.cluster, refresh=0)
    assert len(view.variables) == 14  # 4 weights, 8 Adam slots, 2 Adam scalars
    assert [k[1] for k in view.picked()][:2] == ["w2", "w1"]  # the largest first
    assert not any("Adam" in k[1] or "power" in k[1] for k in view.picked())
    root = svg_of(view)
    assert [p.get("data-variable") for p in marks(root, "panel")] == \
        [k[1] for k in view.picked()]
    key = [k for k in view.variables if k[1] == "beta1_power"][0]
    view.panels.value = (key,)
    root = svg_of(view)
    assert [p.get("data-variable") for p in marks(root, "panel")] == ["beta1_power"]
    assert ", 1 in panels" in texts(root)[0] and view.status.value.endswith(", 1 in panels")
    assert not view.auto_pick
    view.poll()  # the learner's choice survives a poll
    assert view.picked() == [key]
    view.default_button.click()
    assert view.auto_pick and len(view.picked()) == 4
    view.close()


def test_variable_view_counters_agree(step):
    view = VariableStateView(step.cluster, refresh=0)
    for _ in range(3):
        view.poll()
    assert view.polls == 4
    title = texts(svg_of(view))[0]
    assert "poll 4 at %s" % view.polled_at in title and view.status.value.startswith(
        "poll 4 at %s" % view.polled_at)
    history = [e.text for e in marks(svg_of(view), "history-title")]
    assert history and all(h == "history, 4 polls" for h in history)
    points = marks(svg_of(view), "history-point")
    assert len(points) == 4 * len(view.picked())
    assert title_of(points[-1]).startswith("poll 4,")
    view.close()


def test_variable_view_polls_in_the_background_and_stops_on_close(step):
    view = VariableStateView(step.cluster, variables=["b"], refresh=0.05, timeout=0.5)
    assert view.thread.daemon and view.thread.is_alive()
    assert set(view.values()) == {(TASK0, "b")}
    before = float(view.values()[(TASK0, "b")])
    new = step.sess.run(step.update_b)  # the kernel stays free while the view polls
    deadline = time.monotonic() + 10
    while float(view.values()[(TASK0, "b")]) != new and time.monotonic() < deadline:
        time.sleep(0.02)
    assert float(view.values()[(TASK0, "b")]) == new == before + 1
    history = [v for _, v, _ in view.history[(TASK0, "b")]]
    assert history[0] == before and history[-1] == new
    view.close()
    assert not view.thread.is_alive()
    assert view.thread not in threading.enumerate()


def test_variable_view_of_a_local_session():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="v")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        view = VariableStateView(sess, refresh=0)
        (key, value), = view.values().items()
        assert key == ("/job:localhost/replica:0/task:0", "v")
        np.testing.assert_array_equal(value, [[1.0, 2.0], [3.0, 4.0]])
        cells = marks(svg_of(view), "cell")
        assert len(cells) == 4 and "v[1:2, 1:2]: mean 4" in title_of(cells[-1])
        view.close()


def test_variable_view_of_a_trace(training):
    view = VariableStateView(training.md)
    assert view.thread is None and view.mode.disabled
    assert {k[1] for k in view.variables} == {"w1", "b1", "w2", "b2", "w1/Adam", "w1/Adam_1",
                                              "b1/Adam", "b1/Adam_1", "w2/Adam", "w2/Adam_1",
                                              "b2/Adam", "b2/Adam_1", "beta1_power",
                                              "beta2_power"}
    w1 = view.variables[("/job:ps/replica:0/task:0", "w1")]
    assert w1["shape"] == [2, 16] and w1["bytes"] == 128
    assert [t for _, t, _ in w1["writes"]] == ["ApplyAdam"]
    root = assert_crisp_and_hoverable(view)
    assert len(marks(root, "no-value")) == len(view.picked()) == 4
    assert "no value in a trace" in repr(view)
    view.close()


# -- ClusterView ------------------------------------------------------------------------------------------
def test_cluster_view_of_in_process_servers(step):
    view = ClusterView(step.cluster)
    assert [t["up"] for t in view.tasks] == [True, True]
    assert view.start_button.disabled  # not started by the launcher
    assert repr(view) == ("ClusterView(2 tasks, 2 answering: %s up [CPU:0] holds [b, w]; "
                          "/job:local/replica:0/task:1 up [CPU:0] holds [])" % TASK0)
    assert "CPU:0" in view.table.value and "52 B" in view.table.value  # 48 + 4 bytes
    root = assert_crisp_and_hoverable(view)
    # A CPU has no real memory budget: no bar, the bytes its variables hold.
    assert not marks(root, "memory-bar")
    assert [e.text for e in marks(root, "memory-text")] == ["variables hold 52 B",
                                                            "variables hold 0 B"]
    assert_bundle(view)
    view.close()


def test_cluster_view_says_when_it_refreshed(step):
    view = ClusterView(step.cluster)
    assert "(refresh 1)" in texts(svg_of(view))[0]
    view.refresh_button.click()
    title = texts(svg_of(view))[0]
    assert "refreshed at %s (refresh 2)" % view.refreshed_at in title
    assert "refresh 2" in view.status.value
    view.close()


def test_cluster_view_lists_long_names_inside_the_card(step):
    view = ClusterView(step.cluster)
    resources = view.tasks[0]["resources"][CPU0]["local"]   # the default container: the job's name, as in TF
    for i in range(12):
        resources["model/tower_3/encoder/layer_%d/attention/query/kernel/Adam_1" % i] = {
            "kind": "Variable", "dtype": "float32", "shape": [512, 512]}
    view.redraw()
    root = svg_of(view)
    card = [c for c in marks(root, "task-card") if c.get("data-task") == TASK0][0]
    bottom = float(card.get("y")) + float(card.get("height"))
    held = marks(root, "held")
    assert len(held) == 8
    (more,) = marks(root, "held-more")
    assert more.text == "... and 6 more (see the table)" and float(more.get("y")) < bottom - 4
    for e in held:
        assert len(e.text) * MIN_TEXT_PX * MONO_EM <= float(card.get("width")) - 20
        if "kernel" in e.get("data-name"):
            assert e.text.startswith("…/") and e.text.endswith("float32[512, 512]")
    view.close()


def test_cluster_view_shows_a_gpus_memory_against_its_budget():
    g = tf.Graph()
    with g.as_default(), tf.device("/gpu:0"):
        v = tf.Variable(tf.ones([256, 256]), name="v")
    config = tf.ConfigProto(device_count={"GPU": 1})
    config.gpu_options.virtual_memory_limit_mb = 64
    with tf.Session(graph=g, config=config) as sess:
        sess.run(v.initializer)
        view = ClusterView(sess)
        root = svg_of(view)
        (bar,) = marks(root, "memory-bar")
        assert "of 67.1 MB in use" in title_of(bar)
        (used,) = marks(root, "memory-used")
        fraction = float(used.get("width")) / float(bar.get("width"))
        assert fraction == pytest.approx(256 * 256 * 4 / (64 << 20), abs=0.02)
        view.close()


def test_cluster_view_of_a_trace(training):
    view = ClusterView(training.md)
    assert [t["task"] for t in view.tasks] == ["/job:ps/replica:0/task:0",
                                               "/job:worker/replica:0/task:0",
                                               "/job:worker/replica:0/task:1"]
    assert view.refresh_button.disabled and "from a trace" in texts(svg_of(view))[0]
    assert len(marks(svg_of(view), "held")) == 8 and "w1" in repr(view)
    view.close()


@pytest.mark.slow
def test_cluster_view_buttons_stop_and_start_a_local_cluster():
    from minitf.distributed.launcher import LocalCluster
    cluster = LocalCluster({"worker": 2}, echo=False)
    try:
        view = ClusterView(cluster)
        assert not view.stop_button.disabled
        assert repr(view).startswith("ClusterView(2 tasks, 2 answering")
        view.stop_button.click()
        assert not any(cluster.is_alive(*t) for t in cluster.tasks())
        assert repr(view).startswith("ClusterView(2 tasks, 0 answering")
        assert len([c for c in marks(svg_of(view), "task-card") if c.get("data-up") == "no"]) == 2
        view.start_button.click()
        assert repr(view).startswith("ClusterView(2 tasks, 2 answering")
        view.close()
    finally:
        cluster.stop()


# -- the runtime stays free of widget code --------------------------------------------------------
def test_the_runtime_never_imports_widget_libraries():
    code = ("import sys, minitf.compat.v1 as tf, minitf.timeline\n"
            "with tf.Session() as s: s.run(tf.constant(1) + 1)\n"
            "bad = [m for m in ('ipywidgets', 'matplotlib', 'minitf.widgets') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_variable_view_draws_one_history_large(step):
    view = VariableStateView(step.cluster, variables=["b"], refresh=0)
    assert list(view.history_of.options) == ["all", "local/task:0 b"]
    assert not marks(svg_of(view), "history-chart-line")
    step.sess.run(step.update_b)
    view.poll()
    view.history_of.value = "local/task:0 b"
    root = svg_of(view)
    assert [e.text for e in marks(root, "history-chart-title")] == [
        "history of b on local/task:0: 2 polls"]
    points = marks(root, "history-chart-point")
    assert len(points) == 2 and title_of(points[1]).startswith("poll 2,")
    assert_crisp_and_hoverable(view)  # the history lines too
    view.close()
