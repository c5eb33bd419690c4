"""The graded exercises' side of the notebooks: what a locked test cell reports, and what the
cells after an exercise run when the student's answer is not ready yet.

A locked test cell wraps its checks in ``exercise(name)``::

    with grading.exercise("my_im2col"):
        grading.check_array(my_im2col(x, 3, 3, 1, "SAME"), expected, "the im2col matrix")

- an unanswered exercise (the release's ``raise NotImplementedError()``) prints "not answered
  yet" on stderr and does not raise, so JupyterLab's Run All carries on; nbgrader scores any
  stderr output of a test cell zero;
- a failed check prints what was expected and what came, without a traceback through library or
  test code (the frames of the student's own cells are shown when their code raised), also on
  stderr, also without raising;
- all checks passing prints one line on stdout: full marks.

``use(name, answer, reference)`` gives the cells below an exercise the student's function once
its checks passed, and the reference (from the package, never printed in the notebook) until
then, saying so. ``no_library_calls`` and ``python_lines`` check the rules an exercise states
(write it yourself; no Python loop per pixel).
"""
import contextlib
import os
import sys
import traceback
import warnings

import numpy as np

_status = {}          # exercise name -> "passed" | "failed" | "unanswered"


class CheckFailed(AssertionError):
    """A check of an exercise failed; its message is written for the student."""


def status(name):
    """'passed', 'failed', 'unanswered', or None when the exercise's test cell has not run."""
    return _status.get(name)


def _is_cell(filename):
    return filename.startswith(("<ipython-input-", "<cell")) or "/ipykernel_" in filename


def _student_frames(exc, test_cell=None):
    """The frames of ``exc``'s traceback that are in notebook cells (the student's code), leaving
    out the locked test cell's own (its hidden lines must not reach the feedback)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _is_cell(f.filename) and f.filename != test_cell]
    return "".join(f"    in {f.name}, line {f.lineno}: {(f.line or '').strip()}\n" for f in frames)


def _calling_cell():
    """The file name of the notebook cell running ``with exercise(...)`` (the locked test cell)."""
    frame = sys._getframe(1)
    while frame is not None and not _is_cell(frame.f_code.co_filename):
        frame = frame.f_back
    return frame.f_code.co_filename if frame is not None else None


def _is_release_stub(exc, test_cell):
    """The release's ``raise NotImplementedError()``: no message, raised from a notebook cell."""
    return isinstance(exc, NotImplementedError) and not exc.args and bool(_student_frames(exc, test_cell))


@contextlib.contextmanager
def exercise(name):
    """Runs a locked test cell's checks for exercise ``name`` and reports the outcome (see the
    module docstring); never raises."""
    _status[name] = "running"
    test_cell = _calling_cell()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except NotImplementedError as exc:
            if not _is_release_stub(exc, test_cell):
                _fail(name, f"{type(exc).__name__}: {exc}", _student_frames(exc, test_cell))
                return
            _status[name] = "unanswered"
            print(f"✗ {name}: not answered yet (0 points). Write your answer in the cell above this one "
                  f"and run both again.", file=sys.stderr)
            return
        except CheckFailed as exc:
            _fail(name, str(exc), "")
            return
        except AssertionError as exc:
            _fail(name, str(exc) or "a check failed", _student_frames(exc, test_cell))
            return
        except Exception as exc:
            _fail(name, f"your code raised {type(exc).__name__}: {exc}", _student_frames(exc, test_cell))
            return
    _status[name] = "passed"
    for w in caught:       # shown, but on stdout: a warning alone must not cost the points
        print(f"  note: {w.category.__name__}: {w.message}")
    print(f"✓ {name}: all checks pass")


def _fail(name, message, frames):
    _status[name] = "failed"
    print(f"✗ {name}: {message}\n{frames}  (0 points until every check passes)", file=sys.stderr)


def use(name, answer, reference, what=None):
    """The function the cells below should call: ``answer`` once exercise ``name`` passed its
    checks, else ``reference`` (saying so once, on stdout)."""
    if _status.get(name) == "passed":
        return answer
    why = {"unanswered": "is not answered yet", "failed": "did not pass its checks"}.get(
        _status.get(name), "has not been checked yet (run its test cell)")
    print(f"note: exercise {name} {why}: the cells below use the reference {what or name}.")
    return reference


def check(condition, message):
    """Fails with ``message`` (for the student) unless ``condition``."""
    if not condition:
        raise CheckFailed(message)


def _fmt(v):
    return np.array2string(np.asarray(v), precision=6, threshold=8) if np.ndim(v) else f"{np.asarray(v).item()!r}"


def check_array(got, expected, what, *, dtype=None, rtol=0.0, atol=0.0, ulps=None, hint=None):
    """Fails unless ``got`` has ``expected``'s shape (and ``dtype`` when given) and its values:
    exactly by default, within ``atol + rtol*|expected|``, or within ``ulps`` units in the last
    place of ``dtype`` (float32 by default) at ``expected``'s magnitude. The message names
    ``what``, the first differing index, both values and how many entries differ."""
    expected = np.asarray(expected)
    try:
        got = np.asarray(got)
    except Exception as exc:
        raise CheckFailed(f"{what}: expected an array of shape {expected.shape}, got {type(got).__name__} ({exc})")
    tail = f" Hint: {hint}" if hint else ""
    if got.shape != expected.shape:
        raise CheckFailed(f"{what}: expected shape {expected.shape}, got {got.shape}.{tail}")
    if dtype is not None and got.dtype != np.dtype(dtype):
        raise CheckFailed(f"{what}: expected dtype {np.dtype(dtype).name}, got {got.dtype.name}.{tail}")
    if got.dtype.kind in "fc" or expected.dtype.kind in "fc":
        g, e = got.astype(np.float64), expected.astype(np.float64)
        if ulps is not None:
            spacing = np.spacing(np.abs(e).astype(np.dtype(dtype or np.float32))).astype(np.float64)
            tol = ulps * np.maximum(spacing, np.finfo(np.dtype(dtype or np.float32)).smallest_subnormal)
        else:
            tol = atol + rtol * np.abs(e)
        bad = ~((np.abs(g - e) <= tol) | (np.isnan(g) & np.isnan(e)) | (g == e))
    else:
        bad = got != expected
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        n = int(np.count_nonzero(bad))
        raise CheckFailed(f"{what}: {n} of {bad.size} entries differ; the first at index {idx}: "
                          f"expected {_fmt(expected[idx])}, got {_fmt(got[idx])}.{tail}")


def _library_dirs():
    import aicslib

    # this file's own folder, not sys.modules' entry for the package: a test may have put another there
    return (os.path.dirname(os.path.abspath(aicslib.__file__)) + os.sep,
            os.path.dirname(os.path.abspath(__file__)) + os.sep)


def library_calls(fn, *args, **kwargs):
    """(result of ``fn(*args, **kwargs)``, names of the aicslib and workbook functions it called
    directly, i.e. from code outside those packages): the library's own implementations and the
    references the cells below an exercise fall back on."""
    from aicslib.test import direct_calls

    dirs = _library_dirs()
    result, called = direct_calls(lambda: fn(*args, **kwargs), lambda code: code.co_filename.startswith(dirs))
    # (<module> is a first import, not a call)
    return result, {name for name in called if not name.startswith("<")}


def no_library_calls(fn, *args, allowed=(), what="your answer", how="with NumPy", **kwargs):
    """Calls ``fn(*args, **kwargs)`` and returns its result; fails when it called aicslib's or
    the workbook's functions directly (other than ``allowed``): the library's own implementation
    or the reference is not an answer. ``how`` says what the answer should use instead."""
    result, called = library_calls(fn, *args, **kwargs)
    extra = sorted(called - set(allowed))
    check(not extra, f"{what} calls the library ({', '.join(extra)}): write it yourself {how}"
                     + (f" (allowed: {', '.join(sorted(allowed))})" if allowed else ""))
    return result


def python_lines(fn, *args, **kwargs):
    """(result, Python lines executed in ``fn``'s own code and the functions it defines): a
    vectorised answer runs a few dozen lines whatever the input size; a loop per pixel runs
    thousands."""
    code = fn.__code__
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != code.co_filename:
            return None
        if event == "line":
            count += 1
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.settrace(previous)
    return result, count


LEADERBOARD_MARK = "[leaderboard]"


def leaderboard(name, value, unit=""):
    """Prints a measured figure (a speedup, say) that ``make autograde`` gathers into a column of
    grades_by_exercise.csv and a ranking, grades/leaderboard.csv. It is not a score."""
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"leaderboard({name!r}): the value must be a finite number, got {value}")
    print(f"{LEADERBOARD_MARK} {name} = {value:.6g}{unit}")
