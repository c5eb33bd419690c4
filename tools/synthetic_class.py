"""A synthetic class for timing ``make autograde``: N students, every chapter each.

Each student hands in every chapter's release with each exercise answered, at random (seeded),
by the reference solution, one of its plausible wrong answers (``tests/grading/answers_NN.py``),
one of its different correct answers, or left unanswered::

    .venv/bin/python tools/synthetic_class.py --students 30 --out /tmp/class
    time make autograde SUBMISSIONS=/tmp/class GRADES_DIR=/tmp/class-grades

The expected score of every exercise is written to ``OUT/expected.csv`` (student, notebook,
grade_id, points); ``--check GRADES_DIR`` compares ``grades_by_exercise.csv`` with it.
"""
import argparse
import csv
import pathlib
import random
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from grading.notebook_cells import NOTEBOOKS, fill_stub, is_solution, is_test, nbgrader_meta, read, release_cell  # noqa: E402
from grading.wrong_answers import CORRECT_ANSWERS, WRONG_ANSWERS  # noqa: E402


def answer_notebook(instructor, rng):
    """(the handed-in notebook, {test grade_id: expected points})."""
    nb = nbformat.from_dict(instructor)
    expected, outcome = {}, None
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if is_solution(cell):
            gid, stub = meta["grade_id"], release_cell(cell).source
            kind = rng.choice(["reference", "reference", "wrong", "correct", "unanswered"])
            if kind == "wrong" and WRONG_ANSWERS.get(gid):
                cell.source, outcome = fill_stub(stub, rng.choice(list(WRONG_ANSWERS[gid].values()))), 0.0
            elif kind == "correct" and CORRECT_ANSWERS.get(gid):
                cell.source, outcome = fill_stub(stub, rng.choice(list(CORRECT_ANSWERS[gid].values()))), None
            elif kind == "unanswered":
                cell.source, outcome = stub, 0.0
            else:
                outcome = None                 # the reference: full marks
        elif is_test(cell):
            expected[meta["grade_id"]] = float(meta["points"]) if outcome is None else outcome
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb, expected


def check(out, grades_dir):
    """The grades against the expected scores: 0 when every one agrees."""
    with open(out / "expected.csv", newline="") as f:
        expected = {(r["student_id"], r["notebook"], r["grade_id"]): float(r["points"]) for r in csv.DictReader(f)}
    with open(grades_dir / "grades_by_exercise.csv", newline="") as f:
        got = {(row["student_id"], *column.split(" ")[0].split("/")): float(value)
               for row in csv.DictReader(f) for column, value in row.items() if "/" in column and value}
    wrong = [(key, points, got.get(key)) for key, points in expected.items() if got.get(key) != points]
    for key, points, score in wrong[:20]:
        print(f"{'/'.join(key)}: expected {points}, graded {score}")
    print(f"{len(expected) - len(wrong)} of {len(expected)} exercise scores as expected")
    return 1 if wrong else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", type=pathlib.Path, metavar="GRADES_DIR", help="compare the grades, write nothing")
    args = ap.parse_args(argv)
    if args.check:
        return check(args.out, args.check)
    rng = random.Random(args.seed)
    instructor = {p.stem: read(p) for p in NOTEBOOKS}
    rows = []
    for k in range(args.students):
        sid = f"student{k:03d}"
        (args.out / sid).mkdir(parents=True, exist_ok=True)
        for name, nb in instructor.items():
            handed_in, expected = answer_notebook(nb, rng)
            nbformat.write(handed_in, args.out / sid / f"{name}.ipynb")
            rows += [(sid, name, gid, points) for gid, points in expected.items()]
    with open(args.out / "expected.csv", "w", newline="") as f:
        csv.writer(f).writerows([("student_id", "notebook", "grade_id", "points")] + rows)
    print(f"{args.students} students x {len(instructor)} notebooks in {args.out}")


if __name__ == "__main__":
    sys.exit(main())
