"""MatMul and BatchMatMul CPU kernels (TF's core/kernels/matmul_op.cc): one BLAS GEMM.

(The speed layer's MatMul, ``aicslib/accel/matmul.py``, also decides how many BLAS threads run it.)

float16 and bfloat16 products are accumulated in float32 and rounded once at
the end, as GPU tensor cores and TF's CPU kernels do: summing thousands of
products in 11 (or 8) significant bits would lose the small ones.
"""
import numpy as np

from ..framework.dtypes import bfloat16, float16, float32, float64, int32, int64
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel

TYPES = [float16, bfloat16, float32, float64, int32, int64]
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


def matmul(a, b, transpose_a=False, transpose_b=False, product=np.dot):
    """MatMul's result after TF's checks: ``product(op(a), op(b))`` (``np.dot``: one BLAS GEMM)."""
    check_matmul_ranks(a, b, batched=False)
    if transpose_a:
        a = a.T
    if transpose_b:
        b = b.T
    if a.shape[1] != b.shape[0]:
        raise InvalidArgumentError(None, None, f"Matrix size-incompatible: In[0]: {list(a.shape)}, "
                                   f"In[1]: {list(b.shape)}")
    return _gemm(a, b, product)


@register_kernel("MatMul", type_constraint={"T": TYPES})
def _matmul(a, b, transpose_a=False, transpose_b=False):
    return matmul(a, b, transpose_a, transpose_b)


@register_kernel("BatchMatMulV2", type_constraint={"T": TYPES})
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
