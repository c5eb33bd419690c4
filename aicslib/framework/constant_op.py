"""``constant``: a tensor with a fixed value (TF's python/framework/constant_op.py).

Eagerly it is an EagerTensor holding a private copy of the value; in a graph,
a ``Const`` node holding it read-only. The Const op itself is registered with
the other array ops (``aicslib/ops/array_ops.py``); the framework finds it by
name in the op registry, as it finds every op.
"""
import numpy as np

from . import context, dtypes
from .default_graph import get_default_graph
from .eager import EagerTensor
from .op_def import op_def_registry, validate_attr_value
from .tensor_shape import as_shape
from .tensor_util import default_dtype_for, to_numpy


def constant(value, dtype=None, shape=None, name="Const"):
    """A tensor with a fixed value. ``shape`` broadcasts a scalar or reshapes a value."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    dt = dtype or default_dtype_for(value)
    arr = to_numpy(value, dt, what="constant value")
    if shape is not None:
        shape = as_shape(shape).as_list()
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape)
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(f"Eager execution of aics.constant with unsupported shape: value has "
                            f"{arr.size} elements, shape is {shape} with {int(np.prod(shape))} elements.")
        arr = np.array(arr)
    arr = np.array(arr)  # a private copy: later changes to `value` must not reach the tensor
    if context.executing_eagerly():
        return EagerTensor(arr, dt)
    arr.flags.writeable = False
    return _const_node(arr, dt, name)


def _const_node(arr, dtype, name):
    op_def = op_def_registry.lookup("Const")
    attrs = {"value": arr, "dtype": validate_attr_value(op_def.get_attr_def("dtype"), dtype, "Const")}
    op = get_default_graph().create_op(op_def, [], [], attrs, [dtype], name=name)
    return op.outputs[0]
