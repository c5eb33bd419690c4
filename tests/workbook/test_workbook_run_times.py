"""workbook.run_times: a chapter prints the run time `make test-full` measured, or says it was not."""
import json

from workbook import run_times


def test_show_prints_the_recorded_times(tmp_path, monkeypatch, capsys):
    record = tmp_path / "run_times.json"
    record.write_text(json.dumps({"sparse-training": {"full_s": 148.2, "fast_s": 21.0, "measured": "2026-11-28",
                                                      "machine": "2 核 test CPU"}}), encoding="utf-8")
    monkeypatch.setattr(run_times, "RECORD", record)
    run_times.show("sparse-training")
    out = capsys.readouterr().out
    assert "完整设置约 2.5 分钟" in out and "快速设置 (AICS_FAST=1) 约 21 秒" in out and "2026-11-28" in out
    run_times.show("framework-tour")
    assert "尚未测量" in capsys.readouterr().out


def test_the_key_is_the_topic_so_a_renumbering_keeps_it():
    assert run_times.topic_of("15-sparse-training.ipynb") == run_times.topic_of("18-sparse-training.ipynb")
