"""Runs every chapter top to bottom and records how long it took (``make test-full``).

    .venv/bin/python tools/time_notebooks.py --setting full     # or fast (AICS_FAST=1)

Each notebook runs in a fresh kernel (nbclient, the workbook's kernel client); a cell that raises
fails the run, naming the notebook and the cell, as nbval would. The wall time of each notebook
is written to ``notebooks/run_times.json`` (``full_s`` or ``fast_s``, with the date and the
machine), which each chapter's first cell prints (``workbook.run_times.show``).
"""
import argparse
import datetime
import json
import os
import pathlib
import sys
import time

import nbclient
import nbformat
from traitlets.config import Config

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from aicslib.framework.file_io import atomic_write_string_to_file  # noqa: E402
from workbook.kernel_client import CLIENT_CLASS  # noqa: E402
from workbook.run_times import RECORD, topic_of  # noqa: E402


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               "") if os.path.exists("/proc/cpuinfo") else ""
    return f"{os.cpu_count()} 核 {cpu}".strip()


def run(path, timeout):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False,
                                     resources={"metadata": {"path": str(path.parent)}},
                                     config=Config({"AsyncKernelManager": {"client_class": CLIENT_CLASS}}))
    t0 = time.monotonic()
    client.execute()
    return time.monotonic() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setting", choices=["full", "fast"], required=True)
    ap.add_argument("--only", nargs="*", help="chapter numbers (default: all)")
    ap.add_argument("--cell-timeout", type=int, default=1800)
    args = ap.parse_args(argv)
    if args.setting == "fast":
        os.environ["AICS_FAST"] = "1"
    else:
        os.environ.pop("AICS_FAST", None)
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    if args.only:
        paths = [p for p in paths if p.name[:2] in args.only]
    record = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}
    today, where, failed = datetime.date.today().isoformat(), machine(), []
    for path in paths:
        try:
            seconds = run(path, args.cell_timeout)
        except (nbclient.exceptions.CellExecutionError, nbclient.exceptions.CellTimeoutError) as exc:
            failed.append(path.name)
            print(f"{path.name}: FAILED\n{str(exc)[-2000:]}", flush=True)
            continue
        entry = record.setdefault(topic_of(path.name), {})
        entry.update({f"{args.setting}_s": round(seconds, 1), "measured": today, "machine": where})
        print(f"{path.name}: {seconds:.1f} s ({args.setting})", flush=True)
        text = json.dumps(record, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        atomic_write_string_to_file(str(RECORD), text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
