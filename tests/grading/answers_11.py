"""Plausible wrong answers for notebook 11 (Python calling C), keyed by grade_id.

Each replaces the body of ``sdot(lib, x, y)``; each must lose the exercise's 3 points.
None of them may crash the kernel (a wrong pointer width would): they declare the
arguments as pointers and hand over buffers at least as long as what C reads."""

WRONG_ANSWERS = {
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

