"""AICS_MIN_LOG_LEVEL / AICS_MIN_VLOG_LEVEL, with TF_CPP_MIN_LOG_LEVEL / TF_CPP_MIN_VLOG_LEVEL semantics.

TF: MIN_LOG_LEVEL 0 shows everything, 1 hides INFO, 2 hides WARNING too,
3 hides ERROR too. VLOG(n) is an INFO message shown when n <= MIN_VLOG_LEVEL.
"""
import inspect
import re

import pytest

import aicslib as aics
from aicslib import flags
from aicslib.framework import logging as log


@pytest.fixture
def levels(monkeypatch):
    def set_levels(log_level=None, vlog_level=None):
        for name, v in (("AICS_MIN_LOG_LEVEL", log_level), ("AICS_MIN_VLOG_LEVEL", vlog_level)):
            if v is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, str(v))
        flags.reload()
    yield set_levels
    monkeypatch.delenv("AICS_MIN_LOG_LEVEL", raising=False)
    monkeypatch.delenv("AICS_MIN_VLOG_LEVEL", raising=False)
    flags.reload()


def emit_all():
    log.info("info-msg")
    log.warning("warning-msg")
    log.error("error-msg")
    for n in (1, 2, 3):
        log.vlog(n, f"vlog{n}-msg")


def shown(err):
    return {m for m in ("info", "warning", "error", "vlog1", "vlog2", "vlog3") if f"{m}-msg" in err}


class TestLevels:
    def test_defaults(self, levels, capfd):
        levels()
        assert (flags.MIN_LOG_LEVEL, flags.MIN_VLOG_LEVEL) == (0, 0)
        emit_all()
        assert shown(capfd.readouterr().err) == {"info", "warning", "error"}

    @pytest.mark.parametrize("level,expected", [
        (0, {"info", "warning", "error"}), (1, {"warning", "error"}), (2, {"error"}), (3, set())])
    def test_min_log_level(self, levels, capfd, level, expected):
        levels(log_level=level)
        emit_all()
        assert shown(capfd.readouterr().err) == expected

    @pytest.mark.parametrize("vlevel,expected", [
        (0, set()), (1, {"vlog1"}), (2, {"vlog1", "vlog2"}), (3, {"vlog1", "vlog2", "vlog3"}),
        (10, {"vlog1", "vlog2", "vlog3"})])
    def test_min_vlog_level(self, levels, capfd, vlevel, expected):
        levels(log_level=0, vlog_level=vlevel)
        emit_all()
        assert shown(capfd.readouterr().err) - {"info", "warning", "error"} == expected

    def test_vlog_is_info_severity(self, levels, capfd):
        levels(log_level=1, vlog_level=3)
        emit_all()
        assert shown(capfd.readouterr().err) == {"warning", "error"}

    def test_vlog_is_on(self, levels):
        levels(vlog_level=2)
        assert log.vlog_is_on(1) and log.vlog_is_on(2) and not log.vlog_is_on(3)

    def test_log_with_severity(self, levels, capfd):
        levels(log_level=1)
        log.log(log.INFO, "a-info")
        log.log(log.ERROR, "a-error")
        err = capfd.readouterr().err
        assert "a-info" not in err and "a-error" in err

    def test_reload_needed_after_env_change(self, levels, monkeypatch, capfd):
        levels(log_level=0)
        monkeypatch.setenv("AICS_MIN_LOG_LEVEL", "3")
        log.error("still-shown")  # flags not re-read yet
        flags.reload()
        log.error("now-hidden")
        err = capfd.readouterr().err
        assert "still-shown" in err and "now-hidden" not in err

    def test_bad_value(self, monkeypatch):
        monkeypatch.setenv("AICS_MIN_VLOG_LEVEL", "loud")
        with pytest.raises(ValueError, match="AICS_MIN_VLOG_LEVEL"):
            flags.reload()
        monkeypatch.delenv("AICS_MIN_VLOG_LEVEL")
        flags.reload()

    def test_blank_means_default(self, levels):
        levels(log_level=" ", vlog_level="")
        assert (flags.MIN_LOG_LEVEL, flags.MIN_VLOG_LEVEL) == (0, 0)


class TestFormat:
    def test_tf_style_prefix_with_caller_location(self, levels, capfd):
        levels()
        line = inspect.currentframe().f_lineno + 1
        log.warning("formatted")
        err = capfd.readouterr().err.strip()
        m = re.fullmatch(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}): ([IWE]) (\S+):(\d+)\] formatted", err)
        assert m, err
        assert m.group(2) == "W"
        assert m.group(3).endswith("test_logging.py") and int(m.group(4)) == line

    def test_session_vlog_names_library_file(self, levels, capfd):
        levels(vlog_level=1)
        with aics.Graph().as_default():
            c = aics.constant(1.0, name="c")
            with aics.Session() as s:
                s.run(c)
        err = capfd.readouterr().err
        assert re.search(r": I aicslib/framework/session\.py:\d+\] Pruning graph for fetches \[c:0\]", err)

    def test_nothing_logged_to_stdout(self, levels, capfd):
        levels(vlog_level=3)
        emit_all()
        assert capfd.readouterr().out == ""
