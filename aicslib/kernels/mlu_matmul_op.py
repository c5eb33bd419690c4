"""MatMul on the simulated MLU device, float32: the tiled kernel of ``aicslib.mlu`` run on a
simulated core (NRAM tiles, DMA, on-chip products), as a real MLU kernel is written in BANG C.
Chapter 11's lab writes this kernel and puts its own in place with
``aics.experimental.use_kernel("MatMul", mlu.matmul_kernel(fn), device="MLU")``. float16 on the
MLU keeps the plain NumPy kernel of ``matmul_op.py``."""
from .. import mlu
from ..framework.dtypes import float32
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel
from .matmul_op import check_matmul_ranks

_on_core = mlu.matmul_kernel(mlu.reference_matmul)


@register_kernel("MatMul", device="MLU", type_constraint={"T": [float32]}, priority=1)
def _mlu_matmul(a, b, transpose_a=False, transpose_b=False):
    check_matmul_ranks(a, b, batched=False)
    k_a = a.shape[0] if transpose_a else a.shape[1]
    k_b = b.shape[1] if transpose_b else b.shape[0]
    if k_a != k_b:
        shown_a = list(a.shape[::-1]) if transpose_a else list(a.shape)
        shown_b = list(b.shape[::-1]) if transpose_b else list(b.shape)
        raise InvalidArgumentError(None, None, f"Matrix size-incompatible: In[0]: {shown_a}, In[1]: {shown_b}")
    return _on_core(a, b, transpose_a, transpose_b)
