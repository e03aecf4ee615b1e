"""Every widget, rendered by JupyterLab in a real (headless) Chromium.

The notebook ``widgets_demo.ipynb`` starts a 1 ps + 2 worker LocalCluster,
traces a data-parallel training step and shows PlacementView, TransferView,
VariableStateView and ClusterView; its last cell stops the cluster. This
test opens it, runs all cells, and checks in the DOM, as a learner's
browser has it:

* each view shows an SVG, drawn at exactly its own size (never scaled),
  its text at 11 px or more on screen, and every mark carries a tooltip;
* the toggles and pickers change the drawing (checked by the SVG's
  content: marks that appear, disappear or change);
* the browser logged no errors.

Screenshots of every view go to ``tests/browser/artifacts/``.
"""

import time
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

VIEWS = ["minitf-placement-view", "minitf-transfer-view", "minitf-variable-view",
         "minitf-cluster-view"]

KERNEL_READY = """() => {
    const app = window.jupyterapp;
    const panel = app && app.shell.currentWidget;
    const ctx = panel && panel.sessionContext;
    return !!(panel && panel.context && panel.context.isReady && ctx && ctx.session
              && ctx.session.kernel && ctx.session.kernel.status === "idle");
}"""

# For one view: its SVG's drawn and shown sizes, its smallest text on screen,
# how many marks it has and how many of them lack a tooltip.
SVG_STATS = """(cls) => {
    const svg = document.querySelector("." + cls + " svg.minitf-svg");
    if (!svg) return null;
    const box = svg.getBoundingClientRect();
    const drawn = svg.width.baseVal.value;
    const scale = box.width / drawn;
    let smallest = 1e9;
    for (const t of svg.querySelectorAll("text")) {
        const px = parseFloat(getComputedStyle(t).fontSize) * scale;
        smallest = Math.min(smallest, px);
    }
    const marks = [...svg.querySelectorAll("rect[class], circle[class], path[class], polygon[class]")]
        .filter(e => !["selected", "transfer-label", "soft-placed"].includes(e.getAttribute("class")));
    const untitled = marks.filter(e => !e.querySelector("title")).length;
    const container = svg.closest(".minitf-scroll").getBoundingClientRect();
    const output = svg.closest(".jp-OutputArea-output").getBoundingClientRect();
    return {drawn: drawn, shown: box.width, scale: scale, smallest: smallest,
            marks: marks.length, untitled: untitled, titles: svg.querySelectorAll("title").length,
            container: container.width, output: output.width,
            imgs: document.querySelectorAll("." + cls + " img").length};
}"""

COUNT = """([cls, sel]) => document.querySelector("." + cls + " svg.minitf-svg")
                                .querySelectorAll(sel).length"""
ATTRS = """([cls, sel, attr]) => [...document.querySelector("." + cls + " svg.minitf-svg")
                                .querySelectorAll(sel)].map(e => e.getAttribute(attr))"""
TITLE = """(cls) => document.querySelector("." + cls + " svg.minitf-svg text.title").textContent"""


def _svg(page, cls):
    return page.evaluate("(cls) => document.querySelector('.' + cls + ' svg.minitf-svg')"
                         ".outerHTML", cls)


def _wait_changed(page, cls, before, timeout=20_000):
    """Wait until the view's SVG differs from ``before``; return the new SVG."""
    page.wait_for_function("([cls, before]) => { const s = document.querySelector("
                           "'.' + cls + ' svg.minitf-svg'); return s && s.outerHTML !== before; }",
                           arg=[cls, before], timeout=timeout)
    return _svg(page, cls)


def test_every_view_renders_and_reacts_in_jupyterlab(jupyterlab, page):
    base, _ = jupyterlab
    ARTIFACTS.mkdir(exist_ok=True)
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    started = time.monotonic()
    page.goto(base + "/lab/tree/widgets_demo.ipynb")
    page.wait_for_function(KERNEL_READY, timeout=90_000)
    # Start "run all" but do not await its promise (awaiting it can hang).
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.get_by_text("all views shown").wait_for(timeout=180_000)
    for cls in VIEWS:
        page.wait_for_selector("." + cls + " svg.minitf-svg", timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "notebook.png"), full_page=True)

    # Crisp and hoverable: at 100% of the drawn size, text >= 11 px, tooltips.
    for cls in VIEWS:
        view = page.locator("." + cls).first
        view.evaluate("e => e.scrollIntoView({block: 'start'})")
        stats = page.evaluate(SVG_STATS, cls)
        assert stats is not None, "%s: no SVG" % cls
        assert abs(stats["scale"] - 1.0) < 1e-3, (cls, stats)  # never stretched or shrunk
        assert stats["container"] <= stats["output"] + 1, (cls, stats)  # capped at the output
        assert stats["smallest"] >= 11 - 1e-3, (cls, stats)
        assert stats["marks"] >= 3 and stats["untitled"] == 0, (cls, stats)
        assert stats["titles"] >= stats["marks"] and stats["imgs"] == 0, (cls, stats)
        view.screenshot(path=str(ARTIFACTS / (cls + ".png")))

    # TransferView: control signals appear when asked for.
    tv = "minitf-transfer-view"
    transfers = page.locator("." + tv).first
    assert page.evaluate(COUNT, [tv, ".transfer-control"]) == 0
    assert "control signal" in page.evaluate(TITLE, tv) and "hidden" in page.evaluate(TITLE, tv)
    shown = page.evaluate(COUNT, [tv, "path.transfer"])
    before = _svg(page, tv)
    transfers.locator(".widget-checkbox input").check()
    _wait_changed(page, tv, before)
    assert page.evaluate(COUNT, [tv, ".transfer-control"]) >= 1
    assert page.evaluate(COUNT, [tv, "path.transfer"]) > shown
    # Picking a transfer in the list highlights its arrow.
    rows = transfers.locator(".widget-select select")
    options = rows.locator("option")
    assert options.count() == page.evaluate(COUNT, [tv, "path.transfer"]) + 1  # + "(none)"
    picked = options.nth(3).text_content()
    before = _svg(page, tv)
    rows.select_option(index=3)
    _wait_changed(page, tv, before)
    (tensor,) = page.evaluate(ATTRS, [tv, "path.transfer-selected", "data-tensor"])
    assert tensor.split(":")[0].split("/")[-1] in picked.replace("\u00a0", " ")
    assert page.evaluate(COUNT, [tv, "text.transfer-label-text"]) == 1
    transfers.screenshot(path=str(ARTIFACTS / "minitf-transfer-view-picked.png"))

    # PlacementView: expanding a scope opens it; finding an op highlights it.
    pv = "minitf-placement-view"
    placement = page.locator("." + pv).first
    scopes = set(page.evaluate(ATTRS, [pv, "rect.node-scope", "data-scope"]))
    assert "tower_0" in scopes
    before = _svg(page, pv)
    placement.locator(".widget-dropdown select").first.select_option("tower_0")
    _wait_changed(page, pv, before)
    after = set(page.evaluate(ATTRS, [pv, "rect.node-scope", "data-scope"]))
    assert "tower_0" not in after and "tower_0/gradients" in after
    ops = set(page.evaluate(ATTRS, [pv, "rect.node-op", "data-op"]))
    assert "tower_0/MatMul" in ops
    before = _svg(page, pv)
    find = placement.locator(".widget-combobox input, .widget-text input").first
    find.fill("tower_1/MatMul")
    find.press("Enter")
    _wait_changed(page, pv, before)
    assert page.evaluate(COUNT, [pv, "rect.selected"]) == 1
    assert "tower_1/MatMul" in page.evaluate(ATTRS, [pv, "rect.node-op", "data-op"])
    page.wait_for_function("() => document.querySelector('.minitf-placement-view "
                           ".minitf-op-details').textContent.includes('MatMul')")
    placement.screenshot(path=str(ARTIFACTS / "minitf-placement-view-expanded.png"))

    # VariableStateView: the panels are the learner's pick.
    vv = "minitf-variable-view"
    variables = page.locator("." + vv).first
    panels = page.evaluate(ATTRS, [vv, "rect.panel", "data-variable"])
    assert {"w1", "w2"} <= set(panels) and not any("Adam" in p for p in panels)
    picker = variables.locator(".widget-select-multiple select")
    labels = [o.replace("\u00a0", " ") for o in picker.locator("option").all_text_contents()]
    beta = [i for i, label in enumerate(labels) if label.startswith("beta1_power")][0]
    before = _svg(page, vv)
    picker.select_option(index=beta)
    _wait_changed(page, vv, before)
    assert page.evaluate(ATTRS, [vv, "rect.panel", "data-variable"]) == ["beta1_power"]
    assert "1 in panels" in page.evaluate(TITLE, vv)
    assert variables.get_by_text("variables, 1 in panels").count() == 1  # the status agrees
    variables.screenshot(path=str(ARTIFACTS / "minitf-variable-view-picked.png"))

    # ClusterView: refresh says that it happened.
    cv = "minitf-cluster-view"
    assert "(refresh 1)" in page.evaluate(TITLE, cv)
    before = _svg(page, cv)
    page.locator("." + cv).first.locator("button", has_text="refresh").click()
    _wait_changed(page, cv, before)
    assert "(refresh 2)" in page.evaluate(TITLE, cv)  # the cluster is stopped by now
    assert page.evaluate(COUNT, [cv, "rect.task-card[data-up='no']"]) == 3
    page.locator("." + cv).first.screenshot(path=str(ARTIFACTS / "minitf-cluster-view-refreshed.png"))

    assert not errors, errors
    print("browser test body took %.1f s" % (time.monotonic() - started))
