"""MatMul with the BLAS threads chosen by size: the speed layer's kernel.

The reference (``aicslib/kernels/matmul_op.py``) is one ``np.dot``. Here a
product of middling size runs on one BLAS thread (``work_sharder.SingleThreadedBlas``):
OpenBLAS's threads spin-wait in lockstep, which costs more than it gains there
(benchmarks/README.md, "MatMul").
"""
import numpy as np

from ..kernels.matmul_op import TYPES, matmul
from .registration import register_fast_kernel
from .work_sharder import SingleThreadedBlas

# Below about this many flops OpenBLAS stays on one thread by itself, and switching it to one
# thread costs more than it could save (benchmarks/README.md, "MatMul").
OPENBLAS_THREADS_FROM = 5e5
# Up to about this many flops one BLAS thread is as fast as two on an idle machine.
SINGLE_THREAD_UNTIL = 5e6


def blas_dot(a, b):
    """A small GEMM runs on one BLAS thread: a 2-thread OpenBLAS spinning for a core that another
    thread or process holds is many times slower on a busy machine, and on an idle one a single
    thread is as fast at this size. Bigger ones keep BLAS's own threads.
    Cutting them over our own threads instead, each with a one-thread BLAS (as the convolutions'
    GEMMs are, ``work_sharder.matmul``), helps only on a machine whose cores other processes
    hold, and costs more than it gains on an idle one (benchmarks/README.md, "MatMul"), so it is
    not done here."""
    flops = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
    if OPENBLAS_THREADS_FROM <= flops < SINGLE_THREAD_UNTIL:
        with SingleThreadedBlas():
            return np.dot(a, b)
    return np.dot(a, b)


_BLAS_TYPES = (np.dtype(np.float32), np.dtype(np.float64))
#: From this many output elements the product is NumPy's matmul: np.dot zeroes its output before
#: the GEMM (which zeroes it again), np.matmul does not; below it np.dot's call is the cheaper one
#: (benchmarks/README.md, "MNIST step: buffer forwarding and the Python per step"). Same GEMM, same bits.
MATMUL_FROM = 1 << 14


@register_fast_kernel("MatMul", {"T": TYPES})
def matmul_kernel(a, b, transpose_a=False, transpose_b=False):
    # Two float matrices of matching sizes, the MLP's every product, in one frame: the
    # reference's checks inline, then its np.dot. Anything else, an error included, goes through
    # the reference's steps.
    if a.ndim == 2 == b.ndim and a.dtype in _BLAS_TYPES:
        x = a.T if transpose_a else a
        y = b.T if transpose_b else b
        if x.shape[1] == y.shape[0]:
            product = np.matmul if x.shape[0] * y.shape[1] >= MATMUL_FROM else np.dot
            flops = 2.0 * x.shape[0] * x.shape[1] * y.shape[1]
            if OPENBLAS_THREADS_FROM <= flops < SINGLE_THREAD_UNTIL:
                with SingleThreadedBlas():
                    return product(x, y)
            return product(x, y)
    return matmul(a, b, transpose_a, transpose_b, product=blas_dot)
