"""`make release`: the student version holds no solution, no hidden test and no output, and its
test cells are locked. Nothing is executed here (the release's Run All is tested in the browser)."""
import os
import pathlib
import subprocess

import pytest

from .notebook_cells import (HIDDEN_RE, NOTEBOOKS, ROOT, SOLUTION_RE, STUB, is_solution, is_test, nbgrader_meta,
                             read)

pytest.importorskip("nbgrader", reason="nbgrader is the 'grading' extra: pip install -e '.[grading]'")
ASSIGNMENT = "workbook"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    built = os.environ.get("AICS_TEST_RELEASE")          # `make test` builds the release once
    if built and pathlib.Path(built).is_dir():
        return {p.stem: read(p) for p in sorted(pathlib.Path(built).glob("*.ipynb"))}
    tmp = tmp_path_factory.mktemp("release")
    proc = subprocess.run(["make", "-s", "release", f"RELEASE_DIR={tmp / 'release'}", f"COURSE_DIR={tmp / 'course'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"make release failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return {p.stem: read(p) for p in sorted((tmp / "release" / ASSIGNMENT).glob("*.ipynb"))}


def significant_lines(code):
    """Lines of code that identify a solution (not blank, not comments, not a bare keyword)."""
    return [s for s in (line.strip() for line in code.splitlines()) if len(s) >= 12 and not s.startswith("#")]


def test_every_notebook_is_released(release):
    assert set(release) == {p.stem for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_release_has_no_solutions_hidden_tests_or_outputs(release, path):
    released = {nbgrader_meta(c).get("grade_id"): c for c in release[path.stem].cells if nbgrader_meta(c)}
    for cell in read(path).cells:
        gid = nbgrader_meta(cell).get("grade_id")
        if is_solution(cell):
            source = released[gid].source
            assert STUB in source and "BEGIN SOLUTION" not in source, gid
            lines = {line.strip() for line in source.splitlines()}
            for block in SOLUTION_RE.findall(cell.source):
                for line in significant_lines(block):
                    assert line not in lines, f"{gid}: solution line released: {line!r}"
        elif is_test(cell):
            test = released[gid]
            assert "BEGIN HIDDEN TESTS" not in test.source, gid
            lines = {line.strip() for line in test.source.splitlines()}
            for block in HIDDEN_RE.findall(cell.source):
                for line in significant_lines(block):
                    assert line not in lines, f"{gid}: hidden test released: {line!r}"
            assert nbgrader_meta(test).get("locked") and test.metadata.get("editable") is False, gid
    assert all(not c.get("outputs") for c in release[path.stem].cells if c.cell_type == "code")
    assert "jupytext" not in release[path.stem].metadata, "the release pairs with nothing (no .py beside it on save)"
