"""Execute the chapter notebooks with widgets many times under CPU load and count kernel stalls.

A *stall* is a cell whose message sits unread while both sides wait idle at 0 % CPU, until the
per-cell timeout or until later traffic happens to wake the reader. Two causes, both the same
libzmq pattern (a raw send on a socket that an asyncio/ZMQStream wrapper is waiting to read
clears the socket's edge-triggered readiness signal, and the wrapper never re-checks it):

- kernel side, ipykernel 7.0-7.3: the shell reply was sent raw on the ROUTER the request stream
  reads (ipython/ipykernel#1554, fixed by PR #1529 in ipykernel 7.4.0); the next request stays
  unread. Seen as an ``execute_input`` stamped long after the request was sent.
- client side, every jupyter_client release: ``Session.send`` on an asyncio socket sends through
  a blocking shadow. nbclient sends on the shell channel while waiting there for a reply whenever
  a cell prints into an ``ipywidgets.Output`` (it mirrors the widget's state back to the kernel),
  so the reply stays unread (jupyter/jupyter_client#1059, open). Seen as a reply read long after
  the kernel's ``execute_reply`` stamp. ``workbook.kernel_client.KernelClient`` fixes it.

Counted as a stall: a cell timeout, or a request or reply read more than 5 s late.

Usage (any venv with aicslib, nbclient and, for ``--runner nbgrader``, nbgrader)::

    .venv/bin/python tools/kernel_stress.py --runs 200 --load 1 [--runner nbgrader]
    .venv/bin/python tools/kernel_stress.py --runs 50 --load 1 --stock-client    # shows the client stall
    /tmp/v73/bin/python tools/kernel_stress.py --runs 200 --load 1   # a venv with ipykernel 7.3.0

Each run executes every notebook named by ``--notebooks`` (default: 01 and 03, the chapters whose
widget cells stalled) top to bottom with ``AICS_FAST=1`` in a fresh kernel, as the tests and
``make autograde`` do: ``--runner nbclient`` (``NotebookClient``, what the grading tests use) or
``--runner nbgrader`` (nbgrader's ``Execute`` preprocessor, what ``make autograde`` uses).
``--load N`` keeps N busy-looping processes running meanwhile. With ``--py-spy`` the kernel's and
the client's stacks are dumped (py-spy, when installed) while the first timeout is pending, to show
where each side waits.
``--output-loop N`` instead runs one synthetic notebook of N cells that each print into an
``ipywidgets.Output`` (one kernel, 5 s per-cell timeout): the client stall's smallest trigger.
The summary line gives runs, stalls and the ipykernel / pyzmq / jupyter_client versions.
"""
import argparse
import copy
import multiprocessing
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time
from importlib.metadata import version

ROOT = pathlib.Path(__file__).resolve().parent.parent


def burn(stop):
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def dump_stacks(client, label):
    """py-spy dumps of the kernel process and of this (client) process."""
    py_spy = shutil.which("py-spy")
    if not py_spy:
        print("  (py-spy not installed: pip install py-spy to see where each side waits)")
        return
    km = getattr(client, "km", None)
    pids = {"kernel": getattr(getattr(km, "provisioner", None), "pid", None), "client": os.getpid()}
    for who, pid in pids.items():
        if pid is None:
            continue
        out = subprocess.run([py_spy, "dump", "--pid", str(pid)], capture_output=True, text=True)
        print(f"--- py-spy dump of the {who} ({label}, pid {pid}) ---\n{out.stdout}{out.stderr}")


class CellWatch:
    """nbclient hooks timing each cell from its ``execute_request`` to the kernel's ``execute_input``
    (the moment the kernel read the request). A request that sat unread for ``late`` seconds is a
    stall even when something later woke the kernel up; ``py_spy`` dumps both stacks while it sits."""

    def __init__(self, timeout, late, py_spy, label):
        self.timeout, self.late, self.py_spy, self.label = timeout, late, py_spy, label
        self.sent, self.timer, self.worst, self.client = {}, None, (0.0, None, ""), None

    def hooks(self):
        return dict(on_cell_execute=self.on_execute, on_cell_executed=self.on_executed, record_timing=True)

    def on_execute(self, cell, cell_index):
        self.sent[cell_index] = time.time()
        if self.py_spy:
            self.timer = threading.Timer(max(self.timeout - 3, 1), dump_stacks, (self.client, self.label))
            self.timer.start()

    def on_executed(self, cell, cell_index, execute_reply):
        if self.timer:
            self.timer.cancel()
        got_reply = time.time()
        stamps = cell.metadata.get("execution", {})
        if "iopub.execute_input" in stamps:            # the kernel side: request read late
            delay = _epoch(stamps["iopub.execute_input"]) - self.sent[cell_index]
            if delay > self.worst[0]:
                self.worst = (delay, cell_index, "its execute_request sat unread in the kernel")
        if "shell.execute_reply" in stamps:            # the client side: reply read late
            delay = got_reply - _epoch(stamps["shell.execute_reply"])
            if delay > self.worst[0]:
                self.worst = (delay, cell_index, "the kernel's reply sat unread in the client")

    def verdict(self, timed_out):
        if timed_out:
            return timed_out
        delay, index, what = self.worst
        if delay > self.late:
            return f"code cell {index}: {what} for {delay:.1f} s"
        return None


def _epoch(stamp):
    from datetime import datetime
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def run_notebook(nb, runner, timeout, py_spy, label, stock_client):
    from nbclient.exceptions import CellTimeoutError
    from traitlets.config import Config

    from workbook.kernel_client import CLIENT_CLASS

    watch = CellWatch(timeout, late=5.0, py_spy=py_spy, label=label)
    resources = {"metadata": {"path": str(ROOT / "notebooks")}}
    config = Config() if stock_client else Config({"AsyncKernelManager": {"client_class": CLIENT_CLASS}})
    if runner == "nbclient":
        import nbclient
        client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", resources=resources,
                                         config=config, **watch.hooks())
    else:
        from nbgrader.preprocessors import Execute
        # nbgrader's own executor with its defaults (allow_errors, interrupt on timeout), as
        # `make autograde` runs it; a timeout there becomes a CellTimeoutError output.
        client = Execute(timeout=timeout, kernel_name="python3", config=config, **watch.hooks())
        client.nb, client.resources = nb, resources
    watch.client = client
    timed_out = None
    try:
        client.execute() if runner == "nbclient" else client.preprocess(nb, resources)
    except CellTimeoutError as exc:
        timed_out = str(exc).splitlines()[0]
    if runner == "nbgrader":
        for i, cell in enumerate(nb.cells):
            if any(o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", [])):
                timed_out = f"cell {i}: CellTimeoutError"
    return watch.verdict(timed_out)


OUTPUT_CELL = """
import ipywidgets as widgets
from IPython.display import display
out = widgets.Output()
display(out)
for k in range(5):
    with out:
        print("line", k)
"""


def output_loop(n, stock_client):
    import nbclient
    import nbformat
    from traitlets.config import Config

    from workbook.kernel_client import CLIENT_CLASS

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(OUTPUT_CELL) for _ in range(n)])
    config = Config() if stock_client else Config({"AsyncKernelManager": {"client_class": CLIENT_CLASS}})
    client = nbclient.NotebookClient(nb, timeout=5, kernel_name="python3", allow_errors=True, config=config)
    stalled, t0 = 0, time.monotonic()
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            started = time.monotonic()
            try:
                client.execute_cell(cell, i)
            except Exception:
                stalled += 1
                continue
            stalled += time.monotonic() - started > 2.5
    client_name = "stock AsyncKernelClient" if stock_client else "workbook KernelClient"
    print(f"summary: {n} print-into-Output cells ({client_name}, {time.monotonic() - t0:.0f} s), "
          f"{stalled} stalled; ipykernel {version('ipykernel')}, jupyter_client {version('jupyter_client')}")
    return 1 if stalled else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200, help="notebook executions in all")
    ap.add_argument("--notebooks", nargs="+", default=["01", "04"], help="chapter numbers (the widget chapters)")
    ap.add_argument("--runner", choices=["nbclient", "nbgrader"], default="nbclient")
    ap.add_argument("--load", type=int, default=2, help="busy-looping processes meanwhile")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per cell before a stall is called")
    ap.add_argument("--py-spy", action="store_true", help="dump both stacks on the first stall")
    ap.add_argument("--stock-client", action="store_true",
                    help="jupyter_client's AsyncKernelClient instead of workbook.kernel_client's")
    ap.add_argument("--output-loop", type=int, default=0, metavar="N",
                    help="run N print-into-Output cells in one kernel instead of the chapters")
    ap.add_argument("--cut-after", type=int, default=None,
                    help="execute only the first N code cells of each notebook (a quicker loop)")
    args = ap.parse_args(argv)

    import nbformat
    os.environ["AICS_FAST"] = "1"
    if args.output_loop:
        return output_loop(args.output_loop, args.stock_client)
    paths = [next((ROOT / "notebooks").glob(f"{n}-*.ipynb")) for n in args.notebooks]
    notebooks = []
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        if args.cut_after:
            code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
            if len(code) > args.cut_after:
                nb.cells = nb.cells[:code[args.cut_after - 1] + 1]
        notebooks.append((p.stem, nb))
    versions = {m: version(m) for m in ("ipykernel", "pyzmq", "jupyter_client", "nbclient")}
    print("versions:", ", ".join(f"{k} {v}" for k, v in versions.items()), flush=True)

    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=burn, args=(stop,), daemon=True) for _ in range(args.load)]
    for b in burners:
        b.start()
    stalls, t0 = [], time.monotonic()
    try:
        for i in range(args.runs):
            name, nb = notebooks[i % len(notebooks)]
            label = f"run {i + 1} {name}"
            started = time.monotonic()
            stalled = run_notebook(copy.deepcopy(nb), args.runner, args.timeout, args.py_spy and not stalls, label,
                                   args.stock_client)
            took = time.monotonic() - started
            if stalled:
                stalls.append((label, stalled))
                print(f"{label}: STALL after {took:.0f} s: {stalled}", flush=True)
            elif (i + 1) % 10 == 0:
                print(f"{label}: ok ({took:.1f} s); {len(stalls)} stalls so far", flush=True)
    finally:
        stop.set()
        for b in burners:
            b.join(5)
    minutes = (time.monotonic() - t0) / 60
    client = "stock AsyncKernelClient" if args.stock_client else "workbook KernelClient"
    print(f"summary: {args.runs} runs ({args.runner}, {client}, load {args.load}, {minutes:.1f} min), "
          f"{len(stalls)} stalls; " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    return 1 if stalls else 0


if __name__ == "__main__":
    sys.exit(main())
