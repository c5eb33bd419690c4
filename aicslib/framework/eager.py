"""Eager tensors and the record of an eagerly executed op.

An EagerTensor holds its value (a NumPy array) and its dtype. An
EagerOperation is what the gradient tape remembers of one executed op; it
looks like a graph Operation to a gradient function (``op.inputs``,
``op.outputs``, ``op.get_attr``), which is why one gradient function serves
both modes.
"""
import numpy as np

from . import dtypes
from .tensor_operators import TensorOperators
from .tensor_shape import TensorShape


def array_of_numpy_value(a, dtype=None):
    """What ``__array__`` gives for a ``.numpy()`` value ``a`` (an EagerTensor's or a Variable's):
    always an array, as the protocol requires. A string scalar (bytes) becomes a 0-d object array,
    which keeps every byte; a NumPy scalar a 0-d array."""
    if isinstance(a, bytes):
        a = np.array(a, dtype=object)
    elif not isinstance(a, np.ndarray):
        a = np.asarray(a)
    return a if dtype is None else a.astype(dtype)


class EagerTensor(TensorOperators):
    """A tensor with a concrete value, produced when executing eagerly.

    ``array`` is the value as stored (a NumPy array, shared with whoever made it:
    read it, never write to it), ``dtype`` its DType, ``device`` where it lives.
    They are plain attributes rather than properties because the op dispatcher
    reads them for every input of every op.
    """

    __slots__ = ("array", "dtype", "device", "_shape", "__weakref__")

    def __init__(self, array, dtype, device="/device:CPU:0"):
        self.array = array
        self.dtype = dtype
        self.device = device

    def numpy(self):
        """The value as a NumPy array (a read-only view shares memory, as in TF)."""
        a = self.array
        if type(a) is np.ndarray:
            # a scalar is a NumPy scalar (np.float32(1.0)), a string one bytes, as in TF
            return a[()] if a.ndim == 0 else a
        return np.asarray(a, dtype=self.dtype.as_numpy_dtype) if self.dtype.as_numpy_dtype is not object else a

    @property
    def shape(self):
        try:
            return self._shape
        except AttributeError:  # first use: the value never changes, so neither does its shape
            self._shape = TensorShape.from_known_dims(np.shape(self.array))
            return self._shape

    def get_shape(self):
        return self.shape

    @property
    def ndim(self):
        return np.ndim(self.array)

    @property
    def name(self):
        raise AttributeError("Tensor.name is meaningless when eager execution is enabled.")

    @property
    def op(self):
        raise AttributeError("Tensor.op is meaningless when eager execution is enabled.")

    @property
    def graph(self):
        raise AttributeError("Tensor.graph is meaningless when eager execution is enabled.")

    def eval(self, feed_dict=None, session=None):
        raise NotImplementedError("eval is not supported when eager execution is enabled, "
                                  "is .numpy() what you're looking for?")

    def __array__(self, dtype=None, copy=None):
        return array_of_numpy_value(self.numpy(), dtype)

    def __repr__(self):
        if self.dtype in (dtypes.resource, dtypes.variant):
            return f"<aics.Tensor: shape=(), dtype={self.dtype.name}, value={self.array!r}>"
        return (f"<aics.Tensor: shape={self.shape}, dtype={self.dtype.name}, "
                f"numpy={np.array_repr(np.asarray(self.array))}>")

    def __str__(self):
        return f"aics.Tensor({np.asarray(self.array)}, shape={self.shape}, dtype={self.dtype.name})"

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return len(self.array)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(len(self.array)):
            yield self[i]

    def __bool__(self):
        return bool(self.array)

    def __float__(self):
        return float(self.array)

    def __int__(self):
        return int(self.array)

    def __index__(self):
        if not self.dtype.is_integer:
            raise TypeError(f"Only integer tensors can be used as an index, not {self.dtype.name}.")
        return int(self.array)

    def __format__(self, spec):
        return format(self.numpy(), spec) if self.ndim == 0 else str(self)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class EagerOperation:
    """What the tape records of an eager op: enough to call its gradient function."""

    __slots__ = ("type", "inputs", "outputs", "_attrs", "_input_lengths", "_gradient_type",
                 "skip_input_indices")

    graph = None
    device = "/device:CPU:0"

    def __init__(self, op_type, inputs, outputs, attrs, input_lengths=None, gradient_type=None):
        self.type = op_type
        self.inputs = inputs
        self.outputs = outputs
        self._attrs = attrs
        self._input_lengths = input_lengths
        self._gradient_type = gradient_type
        # Set by GradientTape.gradient: inputs whose gradient nobody needs (as TF's
        # skip_input_indices), so a gradient function may skip computing them.
        self.skip_input_indices = None

    @property
    def name(self):
        return self.type

    @property
    def gradient_type(self):
        """The gradient to look up instead of the op type's (a custom_gradient call's), else None."""
        return self._gradient_type

    def get_attr(self, name):
        if name not in self._attrs:
            raise ValueError(f"Operation '{self.type}' has no attr named '{name}'.")
        return self._attrs[name]

    def __repr__(self):
        return f"<EagerOperation {self.type}>"
