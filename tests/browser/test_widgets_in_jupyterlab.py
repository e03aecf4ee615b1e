"""Every widget, rendered by JupyterLab in a real (headless) Chromium.

The notebook ``widgets_demo.ipynb`` starts a two-task LocalCluster, runs a
traced step and displays PlacementView, TransferView, VariableStateView and
ClusterView; its last cell stops the cluster. This test opens it, runs all
cells, waits for the four views' images, checks that each image decoded and
is not blank (pixel variance on a canvas), and saves screenshots under
``tests/browser/artifacts/``.
"""

import time
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

VIEWS = ["minitf-placement-view", "minitf-transfer-view", "minitf-variable-view",
         "minitf-cluster-view"]

KERNEL_READY = """() => {
    const app = window.jupyterapp;
    const panel = app && app.shell.currentWidget;
    const ctx = panel && panel.sessionContext;
    return !!(panel && panel.context && panel.context.isReady && ctx && ctx.session
              && ctx.session.kernel && ctx.session.kernel.status === "idle");
}"""

# For each view: its image's size and the standard deviation of its pixels.
IMAGE_STATS = """(cls) => {
    const img = document.querySelector("." + cls + " img");
    if (!img || !img.complete || img.naturalWidth === 0) return null;
    const canvas = document.createElement("canvas");
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const g = canvas.getContext("2d");
    g.drawImage(img, 0, 0);
    const data = g.getImageData(0, 0, canvas.width, canvas.height).data;
    let sum = 0, sq = 0, n = 0;
    for (let i = 0; i < data.length; i += 4 * 7) {   // every 7th pixel, grey level
        const v = (data[i] + data[i + 1] + data[i + 2]) / 3; sum += v; sq += v * v; n++;
    }
    const mean = sum / n;
    return {width: img.naturalWidth, height: img.naturalHeight,
            std: Math.sqrt(Math.max(0, sq / n - mean * mean))};
}"""


def test_every_view_renders_in_jupyterlab(jupyterlab, page):
    base, _ = jupyterlab
    ARTIFACTS.mkdir(exist_ok=True)
    started = time.monotonic()
    page.goto(base + "/lab/tree/widgets_demo.ipynb")
    page.wait_for_function(KERNEL_READY, timeout=90_000)
    # Start "run all" but do not await its promise (awaiting it can hang).
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.get_by_text("all views shown").wait_for(timeout=120_000)
    for cls in VIEWS:
        page.wait_for_selector("." + cls + " img", timeout=30_000)
    page.wait_for_timeout(500)  # let the last images decode
    page.screenshot(path=str(ARTIFACTS / "notebook.png"), full_page=True)

    for cls in VIEWS:
        view = page.locator("." + cls).first
        assert view.locator(".widget-html, .widget-dropdown, .widget-button, "
                            ".widget-toggle-buttons").count() > 0, cls
        view.scroll_into_view_if_needed()
        stats = page.evaluate(IMAGE_STATS, cls)
        assert stats is not None, "%s: image did not load" % cls
        assert stats["width"] > 300 and stats["height"] > 150, (cls, stats)
        assert stats["std"] > 10, "%s: image looks blank %s" % (cls, stats)
        view.screenshot(path=str(ARTIFACTS / (cls + ".png")))

    # The views are interactive: picking an op fills the details panel.
    placement = page.locator(".minitf-placement-view").first
    placement.locator("select").first.select_option("layer/matmul")
    page.wait_for_function("""() => document.querySelector(
        '.minitf-placement-view .minitf-op-details') &&
        document.querySelector('.minitf-placement-view .minitf-op-details')
            .textContent.includes('MatMul')""", timeout=20_000)
    placement.screenshot(path=str(ARTIFACTS / "minitf-placement-view-selected.png"))
    print("browser test body took %.1f s" % (time.monotonic() - started))
