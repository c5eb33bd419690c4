"""aics.sparse: sparse tensors (TF's ``tf.sparse``) and CSR storage.

``SparseTensor(indices, values, dense_shape)`` with ``to_dense``, ``from_dense``,
``reorder`` and ``sparse_dense_matmul`` (TF's names, semantics and error
messages); ``CSRMatrix`` for compressed-sparse-row storage and its matmul kernel.
For sparse *training* (pruning masks, RigL) see ``aicslib.sparsity``.
"""
from ..framework.sparse_tensor import SparseTensor
from ..ops import sparse_grad as _sparse_grad
from ..ops.sparse_ops import from_dense, reorder, sparse_dense_matmul, to_dense
from .csr import CSRMatrix

matmul = sparse_dense_matmul   # tf.sparse.matmul, the older name

__all__ = ["SparseTensor", "to_dense", "from_dense", "reorder", "sparse_dense_matmul", "matmul",
           "CSRMatrix"]
