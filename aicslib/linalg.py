"""``aics.linalg``: the TF2 namespace for linear algebra (``tf.linalg``), the parts aicslib has."""
from .ops.array_ops import eye, transpose as _transpose
from .ops.math_ops import matmul
from .framework.missing_api import module_getattr

from .ops.linalg_ops import qr

__all__ = ["eye", "matmul", "matvec", "matrix_transpose", "norm", "qr"]


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Swaps the last two axes."""
    rank = a.shape.rank if hasattr(a, "shape") and hasattr(a.shape, "rank") else len(getattr(a, "shape", ()))
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return _transpose(a, perm, name=name)


def matvec(a, b, transpose_a=False, name=None):
    """``a @ b`` for a matrix ``a`` and a vector ``b`` (batched over leading axes)."""
    from .ops import array_ops
    return array_ops.squeeze(matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a), [-1])


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """A vector norm, or a matrix norm over two axes (``tf.norm`` / ``tf.linalg.norm``).

    ``axis=None`` treats the whole tensor as one vector; an int is a vector norm
    along that axis; a pair of ints a matrix norm over those axes. ``ord``:
    ``'euclidean'`` (the default: the 2-norm of a vector, Frobenius for a matrix),
    ``'fro'``, ``1``, ``numpy.inf`` and, for vectors, any ``p > 0``. The matrix
    2-norm (the largest singular value) needs an SVD, which aicslib does not have.
    """
    import numpy as np
    from .framework.ops import convert_to_tensor, name_scope
    from .ops import math_ops
    keepdims = bool(keepdims)
    is_matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if isinstance(axis, (list, tuple)) and not is_matrix:
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
    supported = ("euclidean", "fro", 1, np.inf) if is_matrix else ("euclidean", 1, np.inf)
    if not (ord in supported or (not is_matrix and not isinstance(ord, str) and ord > 0)):
        if is_matrix and ord == 2:
            raise NotImplementedError("norm(ord=2) of a matrix (the largest singular value) is not "
                                      "implemented in aicslib: it has no SVD.")
        raise ValueError(f"'ord' must be a supported {'matrix' if is_matrix else 'vector'} norm, "
                         f"got {ord}")
    if ord == "fro" and not is_matrix and axis is not None:
        raise ValueError("'fro' is a matrix norm: give a pair of axes")
    with name_scope(name, "norm"):
        x = convert_to_tensor(tensor)
        if ord in ("euclidean", "fro"):
            return math_ops.sqrt(math_ops.reduce_sum(x * x, axis=axis, keepdims=keepdims))
        a = math_ops.abs(x)
        if is_matrix:
            rank = x.shape.rank
            rows, cols = [d + rank if d < 0 else d for d in axis]
            sum_axis, max_axis = (rows, cols) if ord == 1 else (cols, rows)
            summed = math_ops.reduce_sum(a, axis=sum_axis, keepdims=keepdims)
            if not keepdims and max_axis > sum_axis:
                max_axis -= 1
            return math_ops.reduce_max(summed, axis=max_axis, keepdims=keepdims)
        if ord == 1:
            return math_ops.reduce_sum(a, axis=axis, keepdims=keepdims)
        if ord == np.inf:
            return math_ops.reduce_max(a, axis=axis, keepdims=keepdims)
        p = np.asarray(ord, x.dtype.as_numpy_dtype)
        return math_ops.pow(math_ops.reduce_sum(math_ops.pow(a, p), axis=axis, keepdims=keepdims), 1 / p)


__getattr__ = module_getattr(__name__)
