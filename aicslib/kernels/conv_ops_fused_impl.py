"""``_FusedConv2D`` and ``_FusedDepthwiseConv2dNative`` CPU kernels (TF's ``conv_ops_fused_impl.h``).

The convolution is the registered ``Conv2D`` / ``DepthwiseConv2dNative``
kernel itself; the bias or batch norm and the activation are applied to its
output in place (``fused_eigen_output_kernels.py``). Created by
``aicslib/grappler/optimizers/remapper.py``; never written by hand. (The speed
layer's versions, ``aicslib/accel/fused_output_stage.py``, apply the stage to
each block of the output as soon as the convolution has computed it.)
"""
from ..framework.dtypes import float32, float64
from ..framework.kernel_registry import register_kernel
from .fused_eigen_output_kernels import apply_output_stage, contraction

#: The attrs of a fused conv that its unfused convolution takes.
CONV_ATTRS = ("T", "strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu")


def fused_conv(op_type, ctx, input, filter, args, output_stage=apply_output_stage):
    """``op_type``'s registered kernel on ``(input, filter)``, then the fused ``output_stage``
    (``apply_output_stage``'s arguments)."""
    a = ctx.attrs
    y = contraction(op_type, (input, filter), {k: a[k] for k in CONV_ATTRS if k in a})
    return output_stage(y, list(a["fused_ops"]), args, a["epsilon"], f"{ctx.op_type} '{ctx.node_name}'")


@register_kernel("_FusedConv2D", type_constraint={"T": [float32, float64]})
def _fused_conv2d(ctx, input, filter, args):
    return fused_conv("Conv2D", ctx, input, filter, args)


@register_kernel("_FusedDepthwiseConv2dNative", type_constraint={"T": [float32, float64]})
def _fused_depthwise_conv2d(ctx, input, filter, args):
    return fused_conv("DepthwiseConv2dNative", ctx, input, filter, args)
