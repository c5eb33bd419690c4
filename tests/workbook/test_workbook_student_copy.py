"""workbook.student_copy: a student's copy is made once and never overwritten; course updates
arrive beside it; no jupytext metadata (so saving writes no paired .py files)."""
import nbformat

from workbook.student_copy import copy_release, write_handout


def _release(folder, text):
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("00-tour", "01-eager"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"# {name}: {text}")])
        nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
        nbformat.write(nb, folder / f"{name}.ipynb")


def test_copy_once_never_overwrite_and_offer_updates(tmp_path):
    release, student = tmp_path / "release", tmp_path / "student"
    _release(release, "v1")
    assert copy_release(release, student) == (["00-tour", "01-eager"], [])
    mine = nbformat.read(student / "00-tour.ipynb", as_version=4)
    assert "jupytext" not in mine.metadata and mine.cells[0].source == "# 00-tour: v1"
    mine.cells[0].source = "my answer"
    nbformat.write(mine, student / "00-tour.ipynb")

    assert copy_release(release, student) == ([], [])             # nothing new: nothing touched
    _release(release, "v2")
    (student / "01-eager.ipynb").unlink()                           # a chapter the student deleted comes back
    added, updated = copy_release(release, student)
    assert added == ["01-eager"] and updated == ["00-tour"]
    assert nbformat.read(student / "00-tour.ipynb", as_version=4).cells[0].source == "my answer"
    assert nbformat.read(student / "00-tour.updated.ipynb", as_version=4).cells[0].source == "# 00-tour: v2"


def test_handout_replaces_the_folder_without_jupytext_metadata(tmp_path):
    release, handout = tmp_path / "release", tmp_path / "handout"
    _release(release, "v1")
    handout.mkdir()
    (handout / "stale.ipynb").write_text("{}")
    write_handout(release, handout)
    assert sorted(p.name for p in handout.iterdir()) == ["00-tour.ipynb", "01-eager.ipynb"]
    assert all("jupytext" not in nbformat.read(p, as_version=4).metadata for p in handout.iterdir())
