"""nbgrader configuration for the AICS Workbook (used by `make release` and `make autograde`).

nbgrader reads this file from the current directory, so run nbgrader from the repository root
(the Makefile does). The course directory (source/, release/, submitted/, autograded/, feedback/
and gradebook.db) is `build/course` unless AICS_COURSE_DIR names another one (the grading tests
use a temporary directory).
"""
import os

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads this file

_HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = "aics-workbook"
c.CourseDirectory.root = os.path.abspath(
    os.environ.get("AICS_COURSE_DIR") or os.path.join(_HERE, "build", "course"))
# Only the notebooks are released: the jupytext .py sources hold the solutions.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "*.py", "_work", "jupytext.toml"]

# Students' unfinished solutions become nbgrader's usual stub.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# Autograding executes every notebook top to bottom. A cell that runs too long (an answer that never
# ends) is interrupted after this many seconds and scores zero; the rest of the notebook still runs.
# The quick setting (AICS_FAST=1, `make autograde`'s default) has no cell near a minute even with
# every core busy grading; the full setting trains for minutes in a cell. AICS_CELL_TIMEOUT overrides.
_TIMEOUT = int(os.environ.get("AICS_CELL_TIMEOUT") or (300 if os.environ.get("AICS_FAST") == "1" else 900))
c.Execute.timeout = _TIMEOUT
c.ExecutePreprocessor.timeout = _TIMEOUT
# The workbook's notebooks all run on the Python kernel of the environment nbgrader runs in
# (the .venv, where aicslib is installed editable).
c.Execute.kernel_name = "python3"
# A kernel client that never leaves a reply unread while nbclient mirrors an Output widget's
# state back to the kernel (workbook/kernel_client.py explains the lost wake-up it fixes).
c.AsyncKernelManager.client_class = "workbook.kernel_client.KernelClient"
# Feedback shows students their notebook as graded, without the hidden tests' source.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "nbgrader.preprocessors.ClearHiddenTests",
]
