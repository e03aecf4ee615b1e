"""Real TensorBoard, in a real (headless) Chromium, over a log directory minitf wrote.

``tensorboard_logdir.write`` trains a 1 ps + 2 worker model (one tower per
worker) for 20 steps, writing a scalar per step, the graph, and the run
metadata of one traced step. The test starts the ``tensorboard`` server of
the tensorboard package on a free port over that directory, and checks, in
the DOM the browser built:

* the Graphs dashboard draws minitf's nodes; with "Color by: Device" and the
  traced step selected, the variables (on the ps) and each tower (on its
  worker) are three different colours, and the legend names the three
  devices;
* the Scalars dashboard plots the ``mse`` scalar: a line through 20 points.

Screenshots go to ``tests/browser/artifacts/``; the graph's, cropped, is the
picture lesson 9 shows (a cell attachment) to readers without a live
TensorBoard. The server is stopped in teardown.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import tensorboard_logdir
from conftest import CHROMIUM, CHROMIUM_ARGS, _free_port

pytest.importorskip("tensorboard")
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

# Every element of the page, into open shadow roots (TensorBoard's dashboards are
# Polymer elements): the device legend's entries and each node's fill.
COLOURS = """() => {
    const fills = {};
    const stops = {};
    const walk = (root) => {
        for (const g of root.querySelectorAll('linearGradient')) {
            stops[g.id] = [...g.querySelectorAll('stop')].map(s => s.getAttribute('stop-color')
                                                                 || getComputedStyle(s).stopColor);
        }
        for (const g of root.querySelectorAll('g.node')) {
            const shape = g.querySelector(':scope > .nodeshape > .nodecolortarget');
            if (shape) fills[g.getAttribute('data-name')] = getComputedStyle(shape).fill;
        }
        for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
    };
    walk(document);
    const out = {};
    for (const [name, fill] of Object.entries(fills)) {
        const m = fill.match(/url\\("?#([^")]+)"?\\)/);
        out[name] = m ? (stops[m[1]] || [m[1]]).join(" ") : fill;
    }
    return out;
}"""

LINES = """() => {
    const out = [];
    const walk = (root) => {
        for (const p of root.querySelectorAll('tf-scalar-card path.line')) out.push(p);
        for (const card of root.querySelectorAll('tf-scalar-card')) {
            const inner = (el) => {
                for (const p of el.querySelectorAll('path.line')) out.push(p);
                for (const e of el.querySelectorAll('*')) if (e.shadowRoot) inner(e.shadowRoot);
            };
            if (card.shadowRoot) inner(card.shadowRoot);
        }
        for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
    };
    walk(document);
    return out.map(p => (p.getAttribute('d') || '').split('L').length);
}"""


@pytest.fixture(scope="module")
def tensorboard_server(browser_tools, tmp_path_factory):
    """``(base url, logdir, losses)`` of a running TensorBoard over minitf's files."""
    logdir = tmp_path_factory.mktemp("tb") / "logs"
    losses = tensorboard_logdir.write(str(logdir))
    port = _free_port()
    log_path = logdir.parent / "tensorboard.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir),
                             "--host", "127.0.0.1", "--port", str(port), "--reload_interval",
                             "0"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = "http://127.0.0.1:%d" % port
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError("tensorboard exited:\n" + log_path.read_text())
            try:
                with urllib.request.urlopen(base + "/data/runs", timeout=2) as r:
                    if b'"."' in r.read():
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("tensorboard did not serve the run within 60 s:\n"
                                   + log_path.read_text())
            time.sleep(0.25)
        yield base, logdir, losses
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        except ProcessLookupError:
            pass
        log.close()
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(log_path, ARTIFACTS / "tensorboard.log")


@pytest.fixture
def tb_page(tensorboard_server):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        finally:
            browser.close()


def _idle_groups(logdir):
    """Top-level groups whose ops, in the traced step, all took 0 us and
    allocated nothing: what TensorBoard draws as not run (``isFadedOut``)."""
    from tensorboard.backend.event_processing import event_accumulator
    acc = event_accumulator.EventAccumulator(str(logdir), size_guidance={"run_metadata": 0})
    acc.Reload()
    busy, seen = set(), set()
    for dev in acc.RunMetadata("step_%d" % tensorboard_logdir.TRACED).step_stats.dev_stats:
        for n in dev.node_stats:
            group = n.node_name.split("/")[0]
            seen.add(group)
            if n.all_end_rel_micros > 0 or any(m.total_bytes > 0 for m in n.memory):
                busy.add(group)
    return seen - busy


def test_graph_dashboard_colours_nodes_by_device(tensorboard_server, tb_page):
    base, logdir, _ = tensorboard_server
    page = tb_page
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "/#graphs")
    page.wait_for_selector("g.node", timeout=60000)
    names = set(page.evaluate(COLOURS))
    assert {"w", "b", "tower_0", "tower_1", "global_step"} <= names, names
    page.locator("paper-radio-button", has_text="Device").click()
    # Pick the traced step: its stats say where each node ran.
    page.locator(".tags-row paper-dropdown-menu").click()
    page.locator("paper-item", has_text="step_5").click()
    # TensorBoard recolours node by node once it has read the step's stats; on a
    # busy machine that takes a while: wait until the picture stops changing.
    # A group whose ops all ran in under a microsecond and allocated nothing in
    # the traced step (a variable's group, where only the VariableV2 op ran) is
    # drawn hatched, "not run in this step", by TensorBoard's rule; the ps's
    # colour is then read from the other ps groups.
    ps_groups = ("w", "b", "global_step", "GradientDescent", "loss")
    watched = ps_groups + ("tower_0", "tower_1")
    deadline = time.monotonic() + 60
    colours = None
    while time.monotonic() < deadline:
        page.wait_for_timeout(500)
        now = page.evaluate(COLOURS)
        if now == colours and "rectHatch" not in (now.get("tower_0"), now.get("tower_1")):
            break
        colours = now
    hatched = {n for n in watched if colours.get(n) == "rectHatch"}
    assert hatched <= set(_idle_groups(logdir)), (hatched, _idle_groups(logdir))
    # TensorBoard gives an op that ran the device of its stats and leaves the
    # others with the graph's requested device ("/job:ps/task:0", a separate
    # legend entry): a variable's group, whose Assign and read did not run in
    # the traced step, is a blend led by the ps's colour; GradientDescent and
    # loss, which ran whole, show that colour alone.
    variables = {colours[n] for n in ("w", "b", "global_step") if n not in hatched}
    assert len(variables) <= 1, colours
    ps = colours["GradientDescent"]
    assert colours["loss"] == ps and all(v.startswith(ps) for v in variables), colours
    tower0, tower1 = colours["tower_0"], colours["tower_1"]
    assert len({ps, tower0, tower1}) == 3, colours
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "tensorboard_graph_by_device.png"))
    for device in [tensorboard_logdir.PS] + tensorboard_logdir.WORKERS:
        # the legend writes "ps/replica:0/task:0/device:CPU:0"
        assert page.get_by_text(device[len("/job:"):], exact=True).count() >= 1, device
    assert not errors, errors


def test_scalars_dashboard_plots_the_scalar(tensorboard_server, tb_page):
    base, _, losses = tensorboard_server
    page = tb_page
    page.goto(base + "/#scalars")
    page.wait_for_function("() => true")
    deadline = time.monotonic() + 60
    lines = []
    while time.monotonic() < deadline:
        lines = page.evaluate(LINES)
        if any(n == len(losses) for n in lines):
            break
        page.wait_for_timeout(500)
    assert len(losses) == tensorboard_logdir.STEPS and losses[-1] < losses[0]
    assert any(n == tensorboard_logdir.STEPS for n in lines), lines
    assert page.get_by_text("mse").count() >= 1
    page.screenshot(path=str(ARTIFACTS / "tensorboard_scalars.png"))
