"""Data types, mirroring tensorflow/python/framework/dtypes.py.

Each DType wraps a NumPy dtype. The low-precision floats NumPy lacks
(``bfloat16`` and the 8-bit ``float8_e4m3fn`` / ``float8_e5m2``) are real
2- and 1-byte NumPy dtypes from ``ml_dtypes``, the package TensorFlow and JAX
themselves use: ``x.astype(bfloat16)`` rounds to nearest, ties to even, and
arrays of them take 2 (1) bytes per element.
"""
import ml_dtypes
import numpy as np

__all__ = ["DType", "as_dtype", "float16", "half", "bfloat16", "float32", "float64",
           "double", "int8", "int16", "int32", "int64", "uint8", "bool", "string",
           "resource", "variant", "float8_e4m3fn", "float8_e5m2", "complex64", "complex128",
           "type_string"]


class DType:
    """A tensor element type: name, NumPy storage type and numeric properties."""

    __slots__ = ("_name", "_np", "_enum", "_tf_name")

    def __init__(self, name, np_dtype, enum, tf_name):
        self._name = name
        self._np = np.dtype(np_dtype) if np_dtype is not None else None
        self._enum = enum
        self._tf_name = tf_name  # DT_FLOAT etc., as in OpDef text format

    @property
    def name(self):
        return self._name

    @property
    def as_numpy_dtype(self):
        """The NumPy scalar type used for storage (``ml_dtypes.bfloat16`` for bfloat16)."""
        return self._np.type if self._np is not None else object

    @property
    def as_datatype_enum(self):
        return self._enum

    @property
    def datatype_name(self):
        """The DataType enum's name (``DT_FLOAT``), as GraphDefs and OpDef text spell it."""
        return self._tf_name

    @property
    def is_floating(self):
        return self._name in ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn",
                              "float8_e5m2")

    @property
    def is_integer(self):
        return self._np is not None and self._np.kind in "iu"

    @property
    def is_complex(self):
        return self._np is not None and self._np.kind == "c"

    @property
    def real_dtype(self):
        """float32 for complex64, float64 for complex128, the dtype itself otherwise."""
        return {"complex64": float32, "complex128": float64}.get(self._name, self)

    @property
    def is_unsigned(self):
        return self._np is not None and self._np.kind == "u"

    @property
    def is_bool(self):
        return self._name == "bool"

    @property
    def is_numeric(self):
        return self.is_floating or self.is_integer

    @property
    def max(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).max)
        if self.is_integer:
            return int(np.iinfo(self._np).max)
        if self.is_bool:
            return True
        raise TypeError(f"Cannot find maximum value of {self._name}.")

    @property
    def min(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).min)
        if self.is_integer:
            return int(np.iinfo(self._np).min)
        if self.is_bool:
            return False
        raise TypeError(f"Cannot find minimum value of {self._name}.")

    @property
    def size(self):
        """Bytes per element (2 for bfloat16, 1 for the float8 formats)."""
        return self._np.itemsize

    @property
    def base_dtype(self):
        return self

    def is_compatible_with(self, other):
        return self == as_dtype(other)

    def __eq__(self, other):
        if other.__class__ is DType:
            return self is other  # DTypes are singletons
        try:
            return self._name == as_dtype(other)._name
        except TypeError:
            return False

    def __ne__(self, other):
        if other.__class__ is DType:
            return self is not other
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f"aics.{self._name}"

    def __reduce__(self):
        return as_dtype, (self._name,)


float16 = DType("float16", np.float16, 19, "DT_HALF")
half = float16
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, 14, "DT_BFLOAT16")
float32 = DType("float32", np.float32, 1, "DT_FLOAT")
float64 = DType("float64", np.float64, 2, "DT_DOUBLE")
double = float64
int8 = DType("int8", np.int8, 6, "DT_INT8")
int16 = DType("int16", np.int16, 5, "DT_INT16")
int32 = DType("int32", np.int32, 3, "DT_INT32")
int64 = DType("int64", np.int64, 9, "DT_INT64")
uint8 = DType("uint8", np.uint8, 4, "DT_UINT8")
bool = DType("bool", np.bool_, 10, "DT_BOOL")
string = DType("string", np.object_, 7, "DT_STRING")
resource = DType("resource", None, 20, "DT_RESOURCE")
variant = DType("variant", None, 21, "DT_VARIANT")
float8_e5m2 = DType("float8_e5m2", ml_dtypes.float8_e5m2, 24, "DT_FLOAT8_E5M2")
float8_e4m3fn = DType("float8_e4m3fn", ml_dtypes.float8_e4m3fn, 25, "DT_FLOAT8_E4M3FN")
complex64 = DType("complex64", np.complex64, 8, "DT_COMPLEX64")
complex128 = DType("complex128", np.complex128, 18, "DT_COMPLEX128")

_ALL = [float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool,
        string, resource, variant, float8_e5m2, float8_e4m3fn, complex64, complex128]

# Names accepted by as_dtype: our names, TF's OpDef spellings and DT_ enums.
_BY_NAME = {}
for _dt in _ALL:
    _BY_NAME[_dt.name] = _dt
    _BY_NAME[_dt._tf_name] = _dt
_BY_NAME.update({"half": float16, "float": float32, "double": float64})
_BY_NP = {np.dtype(np.float16): float16, np.dtype(np.float32): float32,
          np.dtype(np.float64): float64, np.dtype(np.int8): int8,
          np.dtype(np.int16): int16, np.dtype(np.int32): int32,
          np.dtype(np.int64): int64, np.dtype(np.uint8): uint8,
          np.dtype(np.bool_): bool, np.dtype(np.object_): string,
          np.dtype(ml_dtypes.bfloat16): bfloat16, np.dtype(ml_dtypes.float8_e5m2): float8_e5m2,
          np.dtype(ml_dtypes.float8_e4m3fn): float8_e4m3fn,
          np.dtype(np.complex64): complex64, np.dtype(np.complex128): complex128}
_BY_ENUM = {dt.as_datatype_enum: dt for dt in _ALL}


def as_dtype(type_value):
    """Converts a DType, a name ("float32", "float", "DT_FLOAT"), a NumPy dtype
    or a datatype enum to a DType. Raises TypeError for anything else."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        dt = _BY_NAME.get(type_value)
        if dt is not None:
            return dt
        raise TypeError(f"Cannot convert value {type_value!r} to a DType: unknown type name.")
    if isinstance(type_value, int) and not isinstance(type_value, (np.bool_,)) \
            and type(type_value) is int:
        dt = _BY_ENUM.get(type_value)
        if dt is not None:
            return dt
        raise TypeError(f"Cannot convert enum {type_value} to a DType.")
    try:
        dt = _BY_NP.get(np.dtype(type_value))
    except TypeError:
        dt = None
    if dt is not None:
        return dt
    raise TypeError(f"Cannot convert value {type_value!r} to a DType.")


def type_string(dtype):
    """TF's DataTypeString, the type name its C++ messages print: ``float``, ``double``,
    ``half`` for the float types, the DType name for the others."""
    name = as_dtype(dtype).name
    return {"float32": "float", "float64": "double", "float16": "half"}.get(name, name)
