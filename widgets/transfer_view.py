"""TransferView: a step as a trace, one lane per device, with every tensor
that crossed between devices drawn as an arrow (the idea of TF's Timeline
and of Perfetto).

::

    md = tf.RunMetadata()
    sess.run(train, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                          output_partition_graphs=True),
             run_metadata=md)
    view = TransferView(md)         # or [md1, md2, ...]; real TF's RunMetadata works too
    view.export_chrome_trace("step.json")   # open it in https://ui.perfetto.dev

What the picture shows:

* each device's lane has a state strip: **running** (solid, the device's
  colour), **waiting** (stripes: a ``_Recv`` waiting for another task, a
  queue, a reader) and **idle** (grey); below it, every op as a bar;
* a transfer is an arrow from the moment the *sender's value was ready* to
  the moment it *arrived*; a receiver that asked earlier waited (its
  ``_Recv`` bar is striped) - the table says for how long;
* control signals (1-byte "done" tokens of control dependencies between
  tasks) are hidden unless you tick "show control signals";
* "window (ms)" zooms into part of the step; picking a transfer in the list
  highlights its arrow and says everything the trace knows about it;
* under the lanes, the bytes per link: tensor bytes and bytes on the wire
  (smaller when ``graph_options.transfer_compression`` is on).

Hover any mark for its details.
"""

import json

import ipywidgets as widgets

from .axis import format_tick, ticks
from .base import SvgView, fixed_width, html_table
from .chrome_trace import chrome_trace
from .colors import EDGE, NEUTRAL, device_colors, lighter
from .drawing import Drawing, chars_that_fit, text_width
from .lanes import RUNNING, WAITING, is_waiting, lane_segments, stack_rows, state_totals
from .names import (device_sort_key, format_bytes, format_micros, short_device,
                    shorten_name, task_of)
from .step_trace import OpRun, read_steps

LABEL_W = 210        # the lane labels' column (px)
MAX_ROWS = 3         # op rows per lane; more overlapping ops share the last row
ROW_H, ROW_GAP = 11, 2


def link_totals(transfers):
    """``{(src, dst): {"transfers", "bytes", "wire_bytes", "control", "micros"}}``."""
    totals = {}
    for t in transfers:
        s = totals.setdefault(t.link, {"transfers": 0, "bytes": 0, "wire_bytes": 0,
                                       "control": 0, "micros": 0})
        s["transfers"] += 1
        s["bytes"] += t.bytes
        s["wire_bytes"] += t.wire_bytes
        s["control"] += 1 if t.control else 0
        s["micros"] += t.wire_micros
    return dict(sorted(totals.items(), key=lambda kv: (device_sort_key(kv[0][0]),
                                                       device_sort_key(kv[0][1]))))


def transfer_title(t, t0):
    """The tooltip of a transfer's arrow (and of its row)."""
    lines = ["%s%s: %s -> %s" % ("control signal " if t.control else "", t.tensor,
                                 short_device(t.src_device), short_device(t.dst_device))]
    if t.wire_bytes != t.bytes:
        lines.append("%s, %s on the wire (%.2gx %s)" % (
            format_bytes(t.bytes), format_bytes(t.wire_bytes),
            t.compression if t.compression >= 1 else 1 / t.compression,
            "smaller" if t.compression >= 1 else "larger"))
    else:
        lines.append(format_bytes(t.bytes))
    lines.append("sender ready at %.3f ms (%s)" % ((t.ready - t0) / 1000.0, t.ready_from))
    lines.append("arrived at %.3f ms: %s in transit" % ((t.arrived - t0) / 1000.0,
                                                      format_micros(t.wire_micros)))
    if t.asked is not None:
        lines.append("receiver asked at %.3f ms and waited %s for the sender" % (
            (t.asked - t0) / 1000.0, format_micros(t.waited)))
    if t.fetch:
        lines.append("a fetched result, returned to the master")
    return "\n".join(lines)


class TransferView(SvgView):
    """Ops per device over time and the tensors that crossed between them."""

    css_class = "minitf-transfer-view"

    def __init__(self, run_metadata, width=900, show_control=False):
        self.steps = read_steps(run_metadata)
        self.ops = [o for s in self.steps for o in s.ops]
        self.transfers = sorted((t for s in self.steps for t in s.transfers),
                                key=lambda t: (t.step, t.ready, t.tensor))
        self.colors = device_colors(d for s in self.steps for d in s.devices())
        self.selected = None
        n_control = sum(1 for t in self.transfers if t.control)
        options = [("all steps", 0)] + [("step %d" % i, i)
                                        for i in range(1, len(self.steps) + 1)]
        self.step_selector = widgets.Dropdown(description="show", options=options,
                                              value=0 if len(self.steps) > 1 else 1,
                                              disabled=len(self.steps) == 1)
        self.control_toggle = widgets.Checkbox(
            value=bool(show_control), indent=False, disabled=n_control == 0,
            description="show control signals (%d)" % n_control)
        self.window = widgets.FloatRangeSlider(
            description="window (ms)", min=0.0, max=1.0, value=(0.0, 1.0), step=0.001,
            continuous_update=False, readout_format=".3f",
            style={"description_width": "initial"}, layout=widgets.Layout(width="460px"))
        self.rows_header = widgets.HTML()
        self.rows = widgets.Select(options=[("(none)", -1)], value=-1, rows=8,
                                   layout=widgets.Layout(width="100%"))
        self.rows.add_class("minitf-rows")
        self.transfer_details = widgets.HTML()
        self.totals = widgets.HTML()
        super().__init__(controls=[self.step_selector, self.control_toggle, self.window],
                         details=[self.rows_header, self.rows, self.transfer_details,
                                  self.totals], width=width)
        self._reset_window()
        self._refill_rows()
        self.step_selector.observe(self._on_step, names="value")
        self.control_toggle.observe(self._on_filter, names="value")
        self.window.observe(lambda change: self.redraw(), names="value")
        self.rows.observe(self._on_pick, names="value")
        self.redraw()

    # -- what the view shows ------------------------------------------------------------------
    def shown_steps(self):
        step = self.step_selector.value
        return [s for s in self.steps if step in (0, s.step)]

    def shown_ops(self):
        step = self.step_selector.value
        return [o for o in self.ops if step in (0, o.step)]

    def step_transfers(self):
        """Every transfer of the selected step(s), control signals included."""
        step = self.step_selector.value
        return [t for t in self.transfers if step in (0, t.step)]

    def shown_transfers(self):
        """The transfers drawn and listed: control signals only when shown."""
        return [t for t in self.step_transfers()
                if self.control_toggle.value or not t.control]

    def hidden_control_signals(self):
        return [t for t in self.step_transfers() if t.control and not self.control_toggle.value]

    def origin(self):
        """µs of the selected step(s)' first event: time 0 on the axis."""
        steps = self.shown_steps()
        starts = [s.start for s in steps if s.ops or s.transfers]
        return min(starts) if starts else 0

    def span(self):
        steps = self.shown_steps()
        ends = [s.end for s in steps if s.ops or s.transfers]
        return max(1, (max(ends) if ends else 1) - self.origin())

    def window_micros(self):
        """The time window drawn, in µs since the epoch."""
        lo, hi = self.window.value
        t0 = self.origin()
        return t0 + int(lo * 1000), t0 + int(max(hi * 1000, lo * 1000 + 1))

    def lanes(self):
        """The devices that get a lane, in job/task/device order."""
        found = {o.device for o in self.shown_ops()}
        for t in self.step_transfers():
            found |= {t.src_device, t.dst_device}
        return sorted(found, key=device_sort_key)

    def lane_ops(self, device):
        """The ops drawn on a lane, plus a waiting bar for each transfer whose
        receiver is not in the trace as an op (real TF records its waits as
        ``RecvTensor`` entries, not as ``_Recv`` ops)."""
        ops = [o for o in self.shown_ops() if o.device == device]
        names = {o.name for o in ops}
        for t in self.step_transfers():
            if t.dst_device == device and t.asked is not None and t.receiver not in names:
                ops.append(OpRun(t.step, device, "receive %s" % t.tensor, "RecvTensor",
                                 t.asked, t.arrived, [(None, None, t.bytes)]))
        return ops

    def lane_segments(self, device):
        """Running / waiting / idle segments of a lane over the selected step(s)."""
        t0 = self.origin()
        arriving = [t for t in self.step_transfers() if t.dst_device == device]
        return lane_segments(self.lane_ops(device), arriving, t0, t0 + self.span())

    def lane_states(self):
        """``{device: {"running": µs, "waiting": µs, "idle": µs}}``."""
        return {d: state_totals(self.lane_segments(d)) for d in self.lanes()}

    # -- reacting to the controls ----------------------------------------------------------------
    def _reset_window(self):
        span_ms = self.span() / 1000.0
        # max before min/value, so the slider never holds an invalid range
        self.window.max = max(span_ms, self.window.min + 1e-3)
        self.window.step = max(span_ms / 500.0, 0.001)
        self.window.value = (0.0, span_ms)

    def _refill_rows(self):
        shown = self.shown_transfers()
        t0 = self.origin()
        options = [("(none)", -1)] + [(self._row_label(t, t0), i)
                                      for i, t in enumerate(shown)]
        keep = shown.index(self.selected) if self.selected in shown else -1
        self._shown = shown
        self.rows.options = options
        self.rows.value = keep
        self.selected = shown[keep] if keep >= 0 else None
        self.rows.rows = min(12, len(options))
        hidden = len(self.hidden_control_signals())
        header = self.ROW_FORMAT % ("from", "to", "tensor", "bytes", "on wire", "ratio",
                                    "waited", "transit")
        self.rows_header.value = (
            "<b>Transfers (%d)</b>%s - pick one to highlight its arrow.<pre style='margin:2px 0 0"
            " 0;font-size:12px'>%s</pre>" % (
                len(shown), " and %d control signal%s hidden" % (hidden, "" if hidden == 1
                                                                else "s") if hidden else "",
                header.replace("&", "&amp;").replace("<", "&lt;"))
            if shown else "<i>No transfers in this step: every tensor stayed on its "
                          "device.</i>")
        self._fill_totals()
        self._fill_details()

    def _fill_totals(self):
        transfers = self.step_transfers()
        totals = link_totals(transfers)
        self.totals.value = html_table(
            ["link", "transfers", "tensor bytes", "bytes on the wire", "ratio",
             "of which control signals"],
            [("%s → %s" % (short_device(a), short_device(b)), s["transfers"], s["bytes"],
              s["wire_bytes"], "%.2f" % (s["bytes"] / s["wire_bytes"]) if s["wire_bytes"]
              else "-", s["control"]) for (a, b), s in totals.items()],
            caption="Totals per link (every transfer of the step)") if transfers else ""

    def _fill_details(self):
        t = self.selected
        if t is None:
            self.transfer_details.value = ""
            return
        self.transfer_details.value = "<pre class='minitf-transfer-details' style='" \
            "font-size:12px;margin:4px 0'>%s</pre>" % transfer_title(t, self.origin()).replace(
                "&", "&amp;").replace("<", "&lt;")

    ROW_FORMAT = "%-19s %-19s %-28s %8s %8s %5s %8s %8s"

    @classmethod
    def _row_label(cls, t, t0):
        return fixed_width(cls.ROW_FORMAT % (
            shorten_name(short_device(t.src_device), 19),
            shorten_name(short_device(t.dst_device), 19), shorten_name(t.tensor, 28),
            format_bytes(t.bytes), format_bytes(t.wire_bytes),
            "%.1fx" % t.compression if t.wire_bytes != t.bytes else "",
            format_micros(t.waited), format_micros(t.wire_micros)))

    def _on_step(self, change):
        self.selected = None
        self._reset_window()
        self._refill_rows()
        self.redraw()

    def _on_filter(self, change):
        self._refill_rows()
        self.redraw()

    def _on_pick(self, change):
        i = self.rows.value
        self.selected = self._shown[i] if i is not None and 0 <= i < len(self._shown) else None
        self._fill_details()
        self.redraw()

    def select(self, tensor):
        """Highlight the first shown transfer of ``tensor`` (as picking its row does)."""
        for i, t in enumerate(self._shown):
            if t.tensor == tensor:
                self.rows.value = i
                return t
        raise KeyError("no shown transfer of %r" % tensor)

    # -- export ---------------------------------------------------------------------------------
    def export_chrome_trace(self, path):
        """Write the selected step(s) as a Chrome trace (JSON) to ``path``:
        open it in https://ui.perfetto.dev or chrome://tracing. Returns the path.

        One process per task, one thread per device (its ops), a "waiting"
        thread per device (its Recv and queue waits) and a flow arrow per
        transfer from the sender's ready time to the arrival - the arrows of
        this picture. Control signals are in the file too (category
        "control"), so Perfetto can show or hide them."""
        with open(path, "w") as f:
            json.dump(chrome_trace(self.shown_steps()), f, indent=1)
        return path

    # -- the picture ----------------------------------------------------------------------------
    def draw(self):
        W = self.width
        x0, x1 = LABEL_W, W - 14
        lo, hi = self.window_micros()
        t0 = self.origin()
        devices = self.lanes()
        shown = [t for t in self.shown_transfers() if t.arrived >= lo and t.ready <= hi]
        scale = (x1 - x0) / float(hi - lo)

        def x(us):
            return x0 + (min(max(us, lo), hi) - lo) * scale

        # Each lane: a state strip, one row of waiting ops (they overlap, all
        # alike), then rows of running ops (overlapping ones stacked).
        lane_rows, lane_top, lane_h = {}, {}, {}
        y = 96
        for dev in devices:
            ops = [o for o in self.lane_ops(dev) if o.end >= lo and o.start <= hi]
            waits = [o for o in ops if is_waiting(o.type)]
            running = [o for o in ops if not is_waiting(o.type)]
            rows = stack_rows(running, MAX_ROWS)
            first = 1 if waits else 0
            rows = {k: r + first for k, r in rows.items()}
            rows.update({id(o): 0 for o in waits})
            n_rows = max(rows.values(), default=0) + 1
            lane_rows[dev] = (ops, rows)
            lane_top[dev] = y
            lane_h[dev] = max(50, 18 + n_rows * (ROW_H + ROW_GAP) + 4)
            y += lane_h[dev] + 6
        lanes_bottom = y
        totals = link_totals(self.step_transfers())
        totals_h = 40 + 30 * len(totals) if totals else 0
        d = Drawing(W, lanes_bottom + totals_h + 10)

        # Title and legend.
        hidden = len(self.hidden_control_signals())
        steps = self.shown_steps()
        what = "step %d" % steps[0].step if len(steps) == 1 else "%d steps" % len(steps)
        d.text(8, 18, "%s%s: %d ops on %d devices, %d transfers%s" % (
            what, " (real TensorFlow)" if steps[0].source == "tensorflow" else "",
            len(self.shown_ops()), len(devices), len(self.shown_transfers()),
            " (%d control signal%s hidden)" % (hidden, "" if hidden == 1 else "s")
            if hidden else ""), size=13, weight="bold", css="title")
        lx = 8
        for label, kind in (("running", RUNNING), ("waiting (Recv, queue)", WAITING),
                            ("idle", "idle")):
            self._state_swatch(d, lx, 28, 22, 10, kind, "#555")
            d.text(lx + 27, 37, label, css="legend-item", data={"item": kind})
            lx += 27 + text_width(label, mono=False) + 14
        for label, color, dash in (("transfer between tasks", EDGE["network"], None),
                                   ("copy between devices", EDGE["copy"], None),
                                   ("control signal", EDGE["control"], (4, 3))):
            d.arrow(lx, 33, lx + 24, 33, color=color, width=2, dash=dash)
            d.text(lx + 29, 37, label, css="legend-item")
            lx += 29 + text_width(label, mono=False) + 14

        # Time axis and grid.
        span_ms = (hi - lo) / 1000.0
        base_ms = (lo - t0) / 1000.0
        values = ticks(base_ms, base_ms + span_ms, x1 - x0, 70)
        step = values[1] - values[0] if len(values) > 1 else span_ms
        d.text(8, 72, "ms since the %s started" % ("step" if len(steps) == 1 else
                                                   "first step"), color="#555")
        for v in values:
            tx = x0 + (v - base_ms) * 1000 * scale
            d.line(tx, 78, tx, lanes_bottom - 6, stroke="#e4e4e4")
            d.text(tx, 76, format_tick(v, step), anchor="middle", color="#444",
                   css="tick")
        if len(steps) > 1:
            for s in steps:
                if lo <= s.start <= hi:
                    d.line(x(s.start), 80, x(s.start), lanes_bottom - 6, stroke="#555",
                           dash=(2, 3))
                    d.text(x(s.start) + 3, 90, "step %d" % s.step, color="#333",
                           css="step-mark")

        # Lanes.
        for dev in devices:
            top, h = lane_top[dev], lane_h[dev]
            color = self.colors.get(dev, NEUTRAL)
            segments = [s for s in self.lane_segments(dev) if s.end >= lo and s.start <= hi]
            states = state_totals(self.lane_segments(dev))
            d.rect(4, top, W - 8, h, fill="#fafafa", stroke="#e0e0e0", radius=3)
            d.rect(8, top + 6, 6, h - 12, fill=color)
            d.text(20, top + 16, shorten_name(short_device(dev), chars_that_fit(LABEL_W - 26)),
                   mono=True, weight="bold", title=dev, css="lane-label", data={"device": dev})
            d.text(20, top + 30, "run %s · wait %s" % (
                format_micros(states[RUNNING]), format_micros(states[WAITING])),
                color="#555", css="lane-totals", data={"device": dev})
            d.text(20, top + 43, "idle %s" % format_micros(states["idle"]), color="#555")
            for s in segments:
                sx, ex = x(s.start), x(s.end)
                self._state_swatch(d, sx, top + 4, max(ex - sx, 0.8), 8, s.state, color,
                                   title="%s %s, %.3f-%.3f ms" % (
                                       s.state, format_micros(s.micros), (s.start - t0) / 1000.0,
                                       (s.end - t0) / 1000.0),
                                   css="state state-" + s.state, data={"device": dev})
            ops, rows = lane_rows[dev]
            for o in ops:
                oy = top + 16 + rows[id(o)] * (ROW_H + ROW_GAP)
                sx, ex = x(o.start), x(o.end)
                waiting = is_waiting(o.type)
                outputs = ", ".join("%s%s %s" % (dt or "", shape if shape is not None else "",
                                                 format_bytes(b)) for dt, shape, b in o.outputs)
                d.rect(sx, oy, max(ex - sx, 1.0), ROW_H,
                       fill=color, hatch=color if waiting else None,
                       stroke="#666" if waiting else None, stroke_width=0.5,
                       title="%s (%s) on %s\nstarted at %.3f ms, took %s%s%s" % (
                           o.name, o.type, short_device(dev), (o.start - t0) / 1000.0,
                           format_micros(o.micros), "\n" + outputs if outputs else "",
                           "\nwaiting, not computing" if waiting else ""),
                       css="op op-waiting" if waiting else "op op-running",
                       data={"op": o.name, "device": dev})

        # Transfers: arrows from the sender's ready time to the arrival.
        def lane_mid(dev):
            return lane_top[dev] + 16 + ROW_H / 2.0

        picked = self.selected if self.selected in shown else None
        for t in [t for t in shown if t is not picked]:
            color = EDGE["control"] if t.control else EDGE[t.kind]
            ax, bx = x(t.ready), x(t.arrived)
            ay, by = lane_mid(t.src_device), lane_mid(t.dst_device)
            title = transfer_title(t, t0)
            faded = 0.3 if picked is not None else 0.9
            d.circle(ax, ay, 2.5, fill=color, title=title, css="transfer-start")
            d.arrow(ax, ay, bx, by, color=color, width=1.6, dash=(4, 3) if t.control else None,
                    opacity=faded, title=title,
                    css="transfer transfer-%s%s" % (t.kind, " transfer-control" if t.control
                                                    else ""), data=self._mark_data(t, t0))
        if picked is not None:  # drawn last, on top of the others
            t = picked
            ax, bx = x(t.ready), x(t.arrived)
            ay, by = lane_mid(t.src_device), lane_mid(t.dst_device)
            if t.asked is not None and t.waited:
                d.line(x(t.asked), by + 7, x(t.ready), by + 7, stroke="#111", stroke_width=2,
                       dash=(3, 2), title="waited %s for the sender" % format_micros(t.waited),
                       css="wait-mark")
            d.arrow(ax, ay, bx, by, color="#111", width=3.2, head=10,
                    title=transfer_title(t, t0), css="transfer transfer-selected",
                    data=self._mark_data(t, t0))
            self._label_transfer(d, t, ax, ay, bx, by, W)

        if totals:
            self._draw_totals(d, totals, lanes_bottom + 10, x1)
        return d

    @staticmethod
    def _mark_data(t, t0):
        """What a transfer's arrow carries for scripts and tests (µs since time 0)."""
        return {"tensor": t.tensor, "kind": t.kind, "src": t.src_device, "dst": t.dst_device,
                "ready": t.ready - t0, "arrived": t.arrived - t0, "bytes": t.bytes,
                "wire-bytes": t.wire_bytes}

    @staticmethod
    def _state_swatch(d, x, y, w, h, state, color, title="", css="", data=None):
        if state == RUNNING:
            d.rect(x, y, w, h, fill=color, title=title, css=css, data=data)
        elif state == WAITING:
            d.rect(x, y, w, h, fill="white", hatch=color, title=title, css=css, data=data)
        else:
            d.rect(x, y, w, h, fill="#e9e9e9", title=title, css=css, data=data)

    @staticmethod
    def _label_transfer(d, t, ax, ay, bx, by, width):
        text = "%s · %s%s · %s in transit" % (
            t.tensor, format_bytes(t.bytes),
            " (%s on the wire)" % format_bytes(t.wire_bytes) if t.wire_bytes != t.bytes else "",
            format_micros(t.wire_micros))
        w = text_width(text, 11) + 8
        cx = min(max((ax + bx) / 2.0, LABEL_W + w / 2), width - 10 - w / 2)
        cy = (ay + by) / 2.0
        d.rect(cx - w / 2, cy - 9, w, 16, fill="white", stroke="#111", radius=3,
               css="transfer-label")
        d.text(cx, cy + 3, text, mono=True, anchor="middle", color="#111",
               css="transfer-label-text")

    def _draw_totals(self, d, totals, top, x1):
        labels = {link: "%s → %s" % (short_device(link[0]), short_device(link[1]))
                  for link in totals}
        x0 = 8 + max(text_width(label) for label in labels.values()) + 12
        bar_x1 = x1 - 250
        if bar_x1 - x0 < 120:  # very long device names: shorten them to keep bars
            x0 = bar_x1 - 120
        d.text(8, top + 14, "bytes per link", size=12, weight="bold")
        d.rect(x0, top + 5, 14, 9, fill=lighter(EDGE["network"], 0.6))
        d.text(x0 + 18, top + 14, "tensor bytes")
        d.rect(x0 + 120, top + 5, 14, 9, fill=EDGE["network"])
        d.text(x0 + 138, top + 14, "bytes on the wire")
        biggest = max(max(s["bytes"], s["wire_bytes"]) for s in totals.values()) or 1
        scale = (bar_x1 - x0) / float(biggest)
        values = ticks(0, biggest, bar_x1 - x0, 80)
        axis_y = top + 30 + 30 * len(totals)
        for v in values:
            vx = x0 + v * scale
            d.line(vx, top + 22, vx, axis_y - 4, stroke="#e4e4e4")
            d.text(vx, axis_y + 8, format_bytes(v), anchor="middle", color="#444",
                   css="totals-tick")
        for i, ((a, b), s) in enumerate(totals.items()):
            y = top + 26 + 30 * i
            kind = "network" if task_of(a) != task_of(b) else "copy"
            label = labels[(a, b)]
            d.text(8, y + 16, shorten_name(label, chars_that_fit(x0 - 20)), mono=True,
                   title=label, css="link-label")
            title = "%s: %d transfers (%d control), %s of tensors, %s on the wire" % (
                label, s["transfers"], s["control"], format_bytes(s["bytes"]),
                format_bytes(s["wire_bytes"]))
            d.rect(x0, y + 2, max(1, s["bytes"] * scale), 10,
                   fill=lighter(EDGE[kind], 0.6), title=title, css="link-bytes",
                   data={"bytes": s["bytes"]})
            d.rect(x0, y + 13, max(1, s["wire_bytes"] * scale), 10, fill=EDGE[kind],
                   title=title, css="link-wire-bytes", data={"bytes": s["wire_bytes"]})
            d.text(bar_x1 + 8, y + 16, "%s → %s on the wire, %d transfer%s" % (
                format_bytes(s["bytes"]), format_bytes(s["wire_bytes"]), s["transfers"],
                "" if s["transfers"] == 1 else "s"), color="#333", title=title)

    def __repr__(self):
        totals = link_totals(self.transfers)
        links = "; ".join("%s -> %s: %d transfers, %d bytes" % (a, b, t["transfers"], t["bytes"])
                          for (a, b), t in totals.items())
        return "TransferView(%d step%s, %d ops, %d transfers, %d bytes%s)" % (
            len(self.steps), "" if len(self.steps) == 1 else "s", len(self.ops),
            len(self.transfers), sum(t.bytes for t in self.transfers),
            "; " + links if links else "")
