"""NumPy kernels (TF's core/kernels): importing this package registers every one of them.

As TensorFlow links all its kernels into the runtime, ``import aicslib``
imports this package once; the op modules in ``aicslib/ops`` never import
kernels (they reach them only through the kernel registry), and a new device
or a new kernel is one more module listed here. These are the reference
kernels; the speed layer (``aicslib/accel``, imported after this package)
registers preferred kernels beside some of them.
"""
from . import (array_ops, colorspace_ops, conv_grad_filter_ops, conv_grad_input_ops,
               conv_ops, cwise_ops, data_flow_ops, dataset_ops, decode_image_op, depthwise_conv_op,
               io_ops, logging_ops, matmul_op, nn_ops, pooling_ops, random_ops, reduction_ops,
               resize_ops, training_ops, variable_ops)
from . import conv_ops_fused_impl, cwise_ops_fused, fused_batch_norm_op, matmul_op_fused
from . import control_flow_ops, stack_ops, summary_ops
from . import sparse_ops
from . import string_ops
from . import sample_distorted_bounding_box_op
from . import cwise_ops_complex
from . import native_matmul_op
from . import mlu_matmul_op
from . import linalg_ops
