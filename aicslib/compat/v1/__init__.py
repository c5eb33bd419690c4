"""``aics.compat.v1``: the TF1 namespace, as ``tf.compat.v1``.

TF1 programs run unchanged with ``import aicslib.compat.v1 as tf;
tf.disable_v2_behavior()``. This module defines what TF1 spelled differently
(``get_variable``/``variable_scope``, ``placeholder``, ``Session``,
``layers``, ``losses``, ``app``/``flags``, ``gfile``, ``logging``, the
``reduction_indices``/``keep_dims``/``dim`` keywords, ``nn.dropout(x,
keep_prob)``); every other name falls through to ``aicslib``'s top level, as
TF1's namespace was a superset of TF2's. A name neither has raises an
AttributeError saying it is not implemented in aicslib.
"""
import importlib as _importlib

from ...framework import tensor_shape as _tensor_shape
from ...framework.context import (disable_eager_execution, enable_eager_execution,
                                  executing_eagerly)
from ...framework.missing_api import module_getattr as _module_getattr
from ...framework.ops import GraphKeys as _GraphKeysV2
from ...framework import session as _session
from ...framework.session import InteractiveSession, Session, get_default_session
from ...framework.tensor_shape import Dimension, dimension_value
from ...framework.tensor_shape import disable_v2_tensorshape, enable_v2_tensorshape
from ...ops.array_ops import placeholder, placeholder_with_default
from ...ops.random_ops import (get_seed, random_normal, random_uniform, set_random_seed,
                               truncated_normal)
from ...ops.variable_scope import (AUTO_REUSE, VariableScope, get_variable,
                                   get_variable_scope, no_regularizer, variable_scope)
from ...ops.variables import (Variable, global_variables, global_variables_initializer,
                              local_variables, local_variables_initializer, trainable_variables,
                              variables_initializer)
from ...version import VERSION as __version__
from .signatures import arg_max, arg_min
from .signatures import (argmax, argmin, count_nonzero, div, expand_dims, norm,
                         reduce_all, reduce_any, reduce_logsumexp, reduce_max, reduce_mean,
                         reduce_min, reduce_prod, reduce_sum, squeeze, to_double, to_float,
                         to_int32, to_int64)
from . import app, flags, gfile, layers, logging, losses, math, metrics, nn, train

try:
    image = _importlib.import_module(".image", __name__)
except ModuleNotFoundError as _e:  # written by the preprocessing chapter
    if _e.name != __name__ + ".image":
        raise


class GraphKeys(_GraphKeysV2):
    """Standard collection names (TF1's ``tf.GraphKeys``)."""
    REGULARIZATION_LOSSES = "regularization_losses"
    TRAIN_OP = "train_op"
    MODEL_VARIABLES = "model_variables"
    ACTIVATIONS = "activations"


class GPUOptions:
    """Accepted for compatibility (``allow_growth``, ...); aicslib runs on the CPU."""

    def __init__(self, allow_growth=False, per_process_gpu_memory_fraction=0.0, visible_device_list="",
                 **unused):
        self.allow_growth = allow_growth
        self.per_process_gpu_memory_fraction = per_process_gpu_memory_fraction
        self.visible_device_list = visible_device_list


class ConfigProto(_session.ConfigProto):
    """Session options; ``gpu_options`` and ``graph_options`` are accepted and kept."""

    def __init__(self, allow_soft_placement=True, log_device_placement=False, device_count=None,
                 inter_op_parallelism_threads=0, intra_op_parallelism_threads=0, gpu_options=None,
                 graph_options=None, **unused):
        super().__init__(allow_soft_placement, log_device_placement, device_count,
                         inter_op_parallelism_threads, intra_op_parallelism_threads, graph_options)
        self.gpu_options = gpu_options if gpu_options is not None else GPUOptions()


def disable_v2_behavior():
    """TF1 behaviour: graphs and Sessions instead of eager execution, ``shape[i].value``."""
    disable_eager_execution()
    disable_v2_tensorshape()


def enable_v2_behavior():
    """TF2 behaviour: eager execution, ``shape[i]`` is an int."""
    enable_eager_execution()
    enable_v2_tensorshape()


def resource_variables_enabled():
    return True  # every aicslib variable is a resource variable


def enable_resource_variables():
    pass


def disable_resource_variables():
    raise NotImplementedError("aicslib has only resource variables (TF2's kind); "
                              "disable_resource_variables is not implemented in aicslib.")


def initialize_all_variables():
    """Deprecated TF1 name of ``global_variables_initializer``."""
    return global_variables_initializer()


def initialize_variables(var_list, name="init"):
    return variables_initializer(var_list, name=name)


def initialize_local_variables():
    return local_variables_initializer()


all_variables = global_variables


def _summary_v1():
    """``summary`` comes from the TensorBoard chapter's ``aicslib.summary.v1`` when present."""
    try:
        return _importlib.import_module("aicslib.summary.v1")
    except ModuleNotFoundError as e:
        if e.name not in ("aicslib.summary", "aicslib.summary.v1"):
            raise
        raise AttributeError("module 'aicslib.compat.v1' has no attribute 'summary': "
                             "tf.compat.v1.summary is not implemented in aicslib yet "
                             "(aicslib.summary.v1 is missing)") from None


def _lazy(name):
    """Namespaces loaded on first use (``data``), then aicslib's top level."""
    if name == "data":
        return _importlib.import_module(".data", __name__)
    import aicslib
    return getattr(aicslib, name)


_fallthrough = _module_getattr(__name__, _lazy)


def __getattr__(name):
    if name == "summary":
        return _summary_v1()
    return _fallthrough(name)


def __dir__():
    import aicslib
    return sorted(set(globals()) | {n for n in dir(aicslib) if not n.startswith("_")} | {"summary", "data"})
