"""MatMul on the simulated MLU device, float32: the tiled kernel of ``aicslib.mlu`` run on a
simulated core (NRAM tiles, DMA, on-chip products), as a real MLU kernel is written in BANG C.
Chapter 13's lab writes this kernel and puts its own in place with
``aics.experimental.use_kernel("MatMul", mlu.matmul_kernel(fn), device="MLU")``. float16 on the
MLU keeps the plain NumPy kernel of ``matmul_op.py``."""
from .. import mlu
from ..framework.dtypes import float32
from ..framework.kernel_registry import register_kernel
from .matmul_op import matmul

_on_core = mlu.matmul_kernel(mlu.reference_matmul)


@register_kernel("MatMul", device="MLU", type_constraint={"T": [float32]}, priority=1)
def _mlu_matmul(a, b, transpose_a=False, transpose_b=False):
    # MatMul's own checks and transposes (TF's errors), then the product on the simulated core
    return matmul(a, b, transpose_a, transpose_b, product=_on_core)
