"""Grade a class: ``make autograde SUBMISSIONS=dir`` runs ``python -m workbook.autograde dir``.

``dir/<student_id>/<NN-topic>.ipynb`` are the notebooks students handed in (names unchanged; a
missing notebook scores zero). For each student, nbgrader restores the locked and hidden tests
from the instructor notebooks, runs every notebook in a fresh kernel up to its last graded cell
(what comes after cannot change a score) and records the scores;
students are graded in parallel, one nbgrader process each, with a progress line per notebook.

The quick setting (``AICS_FAST=1``) is the default: it runs the same code, including every graded
exercise, on less data and fewer steps; ``--full`` runs the chapters' full setting. A cell that
has not finished after ``--cell-timeout`` seconds is interrupted and scores zero, and the report
names the student, notebook and cell.

Written to ``--grades-dir`` (default ``grades/``), all kept across runs:
- ``gradebook.db``: nbgrader's gradebook; grading one student again updates only that student;
- ``grades.csv``: one row per student: the total (nbgrader's export columns);
- ``grades_by_exercise.csv``: one row per student, one column per graded exercise, and the total;
- ``feedback/<student_id>/<NN-topic>.html``: what each student sees, hidden tests left out.
"""
import argparse
import csv
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time

import nbformat

from aicslib.framework.file_io import atomic_write_string_to_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
ASSIGNMENT = "workbook"
# how nbgrader marks a cell it interrupted at the cell timeout (or that never replied)
TIMEOUT_ERRORS = ("CellTimeoutError", "KeyboardInterrupt")
PROGRESS = re.compile(r"Autograding .*/autograded/([^/]+)/[^/]+/([^/]+)\.ipynb")


def _nbgrader(course_dir, db_path, *args, env=None):
    """An nbgrader command line run from the repository root (where nbgrader_config.py is)."""
    bin_dir = pathlib.Path(sys.executable).parent
    return ([str(bin_dir / "nbgrader"), *args, f"--CourseDirectory.root={course_dir}",
             f"--CourseDirectory.db_url=sqlite:///{db_path}"],
            dict(env or os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"))


def run(cmd_env):
    cmd, env = cmd_env
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


def prepare_course(course_dir, db_path, notebooks):
    """source/ gets the instructor notebooks, release/ nbgrader's student version; the gradebook
    learns the assignment's grade cells (kept, with its scores, from earlier runs). Skipped when
    the instructor notebooks are those of the last run."""
    source = course_dir / "source" / ASSIGNMENT
    release = course_dir / "release" / ASSIGNMENT
    unchanged = (db_path.exists() and sorted(p.name for p in source.glob("*.ipynb")) == [nb.name for nb in notebooks]
                 and all((source / nb.name).read_bytes() == nb.read_bytes() and (release / nb.name).exists()
                         for nb in notebooks))
    if unchanged:
        return
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    for nb in notebooks:
        shutil.copy(nb, source / nb.name)
    run(_nbgrader(course_dir, db_path, "generate_assignment", ASSIGNMENT, "--force"))


def graded_part(nb):
    """The notebook up to its last nbgrader cell: what comes after (plots, longer training, widgets
    that use the exercises' results) cannot change a score, so grading does not run it."""
    marked = [i for i, cell in enumerate(nb.cells) if cell.get("metadata", {}).get("nbgrader")]
    if marked:
        nb.cells = nb.cells[:marked[-1] + 1]
    return nb


def collect(submissions, course_dir, students):
    """Copies the graded part of each student's notebooks into submitted/<student>/workbook/
    (replacing an earlier copy)."""
    for sid in students:
        dest = course_dir / "submitted" / sid / ASSIGNMENT
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for path in sorted((submissions / sid).glob("*.ipynb")):
            try:
                nb = graded_part(nbformat.read(path, as_version=4))
            except ValueError:  # not JSON or not a notebook: nbgrader reports it as it stands
                shutil.copy(path, dest / path.name)
                continue
            atomic_write_string_to_file(str(dest / path.name), nbformat.writes(nb))


class Progress:
    def __init__(self, students, notebooks_each):
        self.lock, self.t0 = threading.Lock(), time.monotonic()
        self.total = sum(notebooks_each.values())
        self.done = 0
        self.students = students

    def say(self, text):
        with self.lock:
            print(f"[{time.monotonic() - self.t0:6.0f} s] {text}", flush=True)

    def notebook(self, sid, name):
        with self.lock:
            self.done += 1
            done = self.done
        self.say(f"{sid}: {name} ({done}/{self.total} notebooks)")


def worker(course_dir, db_path):
    """``python -m workbook.autograde --worker COURSE_DIR DB``: grades the student ids read from
    stdin, one per line, in this one process (nbgrader is imported once): autograde, then
    feedback; prints ``notebook <sid> <name>`` as each notebook starts and ``done <sid>`` or
    ``failed <sid> <why>`` at the end of each student."""
    import logging

    from nbgrader.apps import NbGraderAPI
    from nbgrader.converters import Autograde, GenerateFeedback
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    config.CourseDirectory.root = str(course_dir)
    config.CourseDirectory.db_url = f"sqlite:///{db_path}"
    api = NbGraderAPI(config=config)

    class Progress(logging.Handler):
        def emit(self, record):
            m = PROGRESS.search(record.getMessage())
            if m:
                print(f"notebook {m.group(1)} {m.group(2)}", flush=True)

    for line in sys.stdin:
        sid = line.strip()
        api.coursedir.assignment_id, api.coursedir.student_id = ASSIGNMENT, sid
        try:
            for app_class in (Autograde, GenerateFeedback):
                app = app_class(coursedir=api.coursedir, parent=api)
                app.force = True
                if app_class is Autograde:
                    app.create_student = True
                handler = Progress()
                app.log.addHandler(handler)
                try:
                    app.start()
                finally:
                    app.log.removeHandler(handler)
        except BaseException as exc:
            print(f"failed {sid} {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", flush=True)
            continue
        print(f"done {sid}", flush=True)


def grade(students, course_dir, db_path, env, jobs, progress):
    """Deals the students to `jobs` worker processes as they become free."""
    pending = list(students)
    failures = []
    lock = threading.Lock()

    def next_student():
        with lock:
            return pending.pop(0) if pending else None

    def drive(n):
        log_path = course_dir / f"worker{n}.log"          # nbgrader's own log, for when a worker fails
        with open(log_path, "w") as log:
            proc = subprocess.Popen([sys.executable, "-m", "workbook.autograde", "--worker", str(course_dir),
                                     str(db_path)], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=log, text=True, bufsize=1)
            serve(proc, log_path)

    def serve(proc, log_path):
        sid = next_student()
        while sid is not None:
            proc.stdin.write(sid + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                kind, _, rest = line.rstrip("\n").partition(" ")
                if kind == "notebook":
                    progress.notebook(*rest.split(" ", 1))
                elif kind in ("done", "failed"):
                    progress.say(f"{sid}: graded" if kind == "done" else f"{sid}: FAILED: {rest}")
                    if kind == "failed":
                        failures.append(f"{rest} (log: {log_path})")
                    break
            else:
                failures.append(f"{sid}: the grading process ended unexpectedly ({proc.wait()}; log: {log_path})")
                return
            sid = next_student()
        proc.stdin.close()
        proc.wait()

    threads = [threading.Thread(target=drive, args=(n,)) for n in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise RuntimeError("grading failed for: " + "; ".join(failures))


def timed_out_cells(course_dir, students):
    """[(student, notebook, cell index, grade_id or '')] of cells interrupted by the cell timeout."""
    found = []
    for sid in students:
        for path in sorted((course_dir / "autograded" / sid / ASSIGNMENT).glob("*.ipynb")):
            for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
                # an interrupted cell can carry both nbgrader's timeout error and the KeyboardInterrupt
                if any(out.get("output_type") == "error" and out.get("ename") in TIMEOUT_ERRORS
                       for out in cell.get("outputs", [])):
                    found.append((sid, path.stem, i, cell.metadata.get("nbgrader", {}).get("grade_id", "")))
    return found


LEADERBOARD = re.compile(r"^\[leaderboard\] (.+?) = ([-+0-9.eE]+)", re.M)   # workbook.grading.leaderboard


def leaderboard_figures(course_dir):
    """{student: {"notebook: name": value}} from what the graded notebooks printed with
    ``workbook.grading.leaderboard`` (the last value printed under each name)."""
    figures = {}
    for path in sorted((course_dir / "autograded").glob(f"*/{ASSIGNMENT}/*.ipynb")):
        sid = path.parent.parent.name
        for cell in nbformat.read(path, as_version=4).cells:
            for out in cell.get("outputs", []):
                if out.get("output_type") == "stream" and out.get("name") == "stdout":
                    for name, value in LEADERBOARD.findall(out.get("text", "")):
                        figures.setdefault(sid, {})[f"{path.stem}: {name}"] = float(value)
    return figures


def export(db_path, grades_dir, figures=None):
    """grades_by_exercise.csv (a row per student, a column per graded exercise, the total, then a
    column per leaderboard figure), grades.csv (nbgrader's export columns: totals per student),
    both from the gradebook, and leaderboard.csv (students ranked by each figure, highest first)."""
    figures = figures or {}
    boards = sorted({name for per in figures.values() for name in per})
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db_path}") as gb:
        assignment = gb.find_assignment(ASSIGNMENT)
        columns = [(nb.name, cell.name, cell.max_score) for nb in assignment.notebooks for cell in nb.grade_cells
                   if cell.cell_type == "code"]
        rows = []
        for student in sorted(gb.students, key=lambda s: s.id):
            try:
                submission = gb.find_submission(ASSIGNMENT, student.id)
            except Exception:
                continue
            scores = {(nb.name, grade.name): grade.score for nb in submission.notebooks for grade in nb.grades}
            rows.append((student.id, student.last_name or "", student.first_name or "", student.email or "",
                         submission.score, scores))
    max_total = sum(p for *_, p in columns)
    by_exercise, totals = io.StringIO(), io.StringIO()
    writer = csv.writer(by_exercise)
    writer.writerow(["student_id"] + [f"{nb}/{cell} (max {points:g})" for nb, cell, points in columns] +
                    [f"total (max {max_total:g})"] + [f"leaderboard: {name}" for name in boards])
    total_writer = csv.writer(totals)
    total_writer.writerow(["assignment", "student_id", "last_name", "first_name", "email", "score", "max_score"])
    for sid, last_name, first_name, email, total, scores in rows:
        values = [scores.get((nb, cell)) for nb, cell, _ in columns]
        writer.writerow([sid] + ["" if v is None else f"{v:g}" for v in values] + [f"{sum(v or 0 for v in values):g}"]
                        + [f"{figures[sid][b]:g}" if b in figures.get(sid, {}) else "" for b in boards])
        total_writer.writerow([ASSIGNMENT, sid, last_name, first_name, email, f"{total:g}", f"{max_total:g}"])
    atomic_write_string_to_file(str(grades_dir / "grades_by_exercise.csv"), by_exercise.getvalue())
    atomic_write_string_to_file(str(grades_dir / "grades.csv"), totals.getvalue())
    if boards:
        ranking = io.StringIO()
        rank_writer = csv.writer(ranking)
        rank_writer.writerow(["figure", "rank", "student_id", "value"])
        for name in boards:
            ranked = sorted(((per[name], sid) for sid, per in figures.items() if name in per), reverse=True)
            for rank, (value, sid) in enumerate(ranked, 1):
                rank_writer.writerow([name, rank, sid, f"{value:g}"])
        atomic_write_string_to_file(str(grades_dir / "leaderboard.csv"), ranking.getvalue())


def copy_feedback(course_dir, grades_dir, students):
    for sid in students:
        src = course_dir / "feedback" / sid / ASSIGNMENT
        dest = grades_dir / "feedback" / sid
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for html in sorted(src.glob("*.html")):
            shutil.copy(html, dest / html.name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("submissions", type=pathlib.Path, help="folder of <student_id>/<NN-topic>.ipynb")
    ap.add_argument("--student", default="*", help="grade only the students matching this glob")
    ap.add_argument("--notebooks", type=pathlib.Path, default=ROOT / "notebooks",
                    help="folder of the instructor notebooks NN-topic.ipynb")
    ap.add_argument("--grades-dir", type=pathlib.Path, default=ROOT / "grades")
    ap.add_argument("--course-dir", type=pathlib.Path, default=None,
                    help="nbgrader's working folder (default: GRADES_DIR/course)")
    # one more than the cores: each student's nbgrader process waits while its kernel starts and runs
    ap.add_argument("--jobs", type=int, default=(os.cpu_count() or 1) + 1,
                    help="students graded at once (default: the cores + 1)")
    ap.add_argument("--full", action="store_true", help="the chapters' full setting (slow)")
    ap.add_argument("--cell-timeout", type=int, default=None,
                    help="seconds a cell may run before it is interrupted (default 300 quick, 900 full)")
    if argv is None and sys.argv[1:2] == ["--worker"]:
        return worker(pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]))
    args = ap.parse_args(argv)

    submissions = args.submissions.resolve()
    if not submissions.is_dir():
        ap.error(f"{submissions} is not a folder of <student_id>/<NN-topic>.ipynb")
    students = sorted(d.name for d in submissions.glob(args.student) if d.is_dir() and any(d.glob("*.ipynb")))
    if not students:
        ap.error(f"no <student_id>/*.ipynb under {submissions} matching {args.student!r}")
    notebooks = sorted(args.notebooks.resolve().glob("[0-9][0-9]-*.ipynb"))
    grades_dir = args.grades_dir.resolve()
    course_dir = (args.course_dir or grades_dir / "course").resolve()
    db_path = grades_dir / "gradebook.db"
    grades_dir.mkdir(parents=True, exist_ok=True)

    env = dict(os.environ)
    env.pop("AICS_FAST", None)
    if not args.full:
        env["AICS_FAST"] = "1"
    if args.cell_timeout:
        env["AICS_CELL_TIMEOUT"] = str(args.cell_timeout)
    jobs = max(1, min(args.jobs, len(students)))
    if jobs > 1:
        # Students share the cores: one BLAS thread each, or spin-waiting threads slow everyone.
        env.update({v: "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})

    setting = "full" if args.full else "quick (AICS_FAST=1)"
    print(f"grading {len(students)} students x {len(notebooks)} notebooks, {setting} setting, {jobs} at a time",
          flush=True)
    prepare_course(course_dir, db_path, notebooks)
    collect(submissions, course_dir, students)
    progress = Progress(students, {s: len(list((submissions / s).glob("*.ipynb"))) for s in students})
    grade(students, course_dir, db_path, env, jobs, progress)
    for sid, nb, index, grade_id in timed_out_cells(course_dir, students):
        what = f"exercise test {grade_id!r}" if grade_id else "a cell"
        print(f"{sid}: {nb}, code cell {index} ({what}) did not finish within the cell timeout: "
              f"interrupted, scored zero", flush=True)
    figures = leaderboard_figures(course_dir)
    export(db_path, grades_dir, figures)
    copy_feedback(course_dir, grades_dir, students)
    print(f"graded in {time.monotonic() - progress.t0:.0f} s. Written:\n"
          f"  {grades_dir / 'grades_by_exercise.csv'}   a row per student, a column per exercise\n"
          f"  {grades_dir / 'grades.csv'}   the total per student\n"
          + (f"  {grades_dir / 'leaderboard.csv'}   students ranked by each measured figure\n" if figures else "") +
          f"  {grades_dir / 'feedback'}/<student_id>/<NN-topic>.html   feedback for each student\n"
          f"  {db_path}   the gradebook (kept: grading a student again updates their rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
