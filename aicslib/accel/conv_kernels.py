"""The speed layer's Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter kernels.

The same registrations as ``aicslib/kernels/conv_ops.py`` and the two
``conv_grad_*_ops.py`` (TF's ``REGISTER_KERNEL_BUILDER`` in conv_ops.cc and
conv_grad_*_ops.cc), at the speed layer's priority: TF's attrs in, the layout
turned to NHWC, the speed layer's algorithms (``conv_forward``,
``conv_backprop_input``, ``conv_backprop_filter``) run, the layout turned back.
"""
from ..framework.dtypes import bfloat16, float16, float32, float64
from ..kernels.conv_2d import run_backprop_filter, run_backprop_input, run_forward
from .conv_backprop_filter import conv2d_backprop_filter
from .conv_backprop_input import conv2d_backprop_input
from .conv_forward import conv2d
from .registration import register_fast_kernel

FLOAT = {"T": [float16, bfloat16, float32, float64]}


@register_fast_kernel("Conv2D", FLOAT)
def conv2d_kernel(input, filter, strides, padding, explicit_paddings, data_format, dilations):
    return run_forward(conv2d, "Conv2D", input, filter, strides, padding, explicit_paddings, data_format,
                       dilations)


@register_fast_kernel("Conv2DBackpropInput", FLOAT)
def conv2d_backprop_input_kernel(input_sizes, filter, out_backprop, strides, padding,
                                 explicit_paddings, data_format, dilations):
    return run_backprop_input(conv2d_backprop_input, "Conv2DBackpropInput", input_sizes, filter, out_backprop,
                              strides, padding, explicit_paddings, data_format, dilations)


@register_fast_kernel("Conv2DBackpropFilter", FLOAT)
def conv2d_backprop_filter_kernel(input, filter_sizes, out_backprop, strides, padding,
                                  explicit_paddings, data_format, dilations):
    return run_backprop_filter(conv2d_backprop_filter, "Conv2DBackpropFilter", input, filter_sizes,
                               out_backprop, strides, padding, explicit_paddings, data_format, dilations)
