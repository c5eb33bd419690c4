"""``_FusedConv2D`` and ``_FusedDepthwiseConv2dNative`` CPU kernels (TF's ``conv_ops_fused_impl.h``).

The convolution is the registered ``Conv2D`` / ``DepthwiseConv2dNative``
kernel itself; the bias or batch norm and the activation are applied to its
output in place (``fused_eigen_output_kernels.py``). For an NHWC Conv2D the
output stage is TF's "output kernel": applied to each block of the output as
soon as the convolution has computed it, on the thread that computed it
(``conv_ops.conv2d(..., epilogue=...)``), instead of in two more passes over
the whole output on one thread. Created by
``aicslib/grappler/optimizers/remapper.py``; never written by hand.
"""
import numpy as np

from ..framework.dtypes import float32, float64
from ..framework.kernel_registry import register_kernel
from .conv_2d import conv_args_from_attrs
from .conv_ops import conv2d
from .fused_eigen_output_kernels import OutputStage, apply_output_stage, contraction

_CONV_ATTRS = ("T", "strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu")


def _fused_conv(op_type, ctx, input, filter, args):  # noqa: A002
    a = ctx.attrs
    fused_ops, node = list(a["fused_ops"]), f"{ctx.op_type} '{ctx.node_name}'"
    if op_type == "Conv2D" and a.get("data_format", "NHWC") == "NHWC" and input.ndim == 4:
        # checked and prepared once, up front; then applied to each block of the output
        stage = OutputStage(fused_ops, args, a["epsilon"], filter.shape[-1], input.dtype, node)
        s, p, d = conv_args_from_attrs(a["strides"], a["padding"], a.get("explicit_paddings", []), "NHWC",
                                       a.get("dilations", [1, 1, 1, 1]), op_type)

        def epilogue(blk):
            out = stage(blk)
            if out is not blk:                  # it worked on a copy (a block that is not contiguous)
                np.copyto(blk, out.reshape(blk.shape))
        # the same stage for C code that writes the output (Winograd's output transform applies it
        # to each tile's pixels as they are written): see conv_ops.conv2d
        epilogue.c_output_stage = stage.c_arguments
        y = conv2d(input, filter, s, p, d, epilogue=epilogue)
        return y if y.dtype == input.dtype else y.astype(input.dtype)
    y = contraction(op_type, (input, filter), {k: a[k] for k in _CONV_ATTRS if k in a})
    return apply_output_stage(y, fused_ops, args, a["epsilon"], node)


@register_kernel("_FusedConv2D", type_constraint={"T": [float32, float64]})
def _fused_conv2d(ctx, input, filter, args):  # noqa: A002
    return _fused_conv("Conv2D", ctx, input, filter, args)


@register_kernel("_FusedDepthwiseConv2dNative", type_constraint={"T": [float32, float64]})
def _fused_depthwise_conv2d(ctx, input, filter, args):  # noqa: A002
    return _fused_conv("DepthwiseConv2dNative", ctx, input, filter, args)
