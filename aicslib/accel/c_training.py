"""Optimizer updates in C (``src/aics_training.c``) through ctypes.

``training.py`` calls :func:`apply_momentum` for float32 ResourceApplyMomentum where this
library is built: one pass over the variable and its accumulator instead of NumPy's four, with
the NumPy kernel's bits (see the C file).
"""
import functools

import numpy as np

from . import native_loader

LIBRARY = "libaics_training"

#: ``library()``: the loaded library, or None where it was not built (``fallback_reason()`` says why).
library = functools.partial(native_loader.library, LIBRARY)
fallback_reason = functools.partial(native_loader.missing_reason, LIBRARY)


def handles(w, a, grad):
    """Whether :func:`apply_momentum` can update these: float32, C-contiguous, one size, and
    the variable and accumulator writable."""
    return (w.dtype == a.dtype == grad.dtype == np.float32 and w.flags.c_contiguous and a.flags.c_contiguous
            and grad.flags.c_contiguous and w.size == a.size == grad.size and w.flags.writeable
            and a.flags.writeable)


def apply_momentum(lib, w, a, grad, lr, momentum, use_nesterov):
    """TF's momentum rule in place on ``w`` and ``a`` (``handles`` them); ``lr`` and ``momentum``
    float32 scalars (passed exactly: a float32 is a Python float without rounding)."""
    # The addresses from the array interface: ``.ctypes`` builds a Python object per array.
    status = lib.aics_apply_momentum_f32(w.__array_interface__["data"][0], a.__array_interface__["data"][0],
                                         grad.__array_interface__["data"][0], float(lr), float(momentum),
                                         w.size, int(bool(use_nesterov)))
    if status != 0:
        raise RuntimeError(f"aics_apply_momentum_f32 failed (status {status}) on {w.size} elements")
