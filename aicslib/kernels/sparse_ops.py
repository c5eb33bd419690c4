"""Sparse kernels (TF's core/kernels/sparse_to_dense_op.cc, sparse_reorder_op.cc,
sparse_tensor_dense_matmul_op.cc) and the CSR format's conversion and product.

A ``SparseTensor`` is COO (coordinate) storage: ``indices`` (N x rank, int64),
``values`` (N) and ``dense_shape``. For a product the kernel converts it to
CSR (compressed sparse row): ``row_ptr`` (rows + 1 offsets), ``col_ind`` and
``values`` sorted by row; row ``r`` owns the entries ``row_ptr[r]:row_ptr[r+1]``.
Then ``A @ B`` is, for every stored entry, its value times one row of B, summed
per row: one gather of B's rows, one multiply, one segmented sum
(``np.add.reduceat``). Work is proportional to ``nnz * n`` instead of
``m * k * n``: the product beats dense GEMM only when A is very sparse, since
BLAS GEMM runs near the machine's peak and the gather does not.

The validation errors are TensorFlow's, word for word.
"""
import numpy as np

from ..framework import dtypes
from ..framework.dtypes import bfloat16, float16, float32, float64, int32, int64
from ..framework.allocator import check_allocation
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel
from ..framework.tensor_shape import shape_debug_string

_VALUE_TYPES = [float16, bfloat16, float32, float64, int32, int64]
_BLOCK_BYTES = 1 << 19


def _index_text(index_row):
    return "[" + ",".join(str(int(i)) for i in index_row) + "]"


def validate_sparse_indices(indices, shape):
    """TF's SparseTensor::IndicesValid: every index in bounds, in row-major order, unique."""
    indices = np.asarray(indices)
    shape = np.asarray(shape)
    if indices.shape[0] == 0:
        return
    bad = np.flatnonzero(np.any((indices < 0) | (indices >= shape), axis=1))
    first_bad = bad[0] if bad.size else indices.shape[0]
    # Compare consecutive rows lexicographically: the first differing column decides.
    diff = indices[1:] - indices[:-1]
    nonzero = diff != 0
    has_diff = nonzero.any(axis=1)
    first_col = np.argmax(nonzero, axis=1)
    sign = diff[np.arange(diff.shape[0]), first_col]
    out_of_order = np.flatnonzero(has_diff & (sign < 0)) + 1
    repeated = np.flatnonzero(~has_diff) + 1
    candidates = [(first_bad, 0)]
    if out_of_order.size:
        candidates.append((out_of_order[0], 1))
    if repeated.size:
        candidates.append((repeated[0], 2))
    n, kind = min(candidates)      # TF reports the first failing row, checked in that order
    if n >= indices.shape[0]:
        return
    where = f"indices[{n}] = {_index_text(indices[n])}"
    if kind == 0:
        raise InvalidArgumentError(None, None, f"{where} is out of bounds: need 0 <= index < "
                                   f"{shape_debug_string(shape)}")
    if kind == 1:
        raise InvalidArgumentError(None, None, f"{where} is out of order. Many sparse ops require "
                                   "sorted indices.\n    Use `tf.sparse.reorder` to create a "
                                   "correctly ordered copy.\n\n")
    raise InvalidArgumentError(None, None, f"{where} is repeated")


@register_kernel("SparseToDense", type_constraint={"T": _VALUE_TYPES + [dtypes.bool],
                                                   "Tindices": [int32, int64]})
def _sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value,
                     validate_indices=True):
    indices = np.asarray(sparse_indices, np.int64)
    shape = np.asarray(output_shape, np.int64).reshape(-1)
    if indices.ndim > 2:
        raise InvalidArgumentError(None, None, "sparse_indices should be a scalar, vector, or "
                                   f"matrix, got shape {list(indices.shape)}")
    if indices.ndim < 2:
        indices = indices.reshape(-1, 1) if shape.size == 1 else indices.reshape(1, -1)
    num_elems, num_dims = indices.shape
    if np.ndim(sparse_values) not in (0, 1) or (
            np.ndim(sparse_values) == 1 and np.size(sparse_values) != num_elems):
        raise InvalidArgumentError(None, None, "sparse_values has incorrect shape "
                                   f"{list(np.shape(sparse_values))}, should be [] or "
                                   f"[{num_elems}]")
    if np.ndim(default_value) != 0:
        raise InvalidArgumentError(None, None, "default_value should be a scalar.")
    if shape.size != num_dims:
        raise InvalidArgumentError(None, None, f"output_shape has incorrect number of elements: "
                                   f"{shape.size} should be: {num_dims}")
    if validate_indices:
        validate_sparse_indices(indices, shape)
    elif num_elems and np.any((indices < 0) | (indices >= shape)):
        raise InvalidArgumentError(None, None, "Indices are not valid (out of bounds).  Shape: "
                                   f"{shape_debug_string(shape)}")
    values = np.asarray(sparse_values)
    check_allocation(shape, values.dtype)
    out = np.full(tuple(int(d) for d in shape), default_value, dtype=values.dtype)
    if num_elems:
        out[tuple(indices.T)] = values
    return out


@register_kernel("SparseReorder", type_constraint={"T": _VALUE_TYPES + [dtypes.bool]})
def _sparse_reorder(input_indices, input_values, input_shape):
    indices = np.asarray(input_indices, np.int64)
    if indices.ndim != 2:
        raise InvalidArgumentError(None, None, "Input indices should be a matrix but received "
                                   f"shape {list(indices.shape)}")
    if np.ndim(input_values) != 1:
        raise InvalidArgumentError(None, None, "Input values should be a vector but received "
                                   f"shape {list(np.shape(input_values))}")
    if np.ndim(input_shape) != 1:
        raise InvalidArgumentError(None, None, "Input shape should be a vector but received "
                                   f"shape {list(np.shape(input_shape))}")
    # np.lexsort sorts by its last key first: reverse the columns for row-major order.
    order = np.lexsort(indices.T[::-1]) if indices.shape[0] else np.zeros(0, np.int64)
    return indices[order], np.asarray(input_values)[order]


def coo_to_csr(rows, cols, values, num_rows):
    """CSR arrays ``(row_ptr, col_ind, values)`` from COO entries (any order; a stable sort by
    row keeps each row's column order)."""
    rows = np.asarray(rows, np.int64)
    order = np.argsort(rows, kind="stable")
    row_ptr = np.zeros(num_rows + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=num_rows), out=row_ptr[1:])
    return row_ptr, np.asarray(cols, np.int64)[order], np.asarray(values)[order]


def csr_matmul(row_ptr, col_ind, values, b):
    """``A @ b`` for A in CSR form (``len(row_ptr) - 1`` rows) and a dense matrix ``b``."""
    m = row_ptr.shape[0] - 1
    out = np.zeros((m, b.shape[1]), dtype=np.result_type(values.dtype, b.dtype))
    if values.shape[0] == 0 or b.shape[1] == 0:
        return out
    # Rows are processed in blocks of about _BLOCK_BYTES of products, so the intermediate
    # (one scaled row of b per stored entry) stays in cache instead of streaming through memory.
    per_block = max(_BLOCK_BYTES // (b.shape[1] * out.itemsize), 1)
    r0 = 0
    while r0 < m:
        r1 = int(np.searchsorted(row_ptr, row_ptr[r0] + per_block, side="right")) - 1
        r1 = min(max(r1, r0 + 1), m)
        lo, hi = row_ptr[r0], row_ptr[r1]
        if hi > lo:
            products = b[col_ind[lo:hi]] * values[lo:hi, None]
            starts = row_ptr[r0:r1]
            nonempty = np.flatnonzero(row_ptr[r0 + 1:r1 + 1] > starts)
            # reduceat sums products[start_r : start_next_nonempty]: exactly row r's entries.
            out[r0 + nonempty] = np.add.reduceat(products, starts[nonempty] - lo, axis=0)
        r0 = r1
    return out


@register_kernel("SparseTensorDenseMatMul", type_constraint={"T": _VALUE_TYPES,
                                                             "Tindices": [int32, int64]})
def _sparse_tensor_dense_matmul(a_indices, a_values, a_shape, b, adjoint_a=False,
                                adjoint_b=False):
    a_indices = np.asarray(a_indices, np.int64)
    a_shape = np.asarray(a_shape, np.int64)
    if a_shape.ndim != 1:
        raise InvalidArgumentError(None, None, "Tensor 'a_shape' is not a vector")
    if a_shape.size != 2:
        raise InvalidArgumentError(None, None, "Tensor 'a_shape' must have 2 elements")
    if np.ndim(a_values) != 1:
        raise InvalidArgumentError(None, None, "Tensor 'a_values' is not a vector")
    if a_indices.ndim != 2:
        raise InvalidArgumentError(None, None, "Tensor 'a_indices' is not a matrix")
    if b.ndim != 2:
        raise InvalidArgumentError(None, None, "Tensor 'b' is not a matrix")
    if a_indices.shape[0] != np.shape(a_values)[0]:
        raise InvalidArgumentError(None, None, "Number of rows of a_indices does not match "
                                   "number of entries in a_values")
    if a_indices.shape[1] != a_shape.size:
        raise InvalidArgumentError(None, None, "Number of columns of a_indices does not match "
                                   "number of entries in a_shape")
    outer_left, inner_left = (a_shape[1], a_shape[0]) if adjoint_a else (a_shape[0], a_shape[1])
    inner_right, outer_right = (b.shape[1], b.shape[0]) if adjoint_b else (b.shape[0], b.shape[1])
    if inner_left != inner_right:
        raise InvalidArgumentError(
            None, None, f"Cannot multiply A and B because inner dimension does not match: "
            f"{inner_left} vs. {inner_right}.  Did you forget a transpose?  Dimensions of A: "
            f"[{a_shape[0]}, {a_shape[1]}).  Dimensions of B: [{b.shape[0]},{b.shape[1]}]")
    lhs_index_a, rhs_index_a = (1, 0) if adjoint_a else (0, 1)
    rows, ks = a_indices[:, lhs_index_a], a_indices[:, rhs_index_a]
    bad_k = np.flatnonzero((ks < 0) | (ks >= inner_left))
    bad_m = np.flatnonzero((rows < 0) | (rows >= outer_left))
    if bad_k.size and (not bad_m.size or bad_k[0] <= bad_m[0]):
        i = bad_k[0]
        raise InvalidArgumentError(None, None, f"k ({ks[i]}) from index[{i},{rhs_index_a}] out "
                                   f"of bounds (>={inner_left})")
    if bad_m.size:
        i = bad_m[0]
        raise InvalidArgumentError(None, None, f"m ({rows[i]}) from index[{i},{lhs_index_a}] "
                                   f"out of bounds (>={outer_left})")
    values = np.asarray(a_values)
    if adjoint_a:
        values = np.conj(values)
    dense_b = b.T.conj() if adjoint_b else b
    row_ptr, col_ind, sorted_values = coo_to_csr(rows, ks, values, int(outer_left))
    return csr_matmul(row_ptr, col_ind, sorted_values,
                      np.ascontiguousarray(dense_b)).astype(b.dtype, copy=False)
