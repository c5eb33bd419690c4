"""MaxPoolGrad in C for float32: the speed layer's kernel.

The reference (``aicslib/kernels/pooling_ops.py``) sends each window's gradient
to its first maximum with one masked NumPy copy per window tap, element by
element; ``src/aics_pooling.c`` visits each window once (benchmarks/README.md,
"MaxPoolGrad"), with the same answers: bit for bit where windows do
not overlap; where they do, a pixel's gradients are added window by window, as
TF does, instead of tap by tap, so a sum of three or more may round differently.
"""
import numpy as np

from ..framework.dtypes import float32
from ..kernels.pooling_ops import max_pool_grad as reference_max_pool_grad
from ..kernels.pooling_ops import pool_geometry, run_max_pool_grad
from . import c_pooling, work_sharder
from .registration import register_fast_kernel

#: Inputs of at least this many elements have their C MaxPoolGrad split over the threads by
#: image (handing work to a pool thread costs about this many elements' worth).
NATIVE_SPLIT_ELEMENTS = 1 << 18


def max_pool_grad(x, y, grad, ksize, strides, padding):
    """:func:`~aicslib.kernels.pooling_ops.max_pool_grad` in C for float32 operands where the
    library is built (the reference's NumPy otherwise), images split over the threads."""
    lib = c_pooling.library() if x.dtype == y.dtype == grad.dtype == np.float32 else None
    if lib is None:
        return reference_max_pool_grad(x, y, grad, ksize, strides, padding)
    kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr = pool_geometry(x.shape, ksize, strides, padding, "NHWC")
    N = x.shape[0]
    x, y, grad = (np.ascontiguousarray(a) for a in (x, y, grad))
    dx = np.zeros(x.shape, np.float32)
    geometry = (kh, kw, sh, sw, pt, pl)
    parts = work_sharder.NUM_THREADS if x.size >= NATIVE_SPLIT_ELEMENTS else 1
    step = max(1, -(-N // parts))
    work_sharder.run_blocks(lambda b: c_pooling.max_pool_grad(lib, x, y, grad, dx, geometry, b[0], b[1]),
                            [(n, min(n + step, N), 0, 0) for n in range(0, N, step)])
    return dx


@register_fast_kernel("MaxPoolGrad", {"T": [float32]})
def max_pool_grad_kernel(orig_input, orig_output, grad, ksize, strides, padding, data_format):
    return run_max_pool_grad(max_pool_grad, orig_input, orig_output, grad, ksize, strides, padding, data_format)
