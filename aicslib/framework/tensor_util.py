"""From Python and NumPy values to arrays of a tensor's dtype, with TF's rules: the dtype a
value gets by default, and the conversions refused rather than made lossily (TF's
tensor_util.make_tensor_proto does the same checks)."""
import numpy as np

from . import context, dtypes
from .python_sequences import first_text, sequence_to_array
from .string_values import to_bytes_array


def python_scalar_dtype(value):
    """The dtype TF gives a Python float, bool or int on its own: float32, bool, and int32
    unless the int needs int64."""
    tp = type(value)
    if tp is float:
        return dtypes.float32
    if tp is bool:
        return dtypes.bool
    return dtypes.int32 if -2 ** 31 <= value < 2 ** 31 else dtypes.int64



def default_dtype_for(value):
    """The dtype TF gives a Python value: float32 for floats, int32 for ints
    (int64 when out of range), bool; NumPy inputs keep their dtype."""
    tp = type(value)
    if tp is float or tp is bool or (tp is int and -2 ** 63 <= value < 2 ** 63):
        return python_scalar_dtype(value)
    if isinstance(value, (np.ndarray, np.generic)):
        try:
            return dtypes.as_dtype(value.dtype)
        except TypeError:
            raise TypeError(f"Unsupported NumPy dtype {value.dtype} for a tensor.") from None
    arr = sequence_to_array(value)
    kind = arr.dtype.kind
    if kind == "V":  # ml_dtypes' bfloat16 / float8 arrays keep their own dtype
        return dtypes.as_dtype(arr.dtype)
    if kind == "f":
        return dtypes.float32
    if kind in "iu":
        if arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
            return dtypes.int64
        return dtypes.int32
    if kind == "b":
        return dtypes.bool
    if kind == "c":  # Python complex numbers become complex128, as in TF
        return dtypes.complex128
    if kind in "US":
        return dtypes.string
    raise TypeError(f"Cannot convert {value!r} (of type {type(value).__name__}) to a tensor.")


def to_numpy(value, dtype, what="value"):
    """Converts ``value`` to an array of ``dtype``, refusing lossy kind changes
    (a float into an int tensor, an out-of-range int) instead of coercing silently."""
    if dtype is dtypes.string:   # bytes as bytes: never through NumPy's NUL-stripping 'S'
        return to_bytes_array(value, what)
    np_dtype = dtype.as_numpy_dtype
    if isinstance(value, np.ndarray) and value.dtype == np_dtype:
        arr = value
    else:
        src = value if isinstance(value, (np.ndarray, np.generic)) else sequence_to_array(value)
        if src.dtype.kind in "US" and not isinstance(value, (np.ndarray, np.generic)):
            # TF parses no Python strings as numbers (NumPy would read "1.5" as 1.5)
            raise _text_to_number_error(value, dtype)
        if src.dtype.kind == "O" and dtype != dtypes.string:
            raise TypeError(f"Cannot convert {what} {value!r} to a tensor of {dtype.name}: "
                            f"ragged or non-numeric data.")
        # An empty Python sequence has no element type (NumPy says float64): any dtype takes it.
        untyped = src.size == 0 and not isinstance(value, (np.ndarray, np.generic))
        if dtype != dtypes.string and src.dtype != np_dtype and not untyped:
            if src.dtype.kind == "f" and dtype.is_integer:
                raise TypeError(f"Expected {dtype.name} for {what}, got {value!r} of type "
                                f"'{src.dtype.name}' instead.")
            if src.dtype.kind in "fiub" and dtype.is_bool and src.dtype.kind != "b":
                raise TypeError(f"Expected bool for {what}, got {value!r} of type '{src.dtype.name}' instead.")
            if src.dtype.kind in "iu" and dtype.is_integer and src.size:
                info = np.iinfo(np_dtype)
                if src.min() < info.min or src.max() > info.max:
                    raise ValueError(f"{what} {value!r} is out of range for {dtype.name} "
                                     f"[{info.min}, {info.max}].")
        arr = np.asarray(src, dtype=np_dtype)
    return arr


def _text_to_number_error(value, dtype):
    """TF's TypeError for a Python string given where numbers are expected: the eager
    converter's message, or in a graph the one of TF's make_tensor_proto."""
    if context.executing_eagerly():
        return TypeError(f"Cannot convert {value!r} to EagerTensor of dtype "
                         f"{dtypes.type_string(dtype)}")
    text = first_text(value)
    return TypeError(f"Expected {dtype.name}, but got {text} of type '{type(text).__name__}'.")
