"""The whole autograde matrix through nbgrader (``make test-full``): every chapter, and a student
per rank of wrong answer.

- ``reference`` hands in the instructor notebooks: full marks, no cell fails;
- ``untouched`` hands in the release as generated: zero on every exercise, and only the locked
  test cells may fail (Run All gets past every unfinished exercise);
- ``wrong<k>`` hands in the release with the k-th plausible wrong answer of every exercise that
  has one (the other exercises of the notebook get the reference): each wrong answer loses
  exactly its exercise's points. These submissions stop after the notebook's last graded cell
  (students may delete ordinary cells; nbgrader restores only the locked ones).

``make test`` checks the same answers faster, inside one kernel per notebook
(``test_graders.py``), and nbgrader end to end on one chapter (``test_autograde.py``).
"""
import csv
import subprocess

import nbformat
import pytest

from .notebook_cells import (NOTEBOOKS, ROOT, error_outputs, exercises, fill_stub, is_solution, is_test,
                             nbgrader_meta, read, release_cell)
from .wrong_answers import WRONG_ANSWERS

pytestmark = pytest.mark.full
pytest.importorskip("nbgrader", reason="nbgrader is the 'grading' extra: pip install -e '.[grading]'")


def submission(instructor, answers):
    """The instructor notebook with `answers[grade_id]` in those solution cells (None: the release's
    stub, unanswered); the reference solution elsewhere. (make autograde runs it up to its last
    graded cell.)"""
    nb = nbformat.from_dict(instructor)
    for cell in nb.cells:
        if is_solution(cell):
            gid = nbgrader_meta(cell)["grade_id"]
            if gid in answers:
                stub = release_cell(cell).source
                cell.source = stub if answers[gid] is None else fill_stub(stub, answers[gid])
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("matrix")
    subs, grades = tmp / "submissions", tmp / "grades"
    instructor = {p.stem: read(p) for p in NOTEBOOKS}
    expected_wrong = {}                  # student -> {notebook: {solution grade_id: wrong answer name}}
    for sid in ("reference", "untouched"):
        (subs / sid).mkdir(parents=True)
    for name, nb in instructor.items():
        nbformat.write(nb, subs / "reference" / f"{name}.ipynb")
        untouched = {nbgrader_meta(c)["grade_id"]: None for c in nb.cells if is_solution(c)}
        nbformat.write(submission(nb, untouched), subs / "untouched" / f"{name}.ipynb")
    for k in range(max(len(v) for v in WRONG_ANSWERS.values())):
        sid = f"wrong{k}"
        expected_wrong[sid] = {}
        for name, nb in instructor.items():
            wrong = {gid: list(answers.values())[k] for gid, answers in WRONG_ANSWERS.items()
                     if k < len(answers) and any(nbgrader_meta(c).get("grade_id") == gid for c in nb.cells)}
            if not wrong:
                continue
            (subs / sid).mkdir(parents=True, exist_ok=True)
            nbformat.write(submission(nb, wrong), subs / sid / f"{name}.ipynb")
            expected_wrong[sid][name] = {gid: list(WRONG_ANSWERS[gid])[k] for gid in wrong}
    proc = subprocess.run(["make", "-s", "autograde", f"SUBMISSIONS={subs}", f"GRADES_DIR={grades}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, f"make autograde failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    with open(grades / "grades_by_exercise.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    scores = {(sid, *k.split(" ")[0].split("/")): float(v) for sid, row in rows.items()
              for k, v in row.items() if "/" in k and v != ""}
    return dict(scores=scores, grades=grades, instructor=instructor, expected_wrong=expected_wrong)


def test_reference_notebooks_get_full_marks(course):
    for name, _, test_id, points in exercises():
        assert course["scores"][("reference", name, test_id)] == points, (name, test_id)
    for name in course["instructor"]:
        nb = read(course["grades"] / "course" / "autograded" / "reference" / "workbook" / f"{name}.ipynb")
        assert [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and error_outputs(c)] == [], name


def test_untouched_release_gets_zero_and_runs_past_every_exercise(course):
    for name, _, test_id, _ in exercises():
        assert course["scores"][("untouched", name, test_id)] == 0.0, (name, test_id)
    for name in course["instructor"]:
        nb = read(course["grades"] / "course" / "autograded" / "untouched" / "workbook" / f"{name}.ipynb")
        failing = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and error_outputs(c) and not is_test(c)]
        assert failing == [], f"{name}: cells other than the locked tests failed: {failing}"


def test_each_wrong_answer_loses_exactly_its_exercise(course):
    by_solution = {sol: (name, test_id, points) for name, sol, test_id, points in exercises()}
    checked = 0
    for sid, notebooks in course["expected_wrong"].items():
        for name, wrong in notebooks.items():
            for solution, (nb_name, test_id, points) in by_solution.items():
                if nb_name != name:
                    continue
                score = course["scores"][(sid, name, test_id)]
                if solution in wrong:
                    assert score == 0.0, f"{name}/{solution}: wrong answer {wrong[solution]!r} scored {score}"
                    checked += 1
                else:
                    assert score == points, f"{name}/{solution}: lost points beside {wrong}"
    assert checked == sum(len(v) for v in WRONG_ANSWERS.values())
