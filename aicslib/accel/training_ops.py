"""ResourceApplyMomentum in the speed layer: the reference's update without its temporary.

The reference (``aicslib/kernels/training_ops.py``) writes ``var -= accum * lr``, which
allocates a fresh ``accum * lr`` array each step; for a 784x300 layer that is about 1 MB,
handed back to the OS when freed and page-faulted in again the next step. Here the product
goes into the work sharder's reused scratch buffer and is subtracted from there: the same
two roundings in the same order, so the same bits as the reference.
"""
import numpy as np

from ..kernels.training_ops import FLOAT, apply_momentum, check_update_shapes
from .registration import register_fast_kernel
from .work_sharder import scratch

#: Below this many elements the temporary is small enough for malloc to recycle it.
SCRATCH_FROM = 1 << 14


@register_fast_kernel("ResourceApplyMomentum", FLOAT)
def apply_momentum_kernel(var, accum, lr, grad, momentum, use_nesterov=False):
    if use_nesterov or grad.dtype.char not in "fd" or np.size(grad) < SCRATCH_FROM:
        return apply_momentum(var, accum, lr, grad, momentum, use_nesterov)
    with var.lock:
        check_update_shapes("ResourceApplyMomentum", var, grad, accum)
        a = accum.writable_value()
        a *= momentum
        a += grad                       # accum = accum * momentum + grad
        w = var.writable_value()
        step = scratch("momentum_step", w.shape, w.dtype)
        np.multiply(a, lr, out=step)
        w -= step                       # var -= lr * accum
        accum.store_updated(a)
        var.store_updated(w)
