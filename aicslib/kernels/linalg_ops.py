"""CPU kernels of the matrix decompositions (TF's core/kernels/linalg/qr_op_impl.h), with NumPy's LAPACK."""
import numpy as np

from ..framework.kernel_registry import register_kernel


@register_kernel("Qr")
def _qr(input, full_matrices=False):
    q, r = np.linalg.qr(input, mode="complete" if full_matrices else "reduced")
    return q.astype(input.dtype, copy=False), r.astype(input.dtype, copy=False)
