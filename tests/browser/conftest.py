"""Fixtures for the real-browser notebook tests (run with `make test-browser`).

One JupyterLab server (127.0.0.1, free port, token, AICS_FAST=1, a temporary
copy of notebooks/ as its notebook dir, throw-away settings and workspaces) and
one headless Chromium (Debian's, driven by Playwright) serve every test of the
session. Both are stopped at the end of the session, also on failure or Ctrl-C.

When Playwright or Chromium is missing the tests are collected and reported as
skipped with the reason; `make test-browser` installs both where it can.
"""
import atexit
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = pathlib.Path(os.environ.get("AICS_BROWSER_NOTEBOOKS", REPO_ROOT / "notebooks"))  # e.g. a release
ARTIFACTS = pathlib.Path(os.environ.get("AICS_BROWSER_ARTIFACTS", REPO_ROOT / "test-artifacts" / "browser"))

SERVER_START_TIMEOUT = 90      # seconds for JupyterLab to answer /api/status
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser",
                       "google-chrome", "google-chrome-stable")


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives JupyterLab in a real browser (make test-browser)")
    config.addinivalue_line("markers", "nbclient: runs the notebooks without a browser (where none can run)")
    # Clear the artifacts once per run, in the controlling process (xdist workers share the folder).
    if not hasattr(config, "workerinput") and _asked_for_browser_tests(config) and ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)


def _asked_for_browser_tests(config):
    """True when the command line names tests/browser (or a file in it), selects `-m browser`,
    or AICS_BROWSER_TESTS=1; a plain `pytest` / `pytest tests` (the unit suite) does not."""
    if os.environ.get("AICS_BROWSER_TESTS", "").strip() in ("1", "true", "yes"):
        return True
    if "browser" in (config.getoption("markexpr", "") or "").replace("not browser", ""):
        return True
    here = pathlib.Path(__file__).resolve().parent
    for arg in config.args:
        p = pathlib.Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if p == here or here in p.parents:
            return True
    return False


def browser_missing():
    """Why the real browser cannot run here ('' when it can): Playwright, Chromium, a Chinese font."""
    import importlib.util
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed (pip install -e '.[browser]'; make test-browser does)"
    if not find_chromium():
        return "Chromium not found (apt-get install chromium; make test-browser does as root)"
    if not zh_font_families():
        return "no font for Chinese (apt-get install fonts-noto-cjk; make test-browser does as root)"
    return ""


IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def pytest_collection_modifyitems(config, items):
    """One executor per notebook: the browser where it runs (always under CI, where a missing
    browser fails), nbclient otherwise (the reason printed)."""
    if _asked_for_browser_tests(config):
        missing = "" if IN_CI else browser_missing()
        drop = "browser" if missing else "nbclient"
        if missing:
            config.issue_config_time_warning(pytest.PytestWarning(
                f"the release runs under nbclient instead of the browser: {missing}"), stacklevel=1)
        keep = [i for i in items if not i.get_closest_marker(drop)]
        config.hook.pytest_deselected(items=[i for i in items if i.get_closest_marker(drop)])
        items[:] = keep
        return
    here = pathlib.Path(__file__).resolve().parent
    skip = pytest.mark.skip(reason="browser tests run only when asked for: `make test-browser` "
                                   "(or `pytest tests/browser`)")
    for item in items:
        if here in pathlib.Path(str(item.path)).resolve().parents:
            item.add_marker(skip)


_USED = []    # set when a test of this session wrote artifacts


def pytest_terminal_summary(terminalreporter):
    if _USED and ARTIFACTS.is_dir() and any(ARTIFACTS.iterdir()):
        terminalreporter.write_sep("-", "browser test artifacts")
        terminalreporter.write_line(f"screenshots and logs: {ARTIFACTS}")


def find_chromium():
    env = os.environ.get("AICS_CHROMIUM")
    if env:
        return env if os.path.exists(env) else shutil.which(env)
    for cand in CHROMIUM_CANDIDATES:
        path = cand if os.path.isabs(cand) and os.access(cand, os.X_OK) else shutil.which(cand)
        if path:
            return path
    return None


def zh_font_families():
    """Font families fontconfig lists for Chinese (`fc-list :lang=zh family`)."""
    try:
        out = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return {f.strip() for line in out.splitlines() for f in line.split(",") if f.strip()}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """A running JupyterLab; `api()` talks to its REST API with the token."""

    def __init__(self, url, token, root, proc, log_path):
        self.url, self.token, self.root, self.proc, self.log_path = url, token, root, proc, log_path

    def api(self, path, method="GET", timeout=10):
        req = urllib.request.Request(self.url + path, method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def kernels(self):
        return self.api("/api/kernels")

    def shutdown_sessions(self):
        for s in self.api("/api/sessions"):
            try:
                self.api(f"/api/sessions/{s['id']}", method="DELETE", timeout=30)
            except Exception:
                pass


def _stop_process_group(proc, timeout=15):
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)     # the server runs in its own session: ends kernels too
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


def _raise_keyboard_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    _USED.append(True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def chromium_path():
    path = find_chromium()
    if not path:
        pytest.skip("Chromium not found (install Debian's `chromium` and `fonts-noto-cjk`; "
                    "`make test-browser` does so when run as root with apt-get)")
    if not zh_font_families():
        pytest.skip("no font for Chinese (`fc-list :lang=zh` is empty): install `fonts-noto-cjk`; "
                    "`make test-browser` does so when run as root with apt-get")
    return path


@pytest.fixture(scope="session")
def sync_playwright():
    mod = pytest.importorskip("playwright.sync_api",
                              reason="playwright not installed: pip install -e '.[browser]' (make test-browser does)")
    return mod.sync_playwright


@pytest.fixture(scope="session")
def browser(sync_playwright, chromium_path):
    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=chromium_path, headless=True, timeout=60_000,
                               args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"])
    except Exception:
        pw.stop()
        raise
    try:
        yield b
    finally:
        try:
            b.close()
        finally:
            pw.stop()


@pytest.fixture(scope="session")
def lab(artifacts):
    """Start JupyterLab on a temporary copy of notebooks/; stop it (and its kernels) at the end."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="aics-browser-"))
    root = tmp / "notebooks"
    root.mkdir()
    for nb in NOTEBOOK_DIR.glob("*.ipynb"):
        shutil.copy2(nb, root / nb.name)
    settings = tmp / "settings"
    for plugin, values in {
        # every cell in the DOM: no virtual scrolling, so all outputs can be inspected
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }.items():
        pkg, name = plugin.rsplit("/", 1)
        d = settings / pkg
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{name}.jupyterlab-settings").write_text(json.dumps(values))
    (tmp / "workspaces").mkdir()

    token = uuid.uuid4().hex
    port = _free_port()
    env = dict(os.environ, AICS_FAST="1",
               JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), PYTHONUNBUFFERED="1")
    env.pop("MPLBACKEND", None)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--notebook-dir={root}",
           # window.jupyterapp: the tests find the notebook panel by path (test_notebooks_browser.JS_PANEL)
           # and save through the document's context instead of pressing keys and guessing a delay
           "--LabApp.expose_app_in_browser=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log_path = artifacts / f"jupyterlab-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log"
    log = open(log_path, "w")
    # `python -m jupyterlab` runs the server in this process (no launcher fork); its own session
    # lets us stop it together with the kernels it started.
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(root),
                            start_new_session=True)
    # Stop the server even when pytest is terminated: SIGTERM unwinds like Ctrl-C (so the
    # finalizers below run), and atexit catches an interpreter exit that skipped them.
    atexit.register(_stop_process_group, proc, 5)
    previous = signal.getsignal(signal.SIGTERM)
    if previous in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    server = LabServer(f"http://127.0.0.1:{port}", token, root, proc, log_path)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {proc.returncode}; see {log_path}")
            try:
                server.api("/api/status", timeout=3)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not answer within {SERVER_START_TIMEOUT}s; see {log_path}")
                time.sleep(0.5)
        yield server
    finally:
        try:
            if proc.poll() is None:
                server.shutdown_sessions()
        except Exception:
            pass
        _stop_process_group(proc)
        atexit.unregister(_stop_process_group)
        if previous in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def context(browser, lab):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1300}, locale="zh-CN")
    ctx.set_default_timeout(30_000)
    try:
        yield ctx
    finally:
        ctx.close()


def open_lab(page, lab):
    """Loads JupyterLab in `page` and waits until its app is restored (window.jupyterapp)."""
    page.goto(f"{lab.url}/lab?token={lab.token}", wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=60_000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")


class LabPage:
    """One JupyterLab page per worker, loaded once: each test opens its notebook in it and closes
    it at the end (loading the whole app again for every notebook costs seconds of CPU each);
    `reload()` after a failure, so the next notebook starts from a fresh app."""

    def __init__(self, page, lab):
        self.page, self.lab = page, lab
        self.reload()

    def reload(self):
        open_lab(self.page, self.lab)


@pytest.fixture(scope="session")
def lab_page(context, lab):
    page = context.new_page()
    yield LabPage(page, lab)
    page.close()
