"""Notebook 11 (Python calling C): what ``sdot(lib, x, y)`` must return, and what its ctypes
declaration must say.

The C side (``aicslib/native/src/aics_gemm.h``)::

    float aics_sdot(int64_t n, const float *x, const float *y);

``float32_dot`` is the value: the float32 products of the two sequences (converted as C sees
them), summed in float64. ``declaration_problem`` reads a ctypes function's ``argtypes`` and
``restype`` and says what disagrees with that prototype (None when nothing does): ctypes never
sees the header, so a wrong declaration is silent until a value is cut or a register misread.
"""
import ctypes

import numpy as np

_SIGNED_64 = tuple({ctypes.c_int64, ctypes.c_longlong, ctypes.c_long, ctypes.c_ssize_t}
                   if ctypes.sizeof(ctypes.c_long) == 8 else {ctypes.c_int64, ctypes.c_longlong})


def float32_dot(x, y):
    """sum_i float32(x_i) * float32(y_i), accumulated in float64 (a Python float)."""
    x32, y32 = np.asarray(x, np.float32).ravel(), np.asarray(y, np.float32).ravel()
    return float(np.sum(x32.astype(np.float64) * y32.astype(np.float64)))


def abs_dot(x, y):
    """sum_i |x_i * y_i| in float64: the scale a float32 sum's rounding error is relative to."""
    x32, y32 = np.asarray(x, np.float32).ravel(), np.asarray(y, np.float32).ravel()
    return float(np.sum(np.abs(x32.astype(np.float64) * y32.astype(np.float64))))


def _name(t):
    if t is None:
        return "None"
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        return f"ctypes.POINTER(ctypes.{t._type_.__name__})"
    if hasattr(t, "_dtype_"):               # numpy.ctypeslib.ndpointer(...)
        return f"ndpointer(dtype={t._dtype_})"
    return f"ctypes.{t.__name__}" if isinstance(t, type) else repr(t)


def _float_pointer_problem(t, i, what):
    if t is ctypes.c_void_p:
        return None
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        if t._type_ is ctypes.c_float:
            return None
        return (f"argtypes[{i}] is {_name(t)}, but the header declares const float *{what}: a pointer to "
                f"float32 (ctypes.c_void_p or ctypes.POINTER(ctypes.c_float))")
    if hasattr(t, "_dtype_") and hasattr(t, "_flags_"):
        if t._dtype_ is None or t._dtype_ == np.dtype(np.float32):
            return None
        return f"argtypes[{i}] is {_name(t)}, but const float *{what} points to float32"
    return (f"argtypes[{i}] is {_name(t)}, which is not a pointer type; the header declares const float *{what} "
            f"(declare ctypes.c_void_p or ctypes.POINTER(ctypes.c_float))")


def declaration_problem(fn):
    """None if ctypes function ``fn`` is declared as ``float aics_sdot(int64_t, const float *,
    const float *)``, else what is wrong, in a sentence for the student."""
    restype, argtypes = fn.restype, fn.argtypes
    if restype is not ctypes.c_float:
        why = {ctypes.c_int: "ctypes' default, c_int: the float the C function returns is never read",
               ctypes.c_double: "the C function returns a float (32 bits), not a double: ctypes would read "
                                "the wrong bits"}.get(restype, "not the C function's float")
        return f"lib.aics_sdot.restype is {_name(restype)} ({why}); declare restype = ctypes.c_float"
    if not argtypes or len(argtypes) != 3:
        return (f"lib.aics_sdot.argtypes is {argtypes!r}: declare the three parameter types of "
                f"(int64_t n, const float *x, const float *y)")
    n_type = argtypes[0]
    if n_type not in _SIGNED_64:
        head = (f"lib.aics_sdot.argtypes[0] is {_name(n_type)}, but the header declares int64_t n, "
                f"a signed 64-bit length: ")
        integer = isinstance(n_type, type) and getattr(n_type, "_type_", None) in tuple("bBhHiIlLqQ")
        if not integer:
            return head + "declare ctypes.c_int64"
        if ctypes.sizeof(n_type) < 8:
            return (head + f"{_name(n_type)} has {8 * ctypes.sizeof(n_type)} bits, and ctypes silently cuts a Python "
                    f"int to the declared width, so a length of 2^31 or more would reach C wrapped around. "
                    f"Declare ctypes.c_int64")
        return head + "declare the signed ctypes.c_int64, not an unsigned type"
    for i, what in ((1, "x"), (2, "y")):
        problem = _float_pointer_problem(argtypes[i], i, what)
        if problem:
            return "lib.aics_sdot." + problem
    return None


# ---------------------------------------------------------------------------------------------
# The second exercise: C's frexp from the C maths library, with an output parameter.
#
#     double frexp(double x, int *exp);      /* x = m * 2^exp, 0.5 <= |m| < 1 (m = 0 for x = 0) */


def frexp_declaration_problem(fn):
    """None if ctypes function ``fn`` is declared as ``double frexp(double, int *)``, else what is
    wrong, in a sentence for the student."""
    restype, argtypes = fn.restype, fn.argtypes
    if restype is not ctypes.c_double:
        why = {ctypes.c_int: "ctypes' default, c_int: the double the C function returns is never read",
               ctypes.c_float: "the C function returns a double (64 bits): a float would read the wrong register "
                               "or lose precision"}.get(restype, "not the C function's double")
        return f"lib.frexp.restype is {_name(restype)} ({why}); declare restype = ctypes.c_double"
    if not argtypes or len(argtypes) != 2:
        return f"lib.frexp.argtypes is {argtypes!r}: declare the two parameter types of (double x, int *exp)"
    if argtypes[0] is not ctypes.c_double:
        return (f"lib.frexp.argtypes[0] is {_name(argtypes[0])}, but the header declares double x: declare "
                f"ctypes.c_double (a c_float would round x to float32 before C sees it)")
    t = argtypes[1]
    if not (isinstance(t, type) and issubclass(t, ctypes._Pointer)):
        return (f"lib.frexp.argtypes[1] is {_name(t)}, but the header declares int *exp, a pointer to where C "
                f"writes the exponent: declare ctypes.POINTER(ctypes.c_int)")
    if not (t._type_ in (ctypes.c_int, ctypes.c_int32) and ctypes.sizeof(t._type_) == 4):
        return (f"lib.frexp.argtypes[1] is {_name(t)}, but int *exp points to a 32-bit int: C writes 4 bytes, "
                f"the rest of a {8 * ctypes.sizeof(t._type_)}-bit buffer keeps what it held. Declare "
                f"ctypes.POINTER(ctypes.c_int)")
    return None


def frexp(lib, x):
    """(m, e) from C's frexp through ``lib`` (a ctypes.CDLL of the C maths library)."""
    lib.frexp.argtypes = [ctypes.c_double, ctypes.POINTER(ctypes.c_int)]
    lib.frexp.restype = ctypes.c_double
    e = ctypes.c_int(0)
    m = lib.frexp(float(x), ctypes.byref(e))
    return float(m), int(e.value)
