"""aicslib: a pocket TensorFlow in NumPy, for the AICS course workbook.

``import aicslib as aics``. Eager execution is on by default (TF2); ops built
inside ``with aics.Graph().as_default():`` are symbolic and run in a Session.
The source tree mirrors TensorFlow's: ``framework/`` (graphs, sessions,
registries), ``ops/`` (op definitions, Python API, gradients), ``kernels/``
(NumPy kernels), ``train/``, ``keras/``.
"""
from . import flags
from .framework import dtypes, errors
from .framework.dtypes import (DType, as_dtype, bfloat16, bool, double, float16, float32,
                               float64, half, int8, int16, int32, int64, resource, string, uint8)
from .framework.dtypes import float8_e4m3fn, float8_e5m2  # 8-bit floats (ml_dtypes storage)
from .framework.context import disable_eager_execution, enable_eager_execution, executing_eagerly
from .framework.op_def import register_op, op_def_registry
from .framework.kernel_registry import register_kernel, kernel_registry
from .framework.gradient_registry import RegisterGradient, NotDifferentiable, no_gradient, gradient_registry
from .framework.ops import (Graph, Operation, Tensor, add_to_collection, control_dependencies,
                            convert_to_tensor, device, get_collection, get_default_graph, is_tensor,
                            name_scope, reset_default_graph)
from .framework.eager import EagerTensor
from .framework.device import DeviceSpec  # tf.DeviceSpec
from .framework.tensor_shape import TensorShape
from .framework.graph_options import GraphOptions, OptimizerOptions, RewriterConfig
from .framework.session import (InteractiveSession, RunMetadata, RunOptions, Session,
                                get_default_session)
from .framework.raw_ops import raw_ops
from .eager.backprop import GradientTape, custom_gradient
from .eager.def_function import function
from .framework.init_scope import init_scope
from .framework.graph_io import import_graph_def

# Op definitions with their Python API, then kernels and gradients (registration order
# does not matter: lookups happen when ops run).
from .ops import array_ops, math_ops, random_ops, resource_variable_ops, logging_ops
from .ops.array_ops import (broadcast_to, concat, constant, expand_dims, fill, gather, group, identity,
                            identity_n, newaxis, no_op, one_hot, ones, ones_like, pad, placeholder,
                            placeholder_with_default, rank, reshape, shape, size, slice, split, squeeze,
                            stack, stop_gradient, tile, transpose, unstack, unsorted_segment_sum,
                            zeros, zeros_like)
from .ops.array_ops import range
from .ops.array_ops import eye
from .ops.unconnected_gradients import UnconnectedGradients
from .ops.where_ops import boolean_mask
from .ops.math_ops import (abs, add, add_n, argmax, argmin, cast, clip_by_value, cos, divide, equal,
                           exp, floordiv, floormod, greater, greater_equal, is_finite, less, less_equal,
                           log, log1p, logical_and, logical_not, logical_or, matmul, maximum, minimum,
                           multiply, negative, not_equal, pow, realdiv, reciprocal, reduce_max,
                           reduce_mean, reduce_min, reduce_prod, reduce_sum, rsqrt, sigmoid, sign, sin,
                           sqrt, square, squared_difference, subtract, tan, tanh, truediv, where)
from .ops.random_ops import (random_normal, random_shuffle, random_uniform, set_random_seed,
                             truncated_normal)
from .ops.logging_ops import Print, print
from .ops.variables import (Variable, assign, assign_add, assign_sub, global_variables,
                            global_variables_initializer, is_variable_initialized, local_variables,
                            report_uninitialized_variables, trainable_variables, variables_initializer)
from .ops.gradients_impl import gradients
from .ops.control_flow_ops import case, cond, while_loop
from .ops.data_flow_ops import FIFOQueue, QueueBase, RandomShuffleQueue  # TF1 keeps queues top-level
from .ops.init_ops import (constant_initializer, glorot_normal_initializer,  # tf.*_initializer (TF1)
                           glorot_uniform_initializer, ones_initializer, orthogonal_initializer,
                           random_normal_initializer, random_uniform_initializer,
                           truncated_normal_initializer, variance_scaling_initializer, zeros_initializer)
from .ops import linalg_ops as _linalg_ops  # Qr
from .ops import batch_norm_ops, fused_ops  # FusedBatchNormV3; grappler's _Fused* ops
from . import kernels  # registers every kernel
from . import accel  # the speed layer: preferred kernels, AICS_ACCEL
from . import grappler  # aics.grappler.optimize; Session runs its passes
from .ops import array_grad as _g_array, math_grad as _g_math
from .ops import control_flow_grad as _g_control_flow
from .ops import complex_grad as _g_complex

from . import random  # aics.random.set_seed, as TF2
from . import introspect, test
from . import config, initializers, math, optimizers  # TF2 namespaces
from . import experimental  # use_planner, use_gradients: the seams
from .math import linspace
from . import linalg  # tf.linalg.matmul ...: TF2 guides
from .linalg import norm
from .math import floor, reduce_all, reduce_any, reduce_logsumexp, round
from .framework.dtypes import complex64, complex128
from .ops.complex_ops import complex
from .module import Module

from . import version  # tf.version.VERSION

from . import compat
# TF 1.15 had the TF1 API at the top level: a TF1 program that uses only those names runs with
# `import aicslib as tf` too. Names whose TF1 signature differs from TF2's (reduce_sum's
# keep_dims, nn.dropout's keep_prob) keep TF2's here; compat.v1 has the TF1 ones. tf.flags is
# compat.v1's only: aicslib.flags is the library's own switches (AICS_CONV_ALGO, log levels).
# ConfigProto and GraphKeys are compat.v1's: TF 1.15's top-level classes, with the TF1 fields.
from .compat.v1 import (AUTO_REUSE, ConfigProto, Dimension, GPUOptions, GraphKeys,
                        VariableScope, all_variables, app, arg_max, arg_min, dimension_value,
                        disable_resource_variables, disable_v2_behavior, disable_v2_tensorshape,
                        enable_resource_variables, enable_v2_behavior, enable_v2_tensorshape,
                        get_seed, get_variable, get_variable_scope, gfile, initialize_all_variables,
                        initialize_local_variables, initialize_variables, layers,
                        local_variables_initializer, no_regularizer, resource_variables_enabled, to_double,
                        to_float, to_int32, to_int64, variable_scope)
from .compat.v1 import logging  # tf.logging.set_verbosity, TF 1.15
from .compat.v1.logging import get_logger  # tf.get_logger: the 'tensorflow' logger
from . import sparse, sparsity  # aics.sparse: SparseTensor; sparse training
from . import strings  # aics.strings: string tensors, as tf.strings
from . import autograph, summary  # aics.autograph; aics.summary: TensorBoard
from .data.util.structure import TensorSpec  # tf.TensorSpec: input_signature
from . import data, datasets, image, io, keras, mixed_precision, nn, train
# TF2's tf.losses and tf.metrics are the Keras ones (TF 1.15's, with other signatures, are
# compat.v1's: aics.compat.v1.losses, aics.compat.v1.metrics).
from .keras import losses, metrics
from . import models  # aics.models: VGG19 and style transfer, chapter 3

from .framework.missing_api import module_getattr as _module_getattr, unsupported_namespace as _unsupported

__version__ = version.VERSION

# Out of scope on purpose: a program reaching these stops with a NotImplementedError naming the API.
ragged = _unsupported("tf.ragged", "aicslib has no ragged tensors; pad the rows to one length "
                      "(tf.keras.preprocessing.sequence.pad_sequences) or use a tf.sparse.SparseTensor")
RaggedTensor = _unsupported("tf.RaggedTensor", "aicslib has no ragged tensors; pad the rows to one "
                            "length (tf.keras.preprocessing.sequence.pad_sequences)")
saved_model = _unsupported("tf.saved_model", "aicslib has no SavedModel format; save the variables "
                           "with tf.train.Checkpoint (or tf.compat.v1.train.Saver) and rebuild the "
                           "model in Python, or write the graph with tf.io.write_graph")
profiler = _unsupported("tf.profiler", "aicslib has no profiler; time a Session step with "
                        "RunOptions(trace_level=FULL_TRACE) and aicslib.client.timeline, or time "
                        "eager code with time.perf_counter")
__getattr__ = _module_getattr(__name__)  # a name aicslib lacks: "not implemented in aicslib"
