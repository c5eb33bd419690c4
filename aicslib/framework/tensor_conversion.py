"""Turning values into tensors: ``convert_to_tensor`` and the registry of conversion functions
(TF's tensor_conversion_registry), through which Variables and other tensor-like types
plug in without the framework knowing them."""

from . import context, dtypes
from .constant_op import constant
from .default_graph import get_default_graph
from .eager import EagerTensor
from .graph import Tensor
from .tensor_util import default_dtype_for, to_numpy


_conversion_functions = []  # (type, fn(value, dtype, name) -> Tensor or EagerTensor)
_conversion_by_type = {}    # exact type -> its function or None, filled on first use


def register_tensor_conversion_function(base_type, conversion_func):
    """Lets ``convert_to_tensor`` (and so every op) accept ``base_type`` values, as TF's."""
    _conversion_functions.append((base_type, conversion_func))
    _conversion_by_type.clear()


def conversion_function_for(value_type):
    """The registered conversion function for values of ``value_type``, or None."""
    try:
        return _conversion_by_type[value_type]
    except KeyError:
        fn = next((f for base, f in _conversion_functions if issubclass(value_type, base)), None)
        _conversion_by_type[value_type] = fn
        return fn


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None):
    """Turns a Python value, array, EagerTensor or Variable into a tensor for the
    current mode: an EagerTensor when executing eagerly, else a graph Tensor."""
    if type(value) is EagerTensor and dtype is None and context.executing_eagerly():
        return value  # the common case inside op wrappers, kept cheap
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    eager = context.executing_eagerly()
    if isinstance(value, Tensor):
        if eager:
            raise TypeError(f"Graph tensor '{value.name}' cannot be used in eager mode; "
                            f"run it in a Session or build the whole computation in the graph.")
        g = get_default_graph()
        if value.graph is not g:
            if hasattr(g, "capture_tensor"):
                value = g.capture_tensor(value)
            else:
                raise ValueError(f"Tensor '{value.name}' must be from the same graph as the "
                                 f"ops being created.")
        if dtype is not None and value.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor "
                             f"'{value.name}' with dtype {value.dtype.name}.")
        return value
    if isinstance(value, EagerTensor):
        if dtype is not None and value.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for an eager "
                             f"tensor with dtype {value.dtype.name}.")
        if eager:
            return value
        g = get_default_graph()
        if hasattr(g, "capture"):
            return g.capture(value)
        return constant(value.array, dtype=value.dtype, name=name)
    fn = conversion_function_for(type(value))
    if fn is not None:
        return fn(value, dtype, name)
    if dtype is None:
        dtype = preferred_dtype if preferred_dtype is not None and _fits(value, preferred_dtype) \
            else default_dtype_for(value)
    if eager:
        return EagerTensor(to_numpy(value, dtype), dtype)
    return constant(value, dtype=dtype, name=name)


def _fits(value, dtype):
    try:
        to_numpy(value, dtypes.as_dtype(dtype))
        return True
    except (TypeError, ValueError):
        return False


def is_tensor(x):
    return isinstance(x, (Tensor, EagerTensor))
