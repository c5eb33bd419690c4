"""Plausible wrong answers for every graded exercise of the workbook, keyed by the
nbgrader ``grade_id`` of the solution cell.

Each answer is the code a student might put where the release has
``raise NotImplementedError()`` (indented to the stub's level by the test). Every
one must lose exactly that exercise's points and nothing else. They include the
shortcuts the locked tests must reject: calling the library's own implementation,
clipping logits, computing a graph's value with NumPy beside the graph, ...
"""

import importlib
import pathlib

# grade_id of the solution cell -> {name: code replacing the stub}
WRONG_ANSWERS = {}


# grade_id of the solution cell -> {name: code}: answers that differ from the reference (another
# float order, float64 then cast, another algorithm) and must still score full marks.
CORRECT_ANSWERS = {}


def _merge_chapter_modules():
    """Chapters keep their answers beside this file, one module per notebook (``answers_NN.py``
    defining ``WRONG_ANSWERS`` and optionally ``CORRECT_ANSWERS``), merged here; a grade_id
    may appear once."""
    here = pathlib.Path(__file__).resolve().parent
    for path in sorted(here.glob("answers_[0-9][0-9].py")):
        module = importlib.import_module(f"{__package__}.{path.stem}" if __package__ else path.stem)
        for merged, table in ((WRONG_ANSWERS, module.WRONG_ANSWERS),
                              (CORRECT_ANSWERS, getattr(module, "CORRECT_ANSWERS", {}))):
            clash = set(table) & set(merged)
            if clash:
                raise ValueError(f"{path.name}: grade_id(s) {sorted(clash)} already have answers")
            merged.update(table)


_merge_chapter_modules()
