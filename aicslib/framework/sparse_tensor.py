"""SparseTensor (TF's python/framework/sparse_tensor.py): COO storage of a tensor.

Three dense tensors describe it: ``indices`` (int64, ``[N, rank]``: the
coordinates of the N stored entries), ``values`` (``[N]``) and ``dense_shape``
(int64, ``[rank]``). Every coordinate not listed is zero. Many sparse ops
require the indices in *canonical* row-major order without repeats;
``aics.sparse.reorder`` produces that order.

As in TensorFlow the constructor only checks what is known statically (ranks
and matching sizes, ``ValueError``); bounds, order and repeats are checked by
the ops that need them (``InvalidArgumentError``).
"""
import numpy as np

from . import dtypes
from .eager import EagerTensor
from .ops import Tensor, constant_value, convert_to_tensor, name_scope
from .tensor_shape import TensorShape, dimension_value


def _with_rank(shape, rank):
    if shape.rank is not None and shape.rank != rank:
        raise ValueError(f"Shape {shape} must have rank {rank}")
    return shape if shape.rank is not None else TensorShape([None] * rank)


def _assert_compatible(a, b):
    a, b = dimension_value(a), dimension_value(b)
    if a is not None and b is not None and int(a) != int(b):
        raise ValueError(f"Dimensions {int(a)} and {int(b)} are not compatible")


def _as_int64(value, name):
    """Python lists and NumPy integer arrays become int64, as TF's convert with dtype=int64."""
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value)
        if arr.size == 0:
            arr = arr.astype(np.int64)
        if arr.dtype.kind in "iu":
            value = arr.astype(np.int64)
    return convert_to_tensor(value, dtype=dtypes.int64, name=name)


class SparseTensor:
    """A sparse tensor: ``SparseTensor(indices, values, dense_shape)``.

    ``aics.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1., 2.], dense_shape=[3, 4])``
    is the 3x4 matrix with a 1 at (0, 0), a 2 at (1, 2) and zeros elsewhere.
    """

    def __init__(self, indices, values, dense_shape):
        with name_scope(None, "SparseTensor"):
            indices = _as_int64(indices, "indices")
            values = convert_to_tensor(values, name="values")
            dense_shape = _as_int64(dense_shape, "dense_shape")
        self._indices, self._values, self._dense_shape = indices, values, dense_shape
        indices_shape = _with_rank(indices.shape, 2)
        values_shape = _with_rank(values.shape, 1)
        dense_shape_shape = _with_rank(dense_shape.shape, 1)
        # one value per index row; one dense_shape entry per index column
        _assert_compatible(indices_shape[0], values_shape[0])
        _assert_compatible(indices_shape[1], dense_shape_shape[0])

    @classmethod
    def from_value(cls, value):
        if isinstance(value, SparseTensor):
            return value
        raise TypeError(f"Expected a SparseTensor, got {type(value).__name__}")

    @property
    def indices(self):
        return self._indices

    @property
    def values(self):
        return self._values

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def shape(self):
        """The static dense shape (known dims where ``dense_shape`` is known)."""
        shape = self._dense_shape
        known = shape.array if isinstance(shape, EagerTensor) else \
            constant_value(shape) if isinstance(shape, Tensor) else None
        if known is not None:
            return TensorShape([int(d) for d in np.asarray(known).reshape(-1)])
        rank = dimension_value(self._dense_shape.shape[0]) if self._dense_shape.shape.rank == 1 else None
        return TensorShape(None if rank is None else [None] * int(rank))

    def get_shape(self):
        return self.shape

    @property
    def graph(self):
        return getattr(self._indices, "graph", None)

    def __repr__(self):
        return (f"SparseTensor(indices={self._indices!r}, values={self._values!r}, "
                f"dense_shape={self._dense_shape!r})")
