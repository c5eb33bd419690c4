"""Matrix decompositions (TF's core/ops/linalg_ops.cc): ``Qr``, which the orthogonal
initializer is built on. Kernel: aicslib/kernels/linalg_ops.py (NumPy's LAPACK).

Qr has no gradient here yet (TF's _QrGrad needs a triangular solve): differentiating
through it raises the gradient registry's LookupError rather than a silent None.
"""
from ..framework.execute import apply_op
from ..framework.op_def import register_op
from ..framework.tensor_shape import TensorShape


def _qr_shape(ctx):
    a = ctx.input_shape(0)
    if a.rank is None:
        return [TensorShape(None), TensorShape(None)]
    if a.rank < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {a.rank}")
    *batch, m, n = a.as_list()
    full = ctx.attr("full_matrices")
    k = None if m is None or n is None else min(m, n)
    q = batch + [m, m if full else k]
    r = batch + [m if full else k, n]
    return [TensorShape(q), TensorShape(r)]


register_op("Qr").input("input: T").output("q: T").output("r: T").attr("full_matrices: bool = false") \
    .attr("T: {double, float, half, complex64, complex128}").set_shape_fn(_qr_shape)


def qr(input, full_matrices=False, name=None):
    """``(q, r)`` with ``input = q @ r``: ``q`` has orthonormal columns, ``r`` is upper triangular
    (over the last two axes; leading axes are a batch)."""
    return apply_op("Qr", [input], {"full_matrices": bool(full_matrices)}, name=name)
