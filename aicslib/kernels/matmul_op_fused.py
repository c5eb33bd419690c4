"""``_FusedMatMul`` CPU kernel (TF's ``core/kernels/matmul_op_fused.cc``).

The product is the registered ``MatMul`` kernel's (one BLAS GEMM); the bias
and activation are applied to it in place (``fused_eigen_output_kernels.py``).
Created by ``aicslib/grappler/optimizers/remapper.py``. (The speed layer's
version, ``aicslib/accel/fused_output_stage.py``, applies the stage in C.)
"""
from ..framework.dtypes import float32, float64
from ..framework.kernel_registry import register_kernel
from .fused_eigen_output_kernels import apply_output_stage, contraction


def fused_matmul(ctx, a, b, args, output_stage=apply_output_stage):
    """The registered MatMul kernel on ``(a, b)``, then the fused ``output_stage``."""
    at = ctx.attrs
    y = contraction("MatMul", (a, b), {"T": at["T"], "transpose_a": at["transpose_a"],
                                       "transpose_b": at["transpose_b"]})
    return output_stage(y, list(at["fused_ops"]), args, at["epsilon"], f"_FusedMatMul '{ctx.node_name}'")


@register_kernel("_FusedMatMul", type_constraint={"T": [float32, float64]})
def _fused_matmul(ctx, a, b, args):
    return fused_matmul(ctx, a, b, args)
