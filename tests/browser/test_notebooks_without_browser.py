"""Where no browser can run (outside CI), the notebooks `make test-browser` would open run under
nbclient instead, so each still runs top to bottom once in `make test`: no cell may raise, and
a locked test cell may only report on stderr (an unanswered exercise in the release)."""
import os
import pathlib

import nbformat
import pytest
from traitlets.config import Config

from workbook.kernel_client import CLIENT_CLASS

pytestmark = pytest.mark.nbclient
nbclient = pytest.importorskip("nbclient")

NOTEBOOK_DIR = pathlib.Path(os.environ.get("AICS_BROWSER_NOTEBOOKS",
                                           pathlib.Path(__file__).resolve().parents[2] / "notebooks"))
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]-*.ipynb"))
CELL_TIMEOUT = 300


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_to_the_end(path, monkeypatch):
    monkeypatch.setenv("AICS_FAST", "1")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=False,
                                     resources={"metadata": {"path": str(path.parent)}},
                                     config=Config({"AsyncKernelManager": {"client_class": CLIENT_CLASS}}))
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(f"{path.name}: {str(exc)[-1500:]}")
    except nbclient.exceptions.CellTimeoutError as exc:
        pytest.fail(f"{path.name}: {exc}")
