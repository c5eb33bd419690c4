"""The workbook's notebooks as the grader sees them: exercises, release stubs, answers, scores.

Shared by the grader tests (one kernel per notebook, answers swapped in) and the nbgrader
end-to-end tests. Scores come from nbgrader's own ``determine_grade``: a test cell with an error
or any stderr output scores zero, anything else full marks.
"""
import pathlib
import re
import textwrap

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]-*.ipynb"))
STUB = "raise NotImplementedError()"
SOLUTION_RE = re.compile(r"^[ \t]*### BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*### END SOLUTION[^\n]*$", re.S | re.M)
HIDDEN_RE = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n(.*?)^[ \t]*### END HIDDEN TESTS[^\n]*$", re.S | re.M)


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def is_solution(cell):
    return cell.cell_type == "code" and nbgrader_meta(cell).get("solution", False)


def is_test(cell):
    m = nbgrader_meta(cell)
    return cell.cell_type == "code" and m.get("grade", False) and not m.get("solution", False)


def read(path):
    return nbformat.read(path, as_version=4)


def exercises(paths=NOTEBOOKS):
    """[(notebook stem, solution grade_id, test grade_id, points)], in notebook order. Each test
    cell grades the solution cell nearest above it."""
    found = []
    for path in paths:
        solution = None
        for cell in read(path).cells:
            if is_solution(cell):
                solution = nbgrader_meta(cell)["grade_id"]
            elif is_test(cell):
                m = nbgrader_meta(cell)
                found.append((path.stem, solution, m["grade_id"], float(m["points"])))
    return found


def release_cell(cell):
    """A solution cell as nbgrader's release shows it (ClearSolutions with the workbook's stub)."""
    from nbgrader.preprocessors import ClearSolutions

    nb = nbformat.v4.new_notebook(cells=[nbformat.from_dict(cell)])
    pre = ClearSolutions(code_stub={"python": f"# YOUR CODE HERE\n{STUB}"})
    nb, _ = pre.preprocess(nb, {})
    return nb.cells[0]


def fill_stub(source, code):
    """Replaces the release stub (``# YOUR CODE HERE`` + ``raise NotImplementedError()``) with
    ``code``, indented to the stub's level."""
    lines = source.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == STUB:
            indent = line[:len(line) - len(line.lstrip())]
            start = i - 1 if i > 0 and lines[i - 1].strip() == "# YOUR CODE HERE" else i
            body = [indent + line if line.strip() else "" for line in textwrap.dedent(code).strip("\n").split("\n")]
            return "\n".join(lines[:start] + body + lines[i + 1:])
    raise AssertionError(f"no stub in cell:\n{source}")


def score(cell):
    """(score, max_score) of an executed test cell, by nbgrader's rule."""
    from nbgrader.utils import determine_grade

    return determine_grade(cell)


def error_outputs(cell):
    return [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]


def stderr_text(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stderr")


def describe_failure(cell):
    """What made a test cell score zero, in one line: the error's class and message, or stderr."""
    errors = error_outputs(cell)
    if errors:
        return f"{errors[0].get('ename')}: {errors[0].get('evalue', '')[:300]}"
    text = stderr_text(cell).strip()
    return f"stderr: {text[:300]}" if text else "no error"
