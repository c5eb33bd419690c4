"""Plausible wrong answers for notebook 11 (Python calling C), keyed by grade_id.

Each replaces the body of ``sdot(lib, x, y)`` or ``frexp(lib, x)``; each must lose its exercise's 3 points.
None of them may crash the kernel (a wrong pointer width would): they declare the
arguments as pointers and hand over buffers at least as long as what C reads."""

# frexp with one declaration or step changed
_FREXP = """
lib.frexp.argtypes = [{X}, ctypes.POINTER({E})]
{RESTYPE}
exponent = {E}(0)
mantissa = lib.frexp(x, ctypes.byref(exponent))
return {RESULT}
"""
_FREXP_RIGHT = dict(X="ctypes.c_double", E="ctypes.c_int", RESTYPE="lib.frexp.restype = ctypes.c_double",
                    RESULT="float(mantissa), exponent.value")


def _frexp(**wrong):
    return _FREXP.format(**{**_FREXP_RIGHT, **wrong})


WRONG_ANSWERS = {
    "ctypes_frexp": {
        # restype left at ctypes' default (int): the double C returns is never read
        "restype_not_declared": _frexp(RESTYPE="pass", RESULT="mantissa, exponent.value"),
        # a float restype: ctypes reads 32 bits of the 64-bit double
        "restype_c_float": _frexp(RESTYPE="lib.frexp.restype = ctypes.c_float"),
        # x declared float: ctypes hands C a float where it reads a double
        "argument_c_float": _frexp(X="ctypes.c_float"),
        # int * declared as a pointer to a 64-bit long: C writes 4 of its 8 bytes (wrong for negative e)
        "exponent_pointer_c_long": _frexp(E="ctypes.c_long"),
        # the ctypes object itself returned instead of its .value
        "returns_the_c_int_object": _frexp(RESULT="float(mantissa), exponent"),
        # Python's own frexp: right numbers, no C binding at all
        "python_math_frexp": """
import math
return math.frexp(x)
""",
        # NumPy's: NumPy types, and no binding
        "numpy_frexp": """
m, e = np.frexp(x)
return m, e
""",
        "copies_the_package_reference": """
from workbook.references.bindings import frexp as _reference
return _reference(lib, x)
""",
    },
    "ctypes_sdot": {
        # restype left at ctypes' default (int): the float returned in a register is never read
        "restype_not_declared": """
lib.aics_sdot.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
x = np.ascontiguousarray(x, dtype=np.float32)
y = np.ascontiguousarray(y, dtype=np.float32)
if x.shape != y.shape:
    raise ValueError("x and y differ in length")
return lib.aics_sdot(x.size, x.ctypes.data, y.ctypes.data)
""",
        # float64 buffers handed to `const float *`: C reads the first half of each as float32 pairs
        "float64_buffers": """
lib.aics_sdot.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
lib.aics_sdot.restype = ctypes.c_float
x = np.ascontiguousarray(x, dtype=np.float64)
y = np.ascontiguousarray(y, dtype=np.float64)
if x.shape != y.shape:
    raise ValueError("x and y differ in length")
return float(lib.aics_sdot(x.size, x.ctypes.data, y.ctypes.data))
""",
        # dtype converted but not contiguity: a strided float32 view passes its first address,
        # and C walks the memory densely from there
        "strided_view_not_made_contiguous": """
lib.aics_sdot.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
lib.aics_sdot.restype = ctypes.c_float
x = np.asarray(x, dtype=np.float32)
y = np.asarray(y, dtype=np.float32)
if x.shape != y.shape:
    raise ValueError("x and y differ in length")
return float(lib.aics_sdot(x.size, x.ctypes.data, y.ctypes.data))
""",
        # declares the double the C function does not return
        "restype_c_double": """
lib.aics_sdot.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
lib.aics_sdot.restype = ctypes.c_double
x = np.ascontiguousarray(x, dtype=np.float32)
y = np.ascontiguousarray(y, dtype=np.float32)
if x.shape != y.shape:
    raise ValueError("x and y differ in length")
return float(lib.aics_sdot(x.size, x.ctypes.data, y.ctypes.data))
""",
        # the shortcut: NumPy's dot, never crossing into C
        "numpy_dot_shortcut": """
lib.aics_sdot.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
lib.aics_sdot.restype = ctypes.c_float
x = np.asarray(x, dtype=np.float32)
y = np.asarray(y, dtype=np.float32)
if x.shape != y.shape:
    raise ValueError("x and y differ in length")
return float(np.dot(x, y))
""",
        # everything right except the length: int64_t n declared as a 32-bit c_int (right for
        # short arrays, cut to 32 bits from 2^31 on)
        "length_declared_c_int": """
lib.aics_sdot.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
lib.aics_sdot.restype = ctypes.c_float
x = np.ascontiguousarray(x, dtype=np.float32)
y = np.ascontiguousarray(y, dtype=np.float32)
if x.shape != y.shape:
    raise ValueError("x and y differ in length")
return float(lib.aics_sdot(x.size, x.ctypes.data, y.ctypes.data))
""",
        # pointers declared as POINTER(c_double) and float64 buffers handed over: consistent in
        # Python, but C reads float32
        "double_pointers": """
P = ctypes.POINTER(ctypes.c_double)
lib.aics_sdot.argtypes = [ctypes.c_int64, P, P]
lib.aics_sdot.restype = ctypes.c_float
x = np.ascontiguousarray(x, dtype=np.float64)
y = np.ascontiguousarray(y, dtype=np.float64)
if x.shape != y.shape:
    raise ValueError("x and y differ in length")
return float(lib.aics_sdot(x.size, x.ctypes.data_as(P), y.ctypes.data_as(P)))
""",
        # no ValueError: the lengths are never compared (C reads min or past the end)
        "lengths_not_checked": """
lib.aics_sdot.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
lib.aics_sdot.restype = ctypes.c_float
x = np.ascontiguousarray(x, dtype=np.float32)
y = np.ascontiguousarray(y, dtype=np.float32)
n = min(x.size, y.size)
return float(lib.aics_sdot(n, x.ctypes.data, y.ctypes.data))
""",
        # the package's reference value: declared right, but C is never called
        "copies_the_package_reference": """
lib.aics_sdot.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
lib.aics_sdot.restype = ctypes.c_float
from workbook.references.bindings import float32_dot
if len(x) != len(y):
    raise ValueError("x and y differ in length")
return float32_dot(x, y)
""",
    },
}

CORRECT_ANSWERS = {
    "ctypes_frexp": {
        # c_int32 (the same type as c_int here), ctypes.pointer instead of byref, restype declared first
        "pointer_and_c_int32": """
fn = lib.frexp
fn.restype = ctypes.c_double
fn.argtypes = (ctypes.c_double, ctypes.POINTER(ctypes.c_int32))
e = ctypes.c_int32()
m = fn(float(x), ctypes.pointer(e))
return m, int(e.value)
""",
    },
    "ctypes_sdot": {
        # NumPy's ndpointer as argtypes: ctypes checks dtype and contiguity and passes the arrays
        "ndpointer_argtypes": """
from numpy.ctypeslib import ndpointer
vec = ndpointer(dtype=np.float32, ndim=1, flags="C_CONTIGUOUS")
lib.aics_sdot.argtypes = [ctypes.c_int64, vec, vec]
lib.aics_sdot.restype = ctypes.c_float
x = np.require(np.asarray(x, dtype=np.float32), requirements="C")
y = np.require(np.asarray(y, dtype=np.float32), requirements="C")
if len(x) != len(y):
    raise ValueError(f"lengths differ: {len(x)} and {len(y)}")
return float(lib.aics_sdot(len(x), x, y))
""",
        # c_longlong and typed float pointers (data_as), copies made with np.array
        "longlong_and_float_pointers": """
FP = ctypes.POINTER(ctypes.c_float)
fn = lib.aics_sdot
fn.argtypes = (ctypes.c_longlong, FP, FP)
fn.restype = ctypes.c_float
xs = np.array(x, dtype=np.float32, order="C", copy=True).reshape(-1)
ys = np.array(y, dtype=np.float32, order="C", copy=True).reshape(-1)
if xs.shape != ys.shape:
    raise ValueError("x and y must have the same length")
result = fn(ctypes.c_longlong(xs.size), xs.ctypes.data_as(FP), ys.ctypes.data_as(FP))
return float(result)
""",
    },
}

