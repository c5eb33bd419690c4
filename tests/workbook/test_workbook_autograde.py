"""workbook.autograde grades the part of a handed-in notebook that can change a score."""
import nbformat

from workbook import autograde


def _notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import numpy as np"),
                nbformat.v4.new_code_cell("def f(): return 1"),
                nbformat.v4.new_code_cell("assert f() == 1"),
                nbformat.v4.new_code_cell("train_for_an_hour()"),
                nbformat.v4.new_markdown_cell("the end")]
    nb.cells[1].metadata["nbgrader"] = {"solution": True, "grade_id": "f", "grade": False}
    nb.cells[2].metadata["nbgrader"] = {"grade": True, "grade_id": "f_test", "points": 1}
    return nb


def test_graded_part_ends_at_the_last_nbgrader_cell():
    nb = autograde.graded_part(_notebook())
    assert [c.source for c in nb.cells] == ["import numpy as np", "def f(): return 1", "assert f() == 1"]


def test_a_notebook_without_nbgrader_cells_is_kept_whole():
    nb = _notebook()
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)
    assert len(autograde.graded_part(nb).cells) == 5


def test_collect_writes_the_graded_part_and_passes_an_unreadable_file_as_it_is(tmp_path):
    sub = tmp_path / "handins" / "s1"
    sub.mkdir(parents=True)
    nbformat.write(_notebook(), sub / "01-topic.ipynb")
    (sub / "02-broken.ipynb").write_text("{not json", encoding="utf-8")
    course = tmp_path / "course"
    autograde.collect(tmp_path / "handins", course, ["s1"])
    dest = course / "submitted" / "s1" / autograde.ASSIGNMENT
    assert len(nbformat.read(dest / "01-topic.ipynb", as_version=4).cells) == 3
    assert (dest / "02-broken.ipynb").read_text(encoding="utf-8") == "{not json"
