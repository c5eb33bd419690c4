"""`make autograde` end to end, with nbgrader itself, on a small chapter
(``fixtures/90-mini-chapter.py``: two exercises with hidden tests, written with the chapters'
grading protocol; every real chapter's exercises are checked by ``test_graders.py``) and four students:

- ``reference`` hands in the instructor notebook: full marks, no cell fails;
- ``untouched`` hands in the release as generated: zero, and every other cell still runs;
- ``wrong`` hands in a plausible wrong answer: zero for that exercise;
- ``endless`` hands in an answer that never returns: zero after one cell timeout, the run goes
  on (no retry), and the report names the student, notebook and cell.

Then ``wrong`` hands in a corrected notebook and only that student is graded again: the kept
gradebook updates that row and leaves the others as they were. The whole autograde matrix (every
chapter, every wrong answer, through nbgrader) is ``test_autograde_matrix.py`` in ``make test-full``.
"""
import csv
import re
import subprocess
import time

import jupytext
import nbformat
import pytest

from .notebook_cells import (HIDDEN_RE, ROOT, error_outputs, exercises, fill_stub, is_solution,
                             is_test, nbgrader_meta, read, release_cell)

pytest.importorskip("nbgrader", reason="nbgrader is the 'grading' extra: pip install -e '.[grading]'")

FIXTURE = ROOT / "tests" / "grading" / "fixtures" / "90-mini-chapter.py"
CHAPTER = FIXTURE.with_suffix(".ipynb")  # its name; written by the fixture below
WRONG = {"mini_relu": "return np.abs(x)\n", "mini_square_sum": "return float(np.sum(x) ** 2)\n"}
CELL_TIMEOUT = 10      # s; the fixture chapter's cells take well under a second
# never returns, and sleeps meanwhile: a spinning loop would take one of the two cores from every
# other test for the whole timeout (the cell timeout ends either the same way)
ENDLESS = "import time\nwhile True:\n    time.sleep(0.05)\n"


def submission(instructor, answer_for):
    """The release of `instructor` with `answer_for(grade_id, release source)` in each solution cell."""
    nb = nbformat.from_dict(instructor)
    for cell in nb.cells:
        if is_solution(cell):
            cell.source = answer_for(nbgrader_meta(cell)["grade_id"], release_cell(cell).source)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def autograde(subs, grades, notebooks, student=None):
    cmd = ["make", "-s", "autograde", f"SUBMISSIONS={subs}", f"GRADES_DIR={grades}", f"COURSE_NOTEBOOKS={notebooks}",
           f"CELL_TIMEOUT={CELL_TIMEOUT}", "JOBS=2"] + ([f"STUDENT={student}"] if student else [])
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"make autograde failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout, time.monotonic() - t0


def by_exercise(grades):
    with open(grades / "grades_by_exercise.csv", newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("autograde")
    notebooks, subs, grades = tmp / "notebooks", tmp / "submissions", tmp / "grades"
    notebooks.mkdir()
    instructor = jupytext.read(FIXTURE)
    instructor.metadata.pop("jupytext", None)
    nbformat.write(instructor, notebooks / CHAPTER.name)
    wrong = WRONG
    students = {
        "reference": instructor,
        "untouched": submission(instructor, lambda gid, stub: stub),
        "wrong": submission(instructor, lambda gid, stub: fill_stub(stub, wrong[gid])),
        "endless": submission(instructor, lambda gid, stub: fill_stub(stub, ENDLESS) if gid == "mini_relu" else stub),
    }
    for sid, nb in students.items():
        (subs / sid).mkdir(parents=True)
        nbformat.write(nb, subs / sid / CHAPTER.name)
    out, seconds = autograde(subs, grades, notebooks)
    first = by_exercise(grades)
    with open(grades / "grades.csv", newline="") as f:
        totals = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f)}
    # `wrong` fixes the answer; only that student is graded again.
    nbformat.write(instructor, subs / "wrong" / CHAPTER.name)
    again_out, _ = autograde(subs, grades, notebooks, student="wrong")
    with open(grades / "leaderboard.csv", newline="") as f:
        board = list(csv.DictReader(f))
    return dict(tmp=tmp, grades=grades, out=out, seconds=seconds, first=first, totals=totals, again=by_exercise(grades),
                again_out=again_out, board=board,
                columns=[(sol, test, pts) for nb, sol, test, pts in exercises([notebooks / CHAPTER.name])])


def _column(row, test_id):
    return next(float(v) for k, v in row.items() if k.startswith(f"{CHAPTER.stem}/{test_id} "))


def test_scores_per_student_and_exercise(graded):
    first = graded["first"]
    assert set(first) == {"reference", "untouched", "wrong", "endless"}
    for _, test_id, points in graded["columns"]:
        assert _column(first["reference"], test_id) == points
        for sid in ("untouched", "wrong", "endless"):
            assert _column(first[sid], test_id) == 0, sid
    total = sum(p for *_, p in graded["columns"])
    assert float(first["reference"][next(k for k in first["reference"] if k.startswith("total"))]) == total
    assert graded["totals"] == {"reference": total, "untouched": 0.0, "wrong": 0.0, "endless": 0.0}


def test_progress_is_printed_per_notebook(graded):
    for sid in ("reference", "untouched", "wrong", "endless"):
        assert re.search(rf"{sid}: {CHAPTER.stem} \(\d+/4 notebooks\)", graded["out"]), sid


def test_an_endless_answer_scores_zero_after_one_timeout_and_is_named(graded):
    assert re.search(rf"endless: {CHAPTER.stem}, code cell \d+ \(exercise test '\w+'\) did not finish", graded["out"])
    # one timeout, not a retry: the notebook is started once and one cell is named
    assert len(re.findall(r"endless: .* did not finish", graded["out"])) == 1, graded["out"]
    assert len(re.findall(rf"endless: {CHAPTER.stem} \(", graded["out"])) == 1, graded["out"]


def test_untouched_release_runs_past_the_exercise(graded):
    autograded = read(graded["grades"] / "course" / "autograded" / "untouched" / "workbook" / CHAPTER.name)
    failing = [nbgrader_meta(c).get("grade_id", i) for i, c in enumerate(autograded.cells)
               if c.cell_type == "code" and error_outputs(c) and not is_test(c)]
    assert failing == [], f"cells other than the locked tests failed: {failing}"
    assert all(c.get("execution_count") for c in autograded.cells if c.cell_type == "code" and c.source.strip())
    # what follows the last graded cell cannot change a score and is not run
    assert not any("not run when grading" in c.source for c in autograded.cells)


def test_feedback_for_everyone_without_hidden_tests(graded):
    hidden = [line.strip() for c in jupytext.read(FIXTURE).cells if is_test(c)
              for block in HIDDEN_RE.findall(c.source) for line in block.splitlines() if len(line.strip()) >= 12]
    assert hidden, "the chapter's test has hidden tests to look for"
    for sid in graded["first"]:
        html = (graded["grades"] / "feedback" / sid / f"{CHAPTER.stem}.html").read_text(encoding="utf-8")
        leaked = [line for line in hidden if line in html]
        assert not leaked, f"{sid}'s feedback shows hidden tests: {leaked[:3]}"


def test_regrading_one_student_updates_only_that_row(graded):
    first, again = graded["first"], graded["again"]
    for _, test_id, points in graded["columns"]:
        assert _column(again["wrong"], test_id) == points
    assert {k: v for k, v in again.items() if k != "wrong"} == {k: v for k, v in first.items() if k != "wrong"}
    assert "reference:" not in graded["again_out"]


def test_leaderboard_figures_become_a_column_and_a_ranking(graded):
    column = "leaderboard: 90-mini-chapter: square_sum(1, 2, 3)"
    first = graded["first"]
    # what each student's own answer printed: the reference 14, the wrong answer (sum)^2 = 36;
    # an unanswered exercise prints nothing
    assert (first["reference"][column], first["wrong"][column], first["untouched"][column]) == ("14", "36", "")
    # after the regrade both print 14; the ranking keeps every student who printed a figure
    assert sorted((r["student_id"], r["value"]) for r in graded["board"]) == [("reference", "14"), ("wrong", "14")]
    assert sorted(r["rank"] for r in graded["board"]) == ["1", "2"]
