"""Every chapter notebook, run in JupyterLab in a real (headless) Chromium.

For each notebooks/*.ipynb: open it, Run > Run All Cells, wait (bounded) until
the kernel is idle and every code cell has an execution count, then check
- no error outputs and no Traceback on stderr, in the page and in the saved file;
- Chinese prose is really rendered: a heading's CJK characters have a
  full-width box each, the glyphs differ from each other (no tofu boxes), and
  Chromium drew them with a font that fontconfig lists for `:lang=zh`;
- every ipywidgets control (slider, dropdown, checkbox, toggle buttons, button)
  is moved or clicked once and the notebook's outputs change in response
  (for controls that only take effect on a button press, after pressing it).
Screenshots go to test-artifacts/browser/ (printed at the end of the run).
"""
import json
import os
import pathlib
import re
import subprocess
import time
import warnings

import pytest

from workbook import run_times

from page_scripts import (CONTROL_SELECTOR, JS_CELL_STATE, JS_OUTPUT_SIGNATURE, JS_OPEN, JS_CLOSE_ALL,
                          JS_SAVE, JS_ERRORS, JS_STDERR, JS_LABEL_CONTROLS, JS_DISABLED, JS_CJK_HEADING)

pytestmark = pytest.mark.browser

NOTEBOOK_DIR = pathlib.Path(os.environ.get("AICS_BROWSER_NOTEBOOKS",
                                           pathlib.Path(__file__).resolve().parents[2] / "notebooks"))
# The chapters that took longest in their quick setting (notebooks/run_times.json) first, so that
# the two workers end together instead of one running the last long chapter alone.
NOTEBOOKS = sorted((p.name for p in NOTEBOOK_DIR.glob("*.ipynb")),
                   key=lambda n: (-((run_times.recorded(run_times.topic_of(n)) or {}).get("fast_s") or 0), n))
RUN_ALL_TIMEOUT = 600          # s; a notebook under AICS_FAST=1 takes well under 2 minutes headless
CELL_TIMEOUT = 180             # s one cell may run before the test stops, naming it
KERNEL_START_TIMEOUT = 90      # s; a busy 2-core CI machine can take a minute
SCREENSHOTS = os.environ.get("AICS_BROWSER_SCREENSHOTS", "") in ("1", "true", "yes")   # else on failure only
WIDGET_TIMEOUT = 45            # s for a widget's output to change (a button may train a small model)
QUIET_S = 0.25                 # s with no kernel message outstanding or arriving before outputs count as settled
CJK = re.compile(r"[\u3400-\u9fff]")

def _zh_font_families():
    """Font families fontconfig lists for Chinese (same as conftest.zh_font_families)."""
    try:
        out = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return {f.strip() for line in out.splitlines() for f in line.split(",") if f.strip()}


# --- helpers --------------------------------------------------------------------------------

class KernelTraffic:
    """What the page and its kernels say to each other, read off the websocket: which requests
    the page sent on the shell channel are still unanswered (no `idle` status for them yet).
    A widget callback runs on the kernel's shell like a cell, but ipykernel 7 may answer a
    request the page sends meanwhile before the callback ends, and the server's execution
    state can say `idle` in between; an unanswered comm message cannot. ipywidgets sends a
    held-back state change when the idle for the previous one arrives, so the page is settled
    only once nothing is outstanding and nothing has arrived for QUIET_S seconds."""

    def __init__(self, page):
        self.page, self.pending, self.last = page, set(), time.monotonic()
        page.on("websocket", self._attach)

    def close(self):
        self.page.remove_listener("websocket", self._attach)

    def _attach(self, ws):
        ws.on("framesent", lambda payload: self._frame(payload, sent=True))
        ws.on("framereceived", lambda payload: self._frame(payload, sent=False))

    def _frame(self, payload, sent):
        self.last = time.monotonic()
        msg = _ws_message(payload)
        if msg is None:
            return
        channel, header, parent, content = msg
        if sent and channel == "shell":
            self.pending.add(header.get("msg_id"))
        elif not sent and header.get("msg_type") == "status" and content.get("execution_state") == "idle":
            self.pending.discard(parent.get("msg_id"))

    def settled(self):
        return not self.pending and time.monotonic() - self.last >= QUIET_S


def _ws_message(payload):
    """(channel, header, parent_header, content) of a kernel websocket frame: jupyter_server's v1
    binary protocol (offsets, then channel and the message's JSON parts) or the JSON one."""
    try:
        if isinstance(payload, str):
            m = json.loads(payload)
            return m.get("channel"), m.get("header") or {}, m.get("parent_header") or {}, m.get("content") or {}
        b = bytes(payload)
        n = int.from_bytes(b[:8], "little")
        offsets = [int.from_bytes(b[8 * (i + 1):8 * (i + 2)], "little") for i in range(n)]
        parts = [b[offsets[i]:offsets[i + 1]] for i in range(min(n - 1, 5))]
        return (parts[0].decode(), json.loads(parts[1] or b"{}"), json.loads(parts[2] or b"{}"),
                json.loads(parts[4] or b"{}"))
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


class Notebook:
    """One notebook open in JupyterLab, with the server's REST API at hand."""

    def __init__(self, page, lab, name, artifacts):
        self.page, self.lab, self.name, self.art = page, lab, name, artifacts
        self.stem = name.rsplit(".", 1)[0]
        self.shots = 0
        self.traffic = KernelTraffic(page)

    def shot(self, what, locator=None, always=False):
        """A screenshot in the artifacts folder: on failure, or every step with AICS_BROWSER_SCREENSHOTS=1."""
        if not (SCREENSHOTS or always):
            return None
        self.shots += 1
        path = self.art / f"{self.stem}-{self.shots:02d}-{what}.png"
        try:
            (locator or self.page).screenshot(path=str(path), timeout=20_000)
        except Exception as exc:        # a screenshot is evidence, not a check
            print(f"screenshot {path.name} failed: {exc}")
        return path

    def kernel_state(self):
        for s in self.lab.api("/api/sessions"):
            if s.get("path", "").endswith(self.name) and s.get("kernel"):
                return s["kernel"].get("execution_state")
        return None

    def shutdown_session(self):
        for s in self.lab.api("/api/sessions"):
            if s.get("path", "").endswith(self.name):
                try:
                    self.lab.api(f"/api/sessions/{s['id']}", method="DELETE", timeout=30)
                except Exception:
                    pass

    def wait_kernel_idle(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.kernel_state() == "idle":
                return True
            time.sleep(0.5)
        return False

    def dismiss_dialogs(self):
        dlg = self.page.locator(".jp-Dialog")
        for _ in range(3):
            if dlg.count() == 0:
                return
            btn = dlg.locator(".jp-Dialog-button.jp-mod-accept")
            (btn.first if btn.count() else dlg.locator(".jp-Dialog-button").last).click()
            self.page.wait_for_timeout(500)

    def signature(self, stable=False, text=False):
        """A hash of what the outputs show (with ``text``: the shown text itself, for a report)."""
        return self.page.evaluate(JS_OUTPUT_SIGNATURE, [CONTROL_SELECTOR, stable, text])

    def quiet(self, timeout=WIDGET_TIMEOUT):
        """Waits until the kernel has answered everything the page sent (KernelTraffic); then
        one more animation frame for the outputs to render. False at the timeout."""
        deadline = time.monotonic() + timeout
        while not self.traffic.settled():
            if time.monotonic() > deadline:
                return False
            self.page.wait_for_timeout(50)
        self.page.evaluate("() => new Promise(r => { requestAnimationFrame(() => setTimeout(r, 30)); "
                           "setTimeout(r, 1000); })")      # (the timer: see page_scripts.JS_WITHIN)
        return True

    def settle(self, timeout=WIDGET_TIMEOUT):
        """Waits until the kernel is done and the outputs stop changing; returns the stable signature."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            self.quiet(max(1.0, deadline - time.monotonic()))
            sig = self.signature()
            if sig == last:
                break
            last = sig
        return self.signature(stable=True)

    def wait_output_change(self, before, timeout=WIDGET_TIMEOUT):
        """Waits until the outputs differ from `before` (the caller settles them), also for a
        moment only (a button that redraws the same plot shows its progress first); False when
        the kernel has answered everything the page sent and they are still the same."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.signature() != before:
                return True
            if self.traffic.settled():
                self.quiet(1.0)
                return self.signature() != before
            self.page.wait_for_timeout(100)
        return False


def _open(page, lab, name):
    page.evaluate(JS_OPEN, name)
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="visible", timeout=60_000)


def _open_with_idle_kernel(nb):
    """Open the notebook and wait until its kernel is idle with nothing outstanding (JupyterLab and
    the widget manager ask the new kernel for its info right after it starts: a moment of `busy`
    after the first `idle`); returns the last state seen."""
    _open(nb.page, nb.lab, nb.name)
    deadline = time.monotonic() + KERNEL_START_TIMEOUT
    while time.monotonic() < deadline:
        state = nb.kernel_state()
        if state == "idle" and nb.traffic.settled():
            return state
        nb.dismiss_dialogs()           # e.g. "Select Kernel" for a notebook without kernelspec
        nb.page.wait_for_timeout(250)
    return nb.kernel_state()


def _run_all(nb):
    page = nb.page
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    # "Run All Cells" is the command runmenu:run-all (notebook:run-all-cells in the notebook's context)
    page.locator("#jp-mainmenu-run .lm-Menu-item",
                 has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$"))).click()


def _wait_run_all(nb):
    """Until every non-empty code cell has a number and the kernel is idle, or an error stopped it.
    A cell still running after CELL_TIMEOUT seconds fails the test, naming the cell."""
    deadline = time.monotonic() + RUN_ALL_TIMEOUT
    cells = []
    running, since = None, time.monotonic()
    while time.monotonic() < deadline:
        nb.page.wait_for_timeout(500)
        cells = nb.page.evaluate(JS_CELL_STATE)
        busy = any(c["prompt"] == "[*]:" for c in cells)
        current = next((i for i, c in enumerate(cells) if c["prompt"] == "[*]:"), None)
        if current != running:
            running, since = current, time.monotonic()
        elif current is not None and time.monotonic() - since > CELL_TIMEOUT:
            nb.shot("cell-timeout", always=True)
            pytest.fail(f"{nb.name}: code cell {current} (counting code cells only) still running after "
                        f"{CELL_TIMEOUT} s: {cells[current].get('head', '')!r}")
        started = busy or any(re.fullmatch(r"\[\d+\]:", c["prompt"]) for c in cells)
        if started and not busy and nb.kernel_state() == "idle" and nb.quiet(CELL_TIMEOUT):
            cells = nb.page.evaluate(JS_CELL_STATE)
            if not any(c["prompt"] == "[*]:" for c in cells):
                return cells, all(re.fullmatch(r"\[\d+\]:", c["prompt"]) for c in cells if not c["empty"])
    return cells, False


def _exercise_controls(nb, report):
    page = nb.page
    controls = page.evaluate(JS_LABEL_CONTROLS, CONTROL_SELECTOR)
    report["controls"] = controls
    results = []
    pending = list(controls)
    shot_cells = set()
    for attempt in range(2):                       # disabled controls get a second chance at the end
        deferred = []
        for ctl in pending:
            loc = page.locator(f'[data-aics-ctl="{ctl["n"]}"]')
            if loc.count() == 0:
                results.append(dict(ctl, ok=False, note="control vanished from the page"))
                continue
            if loc.evaluate(JS_DISABLED):
                deferred.append(ctl)
                continue
            cell = page.locator(".jp-Notebook .jp-Cell").nth(ctl["cell"])
            area = cell.locator(".jp-Cell-outputWrapper")
            if ctl["cell"] not in shot_cells:
                shot_cells.add(ctl["cell"])
                nb.shot(f"cell{ctl['cell']}-widgets-before", area)
            for res in _interact(nb, loc, ctl, cell):
                results.append(res)
        pending = deferred
        if not pending:
            break
    for ctl in pending:
        results.append(dict(ctl, ok=False, note="stayed disabled: never exercised"))
    for c in sorted(shot_cells):
        nb.shot(f"cell{c}-widgets-after",
                page.locator(".jp-Notebook .jp-Cell").nth(c).locator(".jp-Cell-outputWrapper"))
    return results


def _press_sibling_button(nb, ctl, before):
    """For a control that only takes effect on a button press (e.g. 'train'): press it, compare."""
    buttons = [c for c in nb.page.evaluate(JS_LABEL_CONTROLS, CONTROL_SELECTOR)
               if c["kind"] == "button" and c["cell"] == ctl["cell"]]
    # labelling again renumbers controls in the same DOM order: harmless, they are the same nodes
    for b in buttons:
        loc = nb.page.locator(f'[data-aics-ctl="{b["n"]}"]')
        try:
            loc.scroll_into_view_if_needed()
            nb.page.wait_for_function("(e) => !e.disabled", arg=loc.element_handle(), timeout=WIDGET_TIMEOUT * 1000)
            loc.click()
        except Exception:
            continue
        if nb.wait_output_change(before):
            return b["label"]
    return None


def _interact(nb, loc, ctl, cell):
    """Moves one control and checks that the output follows it: a new value changes what the
    notebook shows (measured times aside), and the same value again shows the same output: a
    dropdown, checkbox or toggle set back shows what it showed before, a slider moved away and
    back (or a button pressed again) what it showed after the move. Returns one result dict per action."""
    page = nb.page
    loc.scroll_into_view_if_needed()
    kind = ctl["kind"]
    if kind == "toggle":
        buttons = loc.locator("button")
        active = [i for i in range(buttons.count()) if "mod-active" in (buttons.nth(i).get_attribute("class") or "")]
        others = [i for i in range(buttons.count()) if i not in active]
        if not others:
            return [dict(ctl, ok=True, note="single option, nothing to choose")]
        new = buttons.nth(others[0])
        what, act = f"toggle -> {new.text_content().strip()}", new.click
        undo = (lambda: buttons.nth(active[0]).click()) if active else None
    elif kind == "dropdown":
        sel = loc.locator("select")
        cur = sel.evaluate("s => s.selectedIndex")
        count = sel.evaluate("s => s.options.length")
        if count < 2:
            return [dict(ctl, ok=True, note="single option, nothing to choose")]
        idx = (cur + 1) % count
        what = f"select {sel.evaluate('(s, i) => s.options[i].text', idx)!r}"
        act, undo = (lambda: sel.select_option(index=idx)), (lambda: sel.select_option(index=cur))
    elif kind == "checkbox":
        what, act = "click checkbox", (lambda: loc.locator("input").click())
        undo = act
    elif kind == "button":
        what, act, undo = "click", loc.click, None
    else:
        what, act, undo = "drag slider", (lambda: _move_slider(page, loc)), None
    before_raw, before = nb.signature(), nb.signature(stable=True)
    before_text = nb.signature(stable=True, text=True) if kind in ("toggle", "dropdown", "checkbox") else ""
    readout_before = _readout(loc)
    result = dict(ctl, action=what)
    try:
        act()
    except Exception as exc:
        return [dict(result, ok=False, note=f"interaction failed: {exc}")]
    if kind == "slider" and _readout(loc) == readout_before:
        _nudge_slider(loc)                      # drag did not move it: use the keyboard
    result["readout"] = [readout_before, _readout(loc)]
    changed, pressed = nb.wait_output_change(before_raw), None
    if not changed and kind != "button":
        pressed = _press_sibling_button(nb, ctl, before_raw)
        changed = pressed is not None
    if not changed:
        return [dict(result, ok=False, note="output did not change")]
    after = nb.settle()
    after_text = nb.signature(stable=True, text=True)
    if after == before and kind != "button":      # a button may redo what the notebook already showed
        return [dict(result, ok=False, note="output changed only in measured times: nothing shows the new value")]
    # the same value again must show the same output
    if kind == "button" or pressed:
        again = _press_again(nb, ctl, loc if kind == "button" else pressed)
        same, how = again == after, "pressed again"
    elif kind == "slider":
        _step_slider_and_back(loc)
        again = nb.settle()
        same, how = again == after, "moved away and back"
    else:
        # set back to the notebook's own choice: the output it showed before, again
        undo()
        again = nb.settle()
        same, how = again == before, "set back"
        after_text = before_text
        if kind == "toggle":
            # the other options, each must change the output; the last one stays selected, so a
            # control it enables (06's seed slider) is exercised next
            for i in others[1:]:
                sig = nb.signature()
                buttons.nth(i).click()
                if not nb.wait_output_change(sig):
                    return [dict(result, ok=False, note=f"option {buttons.nth(i).text_content().strip()!r}: "
                                                        "output did not change")]
                nb.settle()
    note = f"output changed{f' after pressing {pressed!r}' if pressed else ''}; {how}: " + \
        ("same output" if same else "a different output for the same value")
    if not same:
        again_text = nb.signature(stable=True, text=True)
        start = next((i for i, (a, b) in enumerate(zip(after_text, again_text)) if a != b),
                     min(len(after_text), len(again_text)))
        result["first_difference"] = [after_text[max(start - 200, 0):start + 300],
                                      again_text[max(start - 200, 0):start + 300]]
    return [dict(result, ok=same, note=note)]


def _press_again(nb, ctl, button):
    """Presses the button (a locator, or the label of the control's sibling button) once more."""
    if isinstance(button, str):
        buttons = [c for c in nb.page.evaluate(JS_LABEL_CONTROLS, CONTROL_SELECTOR)
                   if c["kind"] == "button" and c["cell"] == ctl["cell"] and c["label"] == button]
        button = nb.page.locator(f'[data-aics-ctl="{buttons[0]["n"]}"]')
    nb.page.wait_for_function("(e) => !e.disabled", arg=button.element_handle(), timeout=WIDGET_TIMEOUT * 1000)
    button.click()
    return nb.settle()


def _step_slider_and_back(loc):
    """One keyboard step away and one back: the slider's value is set again to what it was."""
    handle = loc.locator(".noUi-handle").first
    handle.focus()
    before = _readout(loc)
    handle.press("ArrowRight")
    if _readout(loc) == before:            # at the maximum: step down and up instead
        handle.press("ArrowLeft")
        handle.press("ArrowRight")
    else:
        handle.press("ArrowLeft")


def _readout(loc):
    r = loc.locator(".widget-readout")
    return r.first.text_content().strip() if r.count() else None


def _move_slider(page, loc):
    handle = loc.locator(".noUi-handle").first
    track = loc.locator(".noUi-target").first
    hb, tb = handle.bounding_box(), track.bounding_box()
    x, y = hb["x"] + hb["width"] / 2, hb["y"] + hb["height"] / 2
    dx = 0.2 * tb["width"] * (-1 if x > tb["x"] + tb["width"] / 2 else 1)
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx / 2, y)
    page.mouse.move(x + dx, y)
    page.mouse.up()


def _nudge_slider(loc):
    handle = loc.locator(".noUi-handle").first
    before = _readout(loc)
    handle.focus()
    handle.press("ArrowRight")
    if _readout(loc) == before:
        handle.press("ArrowLeft")
        handle.press("ArrowLeft")


def _log_console(nb):
    """Text of the log console's entries for this notebook ('' when it has none)."""
    page = nb.page
    item = page.locator(".jp-LogConsoleStatusItem [title]")
    if item.count() == 0:
        return ""
    title = item.first.get_attribute("title") or ""
    m = re.search(r"(\d+) log entr", title)
    if not m or int(m.group(1)) == 0:
        return ""
    try:
        item.first.click()
        panel = page.locator(".jp-LogConsolePanel")
        panel.first.wait_for(state="visible", timeout=10_000)
        page.wait_for_timeout(500)
        return panel.first.inner_text().strip() or title
    except Exception as exc:
        return f"{title} (could not open the log console: {exc})"


def _check_cjk(nb, report, failures):
    info = nb.page.evaluate(JS_CJK_HEADING)
    report["cjk"] = info
    if not info:
        failures.append("no heading with Chinese characters found")
        return
    small = [w for w in info["widths"] if w < 0.6 * info["fontSize"]]
    if not info["widths"] or small:
        failures.append(f"Chinese heading {info['text']!r}: character boxes {info['widths']} "
                        f"narrower than 0.6 x font size {info['fontSize']}")
    if not info["glyphsDiffer"] or 0 in info["ink"]:
        failures.append(f"Chinese heading {info['text']!r}: glyphs blank or identical (tofu?), ink={info['ink']}")
    # which fonts Chromium really used for the heading (DevTools protocol)
    try:
        cdp = nb.page.context.new_cdp_session(nb.page)
        doc = cdp.send("DOM.getDocument", {"depth": 0})
        cdp.send("CSS.enable")
        node = cdp.send("DOM.querySelector", {"nodeId": doc["root"]["nodeId"],
                                              "selector": "[data-aics-cjk]"})
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
        cdp.detach()
    except Exception as exc:
        report["cjk_fonts_error"] = str(exc)
        return
    used = [f["familyName"] for f in fonts]
    report["cjk_fonts_used"] = used
    zh = _zh_font_families()
    if zh and not any(u in zh for u in used):
        failures.append(f"Chinese heading drawn with {used}, none of them a :lang=zh font")


# --- tests ----------------------------------------------------------------------------------

def test_browser_and_cjk_font(browser, chromium_path):
    """Chromium starts, and fontconfig knows a font covering Chinese (fonts-noto-cjk)."""
    assert browser.version
    print(f"Chromium {browser.version} ({chromium_path}); Chinese fonts: {sorted(_zh_font_families())[:6]}")


@pytest.mark.parametrize("name", NOTEBOOKS or [pytest.param(None, marks=pytest.mark.skip(
    reason="no notebooks/*.ipynb yet"))])
def test_notebook_in_browser(name, lab_page, lab, artifacts):
    page = lab_page.page
    console_errors = []

    def on_page_error(exc):
        console_errors.append(str(exc))
    page.on("pageerror", on_page_error)
    nb = Notebook(page, lab, name, artifacts)
    report = {"notebook": name}
    failures = []
    t0 = time.monotonic()
    try:
        state = _open_with_idle_kernel(nb)
        if state != "idle":
            pytest.fail(f"{name}: kernel not idle {KERNEL_START_TIMEOUT} s after opening the notebook "
                        f"(state: {state})")
        _run_all(nb)
        cells, done = _wait_run_all(nb)
        report["run_all_s"] = round(time.monotonic() - t0, 1)
        nb.dismiss_dialogs()
        page.evaluate("() => { const s = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');"
                      " if (s) s.scrollTop = 0; }")
        nb.shot("after-run-all")
        errors = page.evaluate(JS_ERRORS)
        for e in errors:
            failures.append(f"cell {e['cell']}: {e['kind']} output after Run All:\n{e['text']}")
        if not done:
            missing = [i for i, c in enumerate(cells) if not c["empty"] and not re.fullmatch(r"\[\d+\]:", c["prompt"])]
            why = (f"did not finish within {RUN_ALL_TIMEOUT}s" if report["run_all_s"] >= RUN_ALL_TIMEOUT
                   else "stopped")
            failures.append(f"Run All {why}: code cells {missing} (counting code cells only) "
                            f"have no execution count")
            pytest.fail("\n".join(failures))

        _check_cjk(nb, report, failures)
        nb.shot("chinese-heading")

        results = _exercise_controls(nb, report)
        report["widgets"] = results
        for r in results:
            if not r["ok"]:
                failures.append(f"widget {r['kind']} {r['label']!r} (cell {r['cell']}) "
                                f"{r.get('action', '')}: {r['note']}")
        # a chapter that builds widgets must show them; one without (a lab chapter) has none to check
        if not results and "ipywidgets" in (NOTEBOOK_DIR / name).read_text(encoding="utf-8"):
            failures.append("no ipywidgets controls found in the outputs, though the notebook builds widgets")
        for e in page.evaluate(JS_ERRORS):
            if e not in errors:
                failures.append(f"cell {e['cell']}: {e['kind']} output after moving widgets:\n{e['text']}")

        # output of widget callbacks outside an Output widget lands in JupyterLab's log console
        log = _log_console(nb)
        report["log_console"] = log
        if log and re.search(r"Traceback|Error\b|Exception", log):
            failures.append(f"log console (widget callback output), last lines:\n{log[-1500:]}")
        elif log:
            warnings.warn(f"{name}: log console (widget callback output): {log[:300]}")

        # stderr that is not an error (warnings) fails nothing, but students see it: report it
        # (aicslib's own log lines, "I aicslib/...", are shown on purpose and are not reported)
        report["stderr"] = [e for e in page.evaluate(JS_STDERR) if "Traceback" not in e["text"]]
        for e in report["stderr"]:
            if re.search(r"Warning\b", e["text"]):
                warnings.warn(f"{name} cell {e['cell']} shows stderr in the browser: {e['text'][:300]}")

        # the saved notebook agrees: numbered cells, no error outputs
        page.evaluate(JS_SAVE, name)
        saved = json.loads((lab.root / name).read_text(encoding="utf-8"))
        for i, c in enumerate(saved["cells"]):
            if c["cell_type"] != "code":
                continue
            for o in c.get("outputs", []):
                if o.get("output_type") == "error":
                    failures.append(f"saved cell {i}: {o.get('ename')}: {o.get('evalue')}")
        report["page_errors"] = console_errors
        nb.shot("end", always=bool(failures))
    except BaseException:
        nb.shot("failure", always=True)
        broken = True
        raise
    else:
        broken = False
    finally:
        report["total_s"] = round(time.monotonic() - t0, 1)
        report["failures"] = failures
        (artifacts / f"{nb.stem}-report.json").write_text(
            json.dumps(report, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
        page.remove_listener("pageerror", on_page_error)
        nb.traffic.close()
        try:
            page.evaluate(JS_CLOSE_ALL)
            lab.shutdown_sessions()
        finally:
            if broken or failures:          # the next notebook starts from a freshly loaded app
                lab_page.reload()
    assert not failures, f"{name}:\n" + "\n".join(failures)
