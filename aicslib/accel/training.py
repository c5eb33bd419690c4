"""ResourceApplyMomentum in C for float32: the speed layer's kernel.

The reference (``aicslib/kernels/training_ops.py``) updates the variable and its accumulator
with one NumPy call per step; ``src/aics_training.c`` makes one pass, with the same bits
(benchmarks/README.md, "Momentum in one pass"). Checks, locking and copy-on-write are the
reference's (``apply_momentum``); only the arithmetic is swapped.
"""
import numpy as np

from ..framework.dtypes import float32
from ..kernels.training_ops import apply_momentum, momentum_update
from . import c_training
from .registration import register_fast_kernel


#: Variables of at least this many elements are updated in C: below it the ctypes call (about
#: 4 us) costs more than NumPy's four passes (benchmarks/README.md, "Momentum in one pass").
C_FROM_ELEMENTS = 1 << 14


def momentum_update_in_c(w, a, grad, lr, momentum, use_nesterov):
    """:func:`~aicslib.kernels.training_ops.momentum_update` in C where the library is built and
    the arrays are large, float32 and contiguous (NumPy's steps otherwise)."""
    grad = np.asarray(grad)
    lib = c_training.library() if w.size >= C_FROM_ELEMENTS and c_training.handles(w, a, grad) else None
    if lib is None:
        momentum_update(w, a, grad, lr, momentum, use_nesterov)
    else:
        c_training.apply_momentum(lib, w, a, grad, np.float32(lr), np.float32(momentum), use_nesterov)


@register_fast_kernel("ResourceApplyMomentum", {"T": [float32]})
def apply_momentum_kernel(var, accum, lr, grad, momentum, use_nesterov=False):
    apply_momentum(var, accum, lr, grad, momentum, use_nesterov, update=momentum_update_in_c)
