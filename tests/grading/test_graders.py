"""Every graded exercise, checked inside one kernel per notebook.

Each instructor notebook runs once in a fresh kernel (AICS_FAST=1), from the top to its last
graded cell: every cell must run without an error (the whole notebook runs in the browser tests,
``tests/browser``). At each locked test cell (hidden tests included, as ``make autograde``
restores them) the solution cell above it is swapped, in the same kernel:

- the reference solution: full marks;
- the release stub (what an untouched release holds): zero, reported in the test cell;
- every plausible wrong answer in ``tests/grading/answers_NN.py``: its solution cell runs, the
  locked test cell scores zero, and the cause is a failed check in that cell, not a
  ``NameError``/``SyntaxError`` or an error in the solution cell;
- every different correct answer (``CORRECT_ANSWERS``): full marks;

then the reference solution and its test run again (full marks), so the rest of the notebook
runs on the reference. Scores are nbgrader's own (``determine_grade``). nbgrader's release and
autograde themselves are tested end to end on a small fixture in ``test_autograde.py``.
"""
import os
import time

import nbformat
import pytest
from traitlets.config import Config

from workbook.kernel_client import CLIENT_CLASS

from .notebook_cells import (NOTEBOOK_DIR, NOTEBOOKS, describe_failure, error_outputs, exercises, fill_stub,
                             is_solution, is_test, nbgrader_meta, read, release_cell, score, stderr_text)
from .wrong_answers import CORRECT_ANSWERS, WRONG_ANSWERS

nbclient = pytest.importorskip("nbclient")
pytest.importorskip("nbgrader", reason="nbgrader is the 'grading' extra: pip install -e '.[grading]'")

CELL_TIMEOUT = int(os.environ.get("AICS_CELL_TIMEOUT", "300"))   # s; a stalled cell fails, naming itself
NOT_A_CHECK = ("NameError", "SyntaxError", "IndentationError", "ImportError", "ModuleNotFoundError")


class Kernel:
    """One notebook's kernel: runs cells (copies; the notebook itself is not changed) in order."""

    def __init__(self, nb, name):
        self.nb, self.name = nbformat.from_dict(nb), name
        self.client = nbclient.NotebookClient(
            self.nb, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=True,
            interrupt_on_timeout=False, resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
            config=Config({"AsyncKernelManager": {"client_class": CLIENT_CLASS}}))

    def run(self, index, source):
        """Runs `source` as cell `index` (the kernel's notebook keeps the last run of each cell, so
        a later display update finds its output) and returns that cell."""
        cell = nbformat.from_dict(self.nb.cells[index])
        cell.source, cell.outputs = source, []
        self.nb.cells[index] = cell
        t0 = time.monotonic()
        try:
            self.client.execute_cell(cell, index)
        except nbclient.exceptions.CellTimeoutError:
            pytest.fail(f"{self.name}: cell {index} ({nbgrader_meta(cell).get('grade_id') or 'code'}) "
                        f"gave no reply within {CELL_TIMEOUT} s:\n{cell.source[:400]}")
        took = time.monotonic() - t0
        if took > 10:
            print(f"{self.name}: cell {index} took {took:.1f} s: {source[:80]!r}")
        return cell


def _solution_above(cells, index):
    for i in range(index - 1, -1, -1):
        if is_solution(cells[i]):
            return i
    raise AssertionError(f"test cell {index} has no solution cell above it")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_exercises_in_one_kernel(path, monkeypatch):
    monkeypatch.setenv("AICS_FAST", "1")
    nb = read(path)
    kernel = Kernel(nb, path.stem)
    problems, checked = [], 0
    last_graded = max(i for i, c in enumerate(nb.cells) if is_test(c))
    with kernel.client.setup_kernel():
        for index, cell in enumerate(nb.cells[:last_graded + 1]):
            if cell.cell_type != "code":
                continue
            ran = kernel.run(index, cell.source)
            if error_outputs(ran):
                problems.append(f"cell {index} raised {describe_failure(ran)}")
                if not is_test(cell):
                    break                        # later cells would only repeat the error
            if not is_test(cell):
                continue
            sol_index = _solution_above(nb.cells, index)
            sol_id = nbgrader_meta(nb.cells[sol_index])["grade_id"]
            reference = nb.cells[sol_index].source
            points = score(ran)
            if points[0] != points[1]:
                problems.append(f"{sol_id}: the reference scored {points}: {describe_failure(ran)}")

            stub = release_cell(nb.cells[sol_index]).source
            variants = [("untouched release", stub, "zero")]
            variants += [(f"wrong answer {n!r}", fill_stub(stub, code), "zero")
                         for n, code in WRONG_ANSWERS.get(sol_id, {}).items()]
            variants += [(f"correct answer {n!r}", fill_stub(stub, code), "full")
                         for n, code in CORRECT_ANSWERS.get(sol_id, {}).items()]
            reports = "grading.exercise(" in cell.source     # the workbook.grading protocol
            for what, source, expect in variants:
                checked += 1
                sol = kernel.run(sol_index, source)
                if error_outputs(sol):
                    problems.append(f"{sol_id}, {what}: the solution cell itself raised "
                                    f"{describe_failure(sol)}")
                    continue
                test = kernel.run(index, cell.source)
                got = score(test)
                cause = describe_failure(test)
                if expect == "full" and got[0] != got[1]:
                    problems.append(f"{sol_id}, {what}: scored {got}, expected full marks: {cause}")
                elif expect == "zero":
                    if got[0] != 0:
                        problems.append(f"{sol_id}, {what}: scored {got}, expected zero")
                    elif any(name in cause for name in NOT_A_CHECK):
                        problems.append(f"{sol_id}, {what}: failed for the wrong reason: {cause}")
                    elif reports and error_outputs(test):
                        problems.append(f"{sol_id}, {what}: the test cell raised (Run All would stop there) "
                                        f"instead of reporting: {cause}")
                    elif reports and what == "untouched release" and "not answered yet" not in stderr_text(test):
                        problems.append(f"{sol_id}, {what}: the test cell does not say it is not answered: {cause}")
            # back to the reference for the rest of the notebook
            kernel.run(sol_index, reference)
            again = score(kernel.run(index, cell.source))
            if again[0] != again[1]:
                problems.append(f"{sol_id}: the reference scored {again} after the swaps (state leaked)")
    expected = sum(1 + len(WRONG_ANSWERS.get(sol, {})) + len(CORRECT_ANSWERS.get(sol, {}))
                   for name, sol, _, _ in exercises([path]))
    assert not problems, f"{path.stem}:\n" + "\n".join(problems)
    assert checked == expected, f"{path.stem}: checked {checked} answers of {expected}"


def test_every_chapter_has_graded_exercises_and_every_exercise_wrong_answers():
    found = exercises()
    assert {name for name, *_ in found} == {p.stem for p in NOTEBOOKS}, "every notebook needs a graded exercise"
    solutions = {sol for _, sol, _, _ in found}
    assert solutions == set(WRONG_ANSWERS), "every exercise needs plausible wrong answers (and only those)"
    assert set(CORRECT_ANSWERS) <= solutions, "correct answers for an exercise that does not exist"
    assert all(len(v) >= 3 for v in WRONG_ANSWERS.values())


def test_the_course_is_graded_throughout():
    """At least two graded exercises in every chapter, at least 30 in all and 120 points, and
    every exercise with a different correct answer that must score full marks."""
    found = exercises()
    per_chapter = {}
    for name, *_ in found:
        per_chapter[name] = per_chapter.get(name, 0) + 1
    thin = sorted(name for name, n in per_chapter.items() if n < 2)
    assert not thin, f"chapters with fewer than two graded exercises: {thin}"
    assert len(found) >= 30, f"{len(found)} graded exercises in the course"
    points = sum(p for *_, p in found)
    assert points >= 120, f"{points:g} points in the course"
    without = sorted(sol for _, sol, _, _ in found if not CORRECT_ANSWERS.get(sol))
    assert not without, f"exercises without a different correct answer: {without}"
