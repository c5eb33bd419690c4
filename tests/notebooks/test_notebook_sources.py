"""Each notebooks/NN-topic.ipynb must agree with its jupytext source NN-topic.py.

The py:percent file is the source of truth (nbgrader metadata in the ``# %%``
cell headers); ``make notebooks`` (``jupytext --sync notebooks/*.ipynb``)
writes the .ipynb from it. These tests fail, naming the notebook and its first
differing cell, when the two disagree in cell type, source or nbgrader
metadata, when a notebook has no source or a source no notebook, and when a
committed notebook carries outputs.
"""
import difflib
import pathlib
import shutil

import jupytext
import nbformat
import pytest

NOTEBOOK_DIR = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
FIX_HINT = "run `make notebooks` (jupytext --sync: the more recently modified file of the pair wins)"


def unpaired(directory):
    """Names of notebooks without a .py source and of .py sources without a notebook."""
    directory = pathlib.Path(directory)
    notebooks = {p.stem for p in directory.glob("*.ipynb")}
    sources = {p.stem for p in directory.glob("*.py")}
    return ([f"{name}.ipynb has no source {name}.py" for name in sorted(notebooks - sources)]
            + [f"{name}.py has no notebook {name}.ipynb" for name in sorted(sources - notebooks)])


def _describe(cell):
    first = cell.source.split("\n", 1)[0]
    return f"{cell.cell_type} cell starting {first[:60]!r}"


def first_difference(ipynb_path):
    """None if ``X.ipynb`` agrees with ``X.py``, else a message naming the first differing cell."""
    ipynb_path = pathlib.Path(ipynb_path)
    py_path = ipynb_path.with_suffix(".py")
    nb = nbformat.read(ipynb_path, as_version=4)
    src = jupytext.read(py_path, fmt="py:percent")
    where = f"{ipynb_path.name} differs from {py_path.name}"
    for i, (a, b) in enumerate(zip(nb.cells, src.cells)):
        if a.cell_type != b.cell_type:
            return (f"{where} at cell {i}: cell type {a.cell_type!r} in the notebook, "
                    f"{b.cell_type!r} in the source ({_describe(b)}); {FIX_HINT}")
        if a.source != b.source:
            diff = "\n".join(list(difflib.unified_diff(
                a.source.splitlines(), b.source.splitlines(),
                ipynb_path.name, py_path.name, lineterm="", n=1))[:12])
            return f"{where} at cell {i} ({_describe(a)}): source differs; {FIX_HINT}\n{diff}"
        ga, gb = a.metadata.get("nbgrader"), b.metadata.get("nbgrader")
        if ga != gb:
            return (f"{where} at cell {i} ({_describe(a)}): nbgrader metadata {ga!r} in the "
                    f"notebook, {gb!r} in the source; {FIX_HINT}")
    if len(nb.cells) != len(src.cells):
        i = min(len(nb.cells), len(src.cells))
        extra, side = (nb.cells[i], "only in the notebook") if len(nb.cells) > i \
            else (src.cells[i], "only in the source")
        return (f"{where} at cell {i} ({_describe(extra)}): {side} "
                f"({len(nb.cells)} cells in the notebook, {len(src.cells)} in the source); {FIX_HINT}")
    return None


def cells_with_outputs(ipynb_path):
    nb = nbformat.read(ipynb_path, as_version=4)
    return [i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]


NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def test_notebooks_exist():
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOK_DIR}"


def test_every_notebook_has_a_source_and_vice_versa():
    assert unpaired(NOTEBOOK_DIR) == []


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_matches_source(ipynb):
    if not ipynb.with_suffix(".py").exists():
        pytest.fail(f"{ipynb.name} has no source {ipynb.stem}.py")
    message = first_difference(ipynb)
    assert message is None, message


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=lambda p: p.name)
def test_kernelspec_is_the_one_jupyterlab_saves(ipynb):
    """The kernelspec ipykernel installs: JupyterLab saves a notebook with it, so a notebook that
    carried another would change on every save."""
    assert nbformat.read(ipynb, as_version=4).metadata.get("kernelspec") == {
        "display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_has_no_outputs(ipynb):
    cells = cells_with_outputs(ipynb)
    assert not cells, (f"{ipynb.name}: code cells {cells} carry outputs or execution counts; "
                       "clear them (e.g. `make notebooks` after `jupyter nbconvert --clear-output`)")


# ---- the checker itself must catch a mismatch (run on altered copies) -----------------------

def _pick_pair():
    """A notebook with nbgrader cells (so metadata edits can be tested), else any notebook."""
    for ipynb in NOTEBOOKS:
        if '"nbgrader"' in ipynb.read_text(encoding="utf-8"):
            return ipynb
    return NOTEBOOKS[0]


@pytest.fixture
def pair_copy(tmp_path):
    ipynb = _pick_pair()
    shutil.copy(ipynb, tmp_path / ipynb.name)
    shutil.copy(ipynb.with_suffix(".py"), tmp_path / (ipynb.stem + ".py"))
    return tmp_path / ipynb.name


def _edit_source(ipynb, edit):
    py = ipynb.with_suffix(".py")
    nb = jupytext.read(py, fmt="py:percent")
    edit(nb)
    jupytext.write(nb, py, fmt="py:percent")


def _nth_code_cell(nb, n=1):
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code"][n]


def test_checker_accepts_unaltered_copy(pair_copy):
    assert first_difference(pair_copy) is None
    assert unpaired(pair_copy.parent) == []


def test_checker_catches_changed_source(pair_copy):
    state = {}

    def edit(nb):
        state["i"] = i = _nth_code_cell(nb)
        nb.cells[i].source += "\nx_changed = 1"
    _edit_source(pair_copy, edit)
    message = first_difference(pair_copy)
    assert message is not None and pair_copy.name in message
    assert f"at cell {state['i']} " in message and "source differs" in message
    assert "x_changed" in message


def test_checker_catches_changed_nbgrader_metadata(pair_copy):
    state = {}

    def edit(nb):
        graded = [i for i, c in enumerate(nb.cells) if "nbgrader" in c.metadata]
        if not graded:
            pytest.skip("no nbgrader cell in the notebooks")
        state["i"] = i = graded[-1]
        nb.cells[i].metadata["nbgrader"]["grade_id"] = "renamed"
    _edit_source(pair_copy, edit)
    message = first_difference(pair_copy)
    assert message is not None and f"at cell {state['i']} " in message and "nbgrader" in message


def test_checker_catches_changed_cell_type(pair_copy):
    def edit(nb):
        nb.cells[0] = nbformat.v4.new_code_cell(nb.cells[0].source.replace("\n", "\n# "))
    _edit_source(pair_copy, edit)
    message = first_difference(pair_copy)
    assert message is not None and "at cell 0:" in message and "cell type" in message


def test_checker_catches_missing_cell(pair_copy):
    def edit(nb):
        del nb.cells[-1]
    _edit_source(pair_copy, edit)
    message = first_difference(pair_copy)
    n = len(nbformat.read(pair_copy, as_version=4).cells)
    assert message is not None and f"at cell {n - 1} " in message and "only in the notebook" in message


def test_checker_catches_edit_made_only_in_the_ipynb(pair_copy):
    nb = nbformat.read(pair_copy, as_version=4)
    nb.cells[0].source += "\nextra line"
    nbformat.write(nb, pair_copy)
    message = first_difference(pair_copy)
    assert message is not None and "at cell 0 " in message


def test_checker_catches_unpaired_files(pair_copy):
    d = pair_copy.parent
    pair_copy.with_suffix(".py").rename(d / "99-orphan.py")
    assert unpaired(d) == [f"{pair_copy.stem}.ipynb has no source {pair_copy.stem}.py",
                           "99-orphan.py has no notebook 99-orphan.ipynb"]


def test_checker_catches_outputs(pair_copy):
    nb = nbformat.read(pair_copy, as_version=4)
    i = _nth_code_cell(nb, 0)
    nb.cells[i].outputs = [nbformat.v4.new_output("stream", text="hi\n")]
    nbformat.write(nb, pair_copy)
    assert cells_with_outputs(pair_copy) == [i]
