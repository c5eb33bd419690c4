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


@register_fast_kernel("MatMul", {"T": TYPES})
def matmul_kernel(a, b, transpose_a=False, transpose_b=False):
    return matmul(a, b, transpose_a, transpose_b, product=blas_dot)
