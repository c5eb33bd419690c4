"""Nested Python sequences as arrays, refused as TensorFlow refuses them
(python/lib/core/py_seq_tensor.cc).

NumPy's own refusal of ``[[1, 2], [3]]`` is a ValueError about "an inhomogeneous
shape"; ``[1, None]`` and ``[1, "a"]`` it accepts, as an object array and as text.
TensorFlow refuses all three, with the messages below. The shape is read along the
first elements, as TF reads it: every other element must then agree with it.
"""
import operator

import numpy as np

__all__ = ["NON_RECTANGULAR", "MIXED_TYPES", "sequence_to_array", "first_text"]

NON_RECTANGULAR = "Can't convert non-rectangular Python sequence to Tensor."
MIXED_TYPES = "Can't convert Python sequence with mixed types to Tensor."

_NUMBER = (bool, int, float, complex, np.bool_, np.number)
_TEXT = (str, bytes, np.str_, np.bytes_)


def _is_text(value):
    """True for a Python or NumPy string scalar."""
    return isinstance(value, _TEXT)


def first_text(value):
    """The first string in a (nested) Python value, or None."""
    if _is_text(value):
        return value
    if isinstance(value, (list, tuple)):
        for item in value:
            found = first_text(item)
            if found is not None:
                return found
    return None


def _is_sequence(value):
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim > 0)


def _first_shape(value):
    shape = []
    while _is_sequence(value):
        shape.append(len(value))
        if not len(value):
            break
        value = value[0]
    return shape


def _check(value, shape, kinds):
    """Raises TF's ValueError where ``value`` strays from ``shape``; collects leaf kinds."""
    if not shape:
        if _is_sequence(value):
            raise ValueError(MIXED_TYPES)   # TF's word for a list where a number was
        kinds.add("text" if _is_text(value) else "number" if isinstance(value, _NUMBER)
                  or (isinstance(value, np.ndarray) and value.dtype.kind in "biufc")
                  else "index" if hasattr(type(value), "__index__") else "other")
        return
    if not _is_sequence(value) or len(value) != shape[0]:
        raise ValueError(NON_RECTANGULAR)
    if isinstance(value, np.ndarray) and value.dtype != object:
        if list(value.shape) != shape:
            raise ValueError(NON_RECTANGULAR)
        kinds.add("text" if value.dtype.kind in "US" else "number")
        return
    for item in value:
        _check(item, shape[1:], kinds)


def sequence_to_array(value):
    """``np.asarray(value)`` for a Python value; for a nested list or tuple that is not
    rectangular, or mixes numbers with strings, None or other objects, TF's ValueError."""
    if not isinstance(value, (list, tuple)):
        return np.asarray(value)
    try:
        arr = np.asarray(value)
    except ValueError:
        arr = None
    if arr is not None and arr.dtype.kind not in "OUS":
        return arr                  # numbers, rectangular: the common case, checked by NumPy
    kinds = set()
    _check(value, _first_shape(value), kinds)
    if "index" in kinds and kinds <= {"number", "index"}:
        # integer-like objects (a TF1 Dimension in a shape list) count as their int, as in TF
        return np.asarray(_as_ints(value))
    if len(kinds) > 1 or "other" in kinds:
        raise ValueError(MIXED_TYPES)
    return arr if arr is not None else np.asarray(value)


def _as_ints(value):
    if _is_sequence(value):
        return [_as_ints(v) for v in value]
    return value if isinstance(value, _NUMBER) else operator.index(value)
