"""``aics.strings``: operations on string tensors (TF's tf.strings).

String tensors hold ``bytes``; see ``aicslib/ops/string_ops.py``.
"""
from .ops.string_ops import (as_string, format, join, length, lower, reduce_join,
                             regex_replace, split, substr, to_number, upper)

__all__ = ["as_string", "format", "join", "length", "lower", "reduce_join", "regex_replace",
           "split", "substr", "to_number", "upper"]
