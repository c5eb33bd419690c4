"""workbook.grading (what the notebooks' locked test cells report) and workbook.kernel_client."""
import linecache
import time

import numpy as np
import pytest

import aicslib as aics
from workbook import grading


def cell_function(source, name):
    """A function defined as a notebook cell defines it: IPython's cell file name, its source in
    linecache."""
    filename = f"/tmp/ipykernel_1/{abs(hash(source))}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns = {"np": np, "aics": aics}
    exec(compile(source, filename, "exec"), ns)
    return ns[name]


def run_exercise(name, body):
    with grading.exercise(name):
        body()
    return grading.status(name)


def test_an_unanswered_exercise_reports_on_stderr_without_raising(capsys):
    stub = cell_function("def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n", "f")
    assert run_exercise("ex_stub", lambda: stub(1)) == "unanswered"
    out = capsys.readouterr()
    assert "ex_stub: not answered yet" in out.err and out.out == ""


def test_a_failed_check_reports_expected_and_got_without_library_frames(capsys):
    assert run_exercise("ex_wrong", lambda: grading.check_array([1.0, 2.0, 4.0], [1.0, 2.0, 3.0], "y")) == "failed"
    err = capsys.readouterr().err
    assert "y: 1 of 3 entries differ; the first at index (2,): expected 3.0, got 4.0" in err
    assert "Traceback" not in err and "grading.py" not in err


def test_an_error_in_the_students_code_names_its_line(capsys):
    broken = cell_function("def f(x):\n    y = x + 1\n    return y[5]\n", "f")
    assert run_exercise("ex_raise", lambda: broken(np.zeros(2))) == "failed"
    err = capsys.readouterr().err
    assert "your code raised IndexError" in err and "in f, line 3: return y[5]" in err


def test_a_library_notimplementederror_is_not_taken_for_the_stub(capsys):
    def library_part():
        raise NotImplementedError("ragged tensors are out of scope")
    assert run_exercise("ex_lib", library_part) == "failed"
    assert "ragged tensors" in capsys.readouterr().err


def test_passing_checks_print_one_line_on_stdout_and_warnings_do_not_cost_points(capsys):
    def checks():
        with np.errstate(divide="warn"):
            np.log(np.zeros(1))
        grading.check(True, "never shown")
    assert run_exercise("ex_ok", checks) == "passed"
    out = capsys.readouterr()
    assert out.err == "" and "✓ ex_ok: all checks pass" in out.out and "RuntimeWarning" in out.out


def test_use_falls_back_to_the_reference_until_the_exercise_passes(capsys):
    mine, ref = (lambda: "mine"), (lambda: "ref")
    assert grading.use("ex_never_run", mine, ref)() == "ref"
    assert "has not been checked yet" in capsys.readouterr().out
    run_exercise("ex_pass", lambda: None)
    assert grading.use("ex_pass", mine, ref)() == "mine"
    stub = cell_function("def f():\n    raise NotImplementedError()\n", "f")
    run_exercise("ex_missing", stub)
    capsys.readouterr()
    assert grading.use("ex_missing", mine, ref, what="im2col")() == "ref"
    assert "is not answered yet: the cells below use the reference im2col" in capsys.readouterr().out


@pytest.mark.parametrize("got, expected, kwargs, fragment", [
    (np.zeros((2, 3)), np.zeros((3, 2)), {}, "expected shape (3, 2), got (2, 3)"),
    (np.zeros(3, np.float64), np.zeros(3, np.float32), {"dtype": np.float32}, "expected dtype float32, got float64"),
    ([[1, 2], [3, 5]], [[1, 2], [3, 4]], {}, "the first at index (1, 1): expected 4, got 5"),
])
def test_check_array_messages(got, expected, kwargs, fragment):
    with pytest.raises(grading.CheckFailed, match=".*") as e:
        grading.check_array(got, expected, "the matrix", **kwargs)
    assert fragment in str(e.value)


def test_check_array_ulps_accepts_one_float32_rounding_and_rejects_two_ulps():
    e = np.float32([128.0, 200.5, 255.0])
    one_ulp = np.nextafter(e, np.float32(np.inf))
    grading.check_array(one_ulp, e, "pixels", ulps=1)          # float32 rounding of the same lerp
    two_ulps = np.nextafter(one_ulp, np.float32(np.inf))
    with pytest.raises(grading.CheckFailed):
        grading.check_array(two_ulps, e, "pixels", ulps=1)
    with pytest.raises(grading.CheckFailed):                    # an absolute 1e-5 at 128-255 is under one ulp
        grading.check_array(one_ulp, e, "pixels", atol=1e-5)


def test_no_library_calls_names_the_library_function_and_honours_allowed():
    def calls_library(x):
        return aics.nn.relu(x).numpy()

    def numpy_only(x):
        return np.maximum(x, 0)
    np.testing.assert_array_equal(grading.no_library_calls(numpy_only, np.array([-1.0, 2.0])), [0.0, 2.0])
    with pytest.raises(grading.CheckFailed, match="calls the library .*relu"):
        grading.no_library_calls(calls_library, np.ones(2))
    grading.no_library_calls(calls_library, np.ones(2), allowed={"relu", "numpy"})


def test_python_lines_tells_a_loop_per_pixel_from_vectorised_code():
    looped = cell_function("def f(x):\n    out = np.empty_like(x)\n    for i in range(x.size):\n"
                           "        out.flat[i] = x.flat[i] * 2\n    return out\n", "f")
    vectorised = cell_function("def g(x):\n    return x * 2\n", "g")
    x = np.arange(400.0)
    for fn in (looped, vectorised):
        result, lines = grading.python_lines(fn, x)
        np.testing.assert_array_equal(result, x * 2)
    assert grading.python_lines(looped, x)[1] > 400 > 10 > grading.python_lines(vectorised, x)[1]


def test_kernel_client_reads_every_reply_while_an_output_widget_mirrors_its_state():
    """nbclient sends on the shell channel while it waits there for the reply whenever a cell
    prints into an ipywidgets.Output; the stock client then sometimes reads the reply only at the
    cell timeout (tools/kernel_stress.py --output-loop: ~1 cell in 11). None of 60 may wait."""
    nbclient = pytest.importorskip("nbclient")
    import nbformat
    from traitlets.config import Config

    from workbook.kernel_client import CLIENT_CLASS, KernelClient

    cell = ("import ipywidgets as widgets\nfrom IPython.display import display\nout = widgets.Output()\n"
            "display(out)\nfor k in range(5):\n    with out:\n        print(k)\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for _ in range(60)])
    client = nbclient.NotebookClient(nb, timeout=10, kernel_name="python3",
                                     config=Config({"AsyncKernelManager": {"client_class": CLIENT_CLASS}}))
    slow = []
    with client.setup_kernel():
        assert isinstance(client.kc, KernelClient)
        for i, c in enumerate(nb.cells):
            t0 = time.monotonic()
            client.execute_cell(c, i)
            if time.monotonic() - t0 > 5:
                slow.append(i)
    assert slow == [], f"cells whose reply waited: {slow}"
    captured = [w["outputs"] for w in client.widget_state.values() if w.get("_model_name") == "OutputModel"]
    assert len(captured) == 60 and all("".join(o["text"] for o in outs) == "0\n1\n2\n3\n4\n" for outs in captured)


def test_feedback_shows_the_answers_lines_but_not_the_locked_cells(capsys):
    """The locked test cell's own lines (hidden tests among them) never reach the feedback."""
    answer = cell_function("def f(x):\n    return x[5]\n", "f")
    test_cell = ("from workbook import grading\n"
                 "with grading.exercise('ex_hidden'):\n"
                 "    secret_hidden_check = f([1, 2])\n")
    filename = "/tmp/ipykernel_1/locked_test_cell.py"
    linecache.cache[filename] = (len(test_cell), None, test_cell.splitlines(True), filename)
    exec(compile(test_cell, filename, "exec"), {"f": answer})
    err = capsys.readouterr().err
    assert "in f, line 2: return x[5]" in err and "secret_hidden_check" not in err
