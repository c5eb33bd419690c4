"""How long each chapter takes to run, as measured: `make test-full` runs every chapter in both
settings and records the times in ``notebooks/run_times.json`` (``tools/time_notebooks.py``); a
chapter's first cell prints its own with ``show("topic")``, so the time a chapter states is
always one that was measured."""
import json
import pathlib

RECORD = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "run_times.json"


def topic_of(notebook_name):
    """``"18-sparse-training.ipynb"`` -> ``"sparse-training"``: the key survives a renumbering."""
    return pathlib.Path(notebook_name).stem.split("-", 1)[1]


def _seconds(s):
    return f"{s:.0f} 秒" if s < 120 else f"{s / 60:.1f} 分钟"


def recorded(topic):
    try:
        return json.loads(RECORD.read_text(encoding="utf-8")).get(topic)
    except FileNotFoundError:
        return None


def show(topic):
    """Prints this chapter's measured run time in the full and the quick (AICS_FAST=1) setting."""
    rec = recorded(topic)
    if not rec:
        print("运行时间：尚未测量（`make test-full` 会运行并记录每一章的时间）。")
        return
    parts = [f"完整设置约 {_seconds(rec['full_s'])}" if "full_s" in rec else None,
             f"快速设置 (AICS_FAST=1) 约 {_seconds(rec['fast_s'])}" if "fast_s" in rec else None]
    print(f"运行时间：{'，'.join(p for p in parts if p)}（{rec.get('machine', '')}上由 `make test-full` 于 "
          f"{rec.get('measured', '?')} 实测）。")
