"""JupyterLab, started headless for the browser tests, and stopped after them.

The server runs on a free port with no token and no XSRF check (only this
machine can reach it), serves a temporary copy of the test notebooks, and
reads an ``overrides.json`` that starts the default kernel on its own and
turns off news and update checks, whose pop-ups could block a click. In
teardown every kernel is shut down through the REST API (which stops the
notebook's LocalCluster through its atexit hook) and the server is stopped,
so a failed test leaves no process or port behind.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
CHROMIUM = os.environ.get("MINITF_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]

OVERRIDES = {
    "@jupyterlab/notebook-extension:tracker": {
        "autoStartDefaultKernel": True,
        # Keep every cell in the DOM (the default virtualises off-screen cells).
        "windowingMode": "none",
    },
    "@jupyterlab/apputils-extension:notification": {
        "checkForUpdates": False, "fetchNews": "false", "doNotDisturbMode": True,
    },
}


def _missing():
    """Why the browser test cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not Path(CHROMIUM).exists():
        return "no Chromium at %s (apt-get install chromium)" % CHROMIUM
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        return "jupyterlab is not installed"
    return None


@pytest.fixture(scope="session")
def browser_tools():
    reason = _missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail("browser test cannot run in CI: " + reason)
        pytest.skip(reason)


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url, timeout=2.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read() or b"null")


@pytest.fixture(scope="session")
def jupyterlab(browser_tools, tmp_path_factory):
    """``(base url, notebook folder)`` of a running JupyterLab."""
    root = tmp_path_factory.mktemp("lab")
    notebooks = root / "notebooks"
    notebooks.mkdir()
    for nb in HERE.glob("*.ipynb"):
        shutil.copy(nb, notebooks / nb.name)
    settings = root / "app-settings"
    settings.mkdir()
    (settings / "overrides.json").write_text(json.dumps(OVERRIDES, indent=1))
    port = _free_port()
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(root / "user-settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(root / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(root / "runtime"),
               JUPYTER_CONFIG_DIR=str(root / "config"))
    log = open(root / "jupyterlab.log", "w")
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
           "--ip=127.0.0.1", "--port=%d" % port, "--port-retries=0",
           "--ServerApp.token=", "--ServerApp.password=",
           "--ServerApp.disable_check_xsrf=True", "--LabApp.expose_app_in_browser=True",
           "--LabApp.app_settings_dir=%s" % settings,
           "--ServerApp.root_dir=%s" % notebooks]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                            cwd=notebooks, start_new_session=True)
    base = "http://127.0.0.1:%d" % port
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError("JupyterLab exited:\n" + (root / "jupyterlab.log").read_text())
            try:
                _get(base + "/api/status")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not answer within 60 s")
                time.sleep(0.25)
        yield base, notebooks
    finally:
        try:
            for kernel in _get(base + "/api/kernels"):
                req = urllib.request.Request(base + "/api/kernels/" + kernel["id"],
                                             method="DELETE")
                urllib.request.urlopen(req, timeout=10).close()
        except OSError:
            pass
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
        shutil.copy(root / "jupyterlab.log", ARTIFACTS / "jupyterlab.log")


@pytest.fixture
def page(jupyterlab):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 2400})
            yield context.new_page()
        finally:
            browser.close()
