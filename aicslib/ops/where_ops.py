"""``Where`` (the coordinates of true elements) and ``boolean_mask`` built on it.

TF's core/ops/array_ops.cc ``Where`` and python/ops/array_ops.py ``boolean_mask``:
the number of true elements is known only when the op runs, so the output's
first dimension is unknown in a graph. ``boolean_mask`` gathers the rows the
mask keeps, so its gradient is GatherV2's (Where itself has none, as in TF).
"""
from ..framework import dtypes
from ..framework.execute import apply_op
from ..framework.gradient_registry import no_gradient
from ..framework.op_def import register_op
from ..framework.ops import convert_to_tensor, name_scope
from ..framework.tensor_shape import TensorShape
from . import array_ops


def _where_shape(ctx):
    return TensorShape([None, ctx.input_shape(0).rank])


register_op("Where").input("input: T").output("index: int64") \
    .attr("T: {bool, float, double, int8, uint8, int16, int32, int64} = DT_BOOL") \
    .set_shape_fn(_where_shape)
no_gradient("Where")


def where_indices(condition, name=None):
    """``[num_true, rank]`` int64 coordinates of the true (non-zero) elements, in row-major order."""
    return apply_op("Where", [condition], name=name or "Where")


def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """The elements (or rows, from ``axis`` on) of ``tensor`` where ``mask`` is true.

    ``mask`` covers the ``mask.rank`` dimensions of ``tensor`` starting at ``axis``
    (0 by default); they are flattened into one dimension and filtered.
    """
    with name_scope(name):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, dtype=dtypes.bool, name="mask")
        k = mask.shape.rank
        if k is None:
            raise ValueError("Number of mask dimensions must be specified, even if some dimensions "
                             "are None. E.g. shape=[None] is ok, but shape=None is not.")
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        axis = 0 if axis is None else axis
        shape = array_ops.shape(tensor)
        flat = array_ops.reshape(tensor, array_ops.concat(
            [shape[:axis], [-1], shape[axis + k:]], 0))
        keep = array_ops.reshape(where_indices(array_ops.reshape(mask, [-1])), [-1])
        return array_ops.gather(flat, keep, axis=axis)
