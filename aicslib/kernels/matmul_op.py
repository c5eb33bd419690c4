"""MatMul and BatchMatMul CPU kernels (TF's core/kernels/matmul_op.cc): one BLAS GEMM.

float16 and bfloat16 products are accumulated in float32 and rounded once at
the end, as GPU tensor cores and TF's CPU kernels do: summing thousands of
products in 11 (or 8) significant bits would lose the small ones.
"""
import numpy as np

from ..framework.dtypes import bfloat16, float16, float32, float64, int32, int64
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel
from .work_sharder import SingleThreadedBlas

_TYPES = [float16, bfloat16, float32, float64, int32, int64]
_ACCUMULATE_IN_FLOAT32 = (np.dtype(np.float16), np.dtype(bfloat16.as_numpy_dtype))


def _gemm(a, b, product):
    """``product(a, b)``, in float32 for half-precision inputs, rounded once to their dtype."""
    if a.dtype in _ACCUMULATE_IN_FLOAT32:
        return product(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return product(a, b)


def check_matmul_ranks(x, y, batched):
    """TF's refusal of operands that are not (batches of) matrices: NumPy would take a
    vector as a matrix and a scalar times a matrix as a product."""
    for i, t in enumerate((x, y)):
        if t.ndim < 2:
            raise InvalidArgumentError(None, None, f"In[{i}] ndims must be >= 2: {t.ndim}")
        if not batched and t.ndim != 2:
            raise InvalidArgumentError(None, None, f"In[{i}] ndims must be == 2: {t.ndim}")


@register_kernel("MatMul", type_constraint={"T": _TYPES})
def _matmul(a, b, transpose_a=False, transpose_b=False):
    check_matmul_ranks(a, b, batched=False)
    if transpose_a:
        a = a.T
    if transpose_b:
        b = b.T
    if a.shape[1] != b.shape[0]:
        raise InvalidArgumentError(None, None, f"Matrix size-incompatible: In[0]: {list(a.shape)}, "
                                   f"In[1]: {list(b.shape)}")
    return _gemm(a, b, _dot)


# Below about this many flops OpenBLAS stays on one thread by itself, and switching costs ~2 µs.
_OPENBLAS_THREADS_FROM = 5e5
# Up to about this many flops one BLAS thread is as fast as two on an idle machine (measured
# 45 vs 42 µs at 4.7 MFLOP; at 7.7 MFLOP two threads win, 41 vs 71 µs).
_SINGLE_THREAD_UNTIL = 5e6


def _dot(a, b):
    """A small GEMM runs on one BLAS thread: a 2-thread OpenBLAS spinning for a core that another
    thread or process holds made a 576x64 Gram product 400x slower on a busy 2-core machine, and
    on an idle one a single thread is as fast at this size. Bigger ones keep BLAS's own threads.
    Cutting them over our own threads instead, each with a one-thread BLAS (as the convolutions'
    GEMMs are, ``work_sharder.matmul``), helps only on a machine whose cores other processes
    hold (128x784 @ 784x300: 0.7 ms against 2.6 ms at a load of 12 on 2 cores), and costs more
    than it gains on an idle one (the MNIST MLP step: 1.26x PyTorch's time with BLAS's threads,
    1.54-1.74x with ours, `bench_mnist.py` on an idle 2-core machine), so it is not done here."""
    flops = 2.0 * a.shape[0] * a.shape[1] * b.shape[1]
    if _OPENBLAS_THREADS_FROM <= flops < _SINGLE_THREAD_UNTIL:
        with SingleThreadedBlas():
            return np.dot(a, b)
    return np.dot(a, b)


@register_kernel("BatchMatMulV2", type_constraint={"T": _TYPES})
def _batch_matmul(x, y, adj_x=False, adj_y=False):
    check_matmul_ranks(x, y, batched=True)
    if adj_x:
        x = np.swapaxes(x, -1, -2)
    if adj_y:
        y = np.swapaxes(y, -1, -2)
    if x.shape[-1] != y.shape[-2]:
        raise InvalidArgumentError(None, None, f"Matrix size-incompatible: In[0]: {list(x.shape)}, "
                                   f"In[1]: {list(y.shape)}")
    return _gemm(x, y, np.matmul)


# The course's accelerator (/mlu:0) is simulated: the same NumPy code, registered for the
# MLU device type, so graphs can place MatMul there and traces show it on that device.
register_kernel("MatMul", device="MLU", type_constraint={"T": [float16, float32]})(_matmul)
