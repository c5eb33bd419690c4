"""aicslib.native: a C kernel called from Python three ways (exercise 5.8).

TensorFlow's Python layer is a thin shell around C++: ops are built and run by
calling into a compiled library through a binding layer (SWIG in TF 1.x,
pybind11 in TF 2.x). This package shows that boundary on one small C function,
``aics_sgemm`` (``src/aics_gemm.c``, a blocked float32 matrix multiply), reached

* through ctypes (``ctypes_binding``): load a plain shared library, declare the
  C signature in Python;
* through SWIG (``swig_binding``): generate a CPython extension from an
  interface file ``src/aics_gemm.i``;
* through pybind11 (``pybind11_binding``): write the extension in C++ with
  ``py::array_t``.

The sources are compiled on first use (``build``) and cached: building a
binding is part of the lesson. The kernel is registered for MatMul on the
NATIVE device (``aicslib/kernels/native_matmul_op.py``)::

    with aics.device("/device:NATIVE:0"):
        c = aics.matmul(a, b)          # runs aics_sgemm in C

The C kernels that make the CPU kernels fast are not here: they are the speed
layer's (``aicslib/accel``), compiled at install.

Environment: AICS_NATIVE_CC / AICS_NATIVE_CXX choose the compilers,
AICS_NATIVE_CACHE the cache folder (call ``reset()`` after changing them).
"""
import ctypes

from .build import (BindingUnavailable, BuildError, CompilerNotFoundError, cache_dir,
                    find_compiler, source_path)
from .ctypes_binding import compile_library
from . import swig_binding
from .boundary import C_KERNEL, c_function_location, native_call_path
from .gemm import (BINDINGS, available, fallback_reason, load, numpy_sgemm, reset,
                   sgemm)


def swig_generated_files():
    """{'wrapper': path, 'module': path} of the files SWIG generated (building them if needed)."""
    return swig_binding.generated_files(swig_binding.build_module())


def exercise_library():
    """A fresh ``ctypes.CDLL`` of the compiled library with NOTHING declared: the graded exercise
    declares ``aics_sdot``'s argtypes and restype itself. Raises CompilerNotFoundError without a
    C compiler."""
    return ctypes.CDLL(compile_library())
