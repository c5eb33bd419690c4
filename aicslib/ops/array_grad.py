"""Gradients of array, state and random ops (TF's python/ops/array_grad.py and friends)."""
import numpy as np

from ..framework import dtypes
from ..framework.gradient_registry import RegisterGradient, no_gradient
from ..framework.execute import apply_op
from . import array_ops, math_ops
from .math_grad import static_shape, static_value, sum_to_shape


@RegisterGradient("Identity")
def _identity_grad(op, grad):
    return grad


@RegisterGradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return grad


@RegisterGradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)


@RegisterGradient("ReadVariableOp")
def _read_variable_grad(op, grad):
    # The gradient of a read flows to the variable's handle (TF: resource_variable_ops._ReadGrad).
    return grad


@RegisterGradient("Print")
def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)


def _shape_of(x):
    s = static_shape(x)
    return s if s is not None else array_ops.shape(x)


@RegisterGradient("Reshape")
def _reshape_grad(op, grad):
    return [array_ops.reshape(grad, _shape_of(op.inputs[0])), None]


@RegisterGradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [array_ops.reshape(grad, _shape_of(op.inputs[0])), None]


@RegisterGradient("Squeeze")
def _squeeze_grad(op, grad):
    return array_ops.reshape(grad, _shape_of(op.inputs[0]))


@RegisterGradient("Transpose")
def _transpose_grad(op, grad):
    perm = static_value(op.inputs[1])
    if perm is None:
        raise LookupError("Transpose gradient needs a constant perm.")
    return [array_ops.transpose(grad, list(np.argsort(np.asarray(perm).reshape(-1)))), None]


@RegisterGradient("ConcatV2")
def _concat_grad(op, grad):
    values = op.inputs[:-1]
    axis = static_value(op.inputs[-1])
    if axis is None:
        raise LookupError("ConcatV2 gradient needs a constant axis.")
    rank = len(_shape_of(values[0])) if static_shape(values[0]) is not None else values[0].shape.rank
    axis = int(axis) % rank
    shapes = [static_shape(v) for v in values]
    if all(s is not None for s in shapes):
        out, start = [], 0
        for s in shapes:
            begin = [0] * rank
            begin[axis] = start
            out.append(array_ops.slice(grad, begin, s))
            start += s[axis]
        return out + [None]
    out = []
    offset = np.zeros(rank, np.int32)
    offset_t = None
    for v in values:
        size = array_ops.shape(v)
        begin = offset if offset_t is None else offset_t
        out.append(array_ops.slice(grad, begin, size))
        step = size * array_ops.one_hot(axis, rank, dtype=dtypes.int32)
        offset_t = step if offset_t is None else offset_t + step
    return out + [None]


@RegisterGradient("Split")
def _split_grad(op, *grads):
    grads = [array_ops.zeros_like(o) if g is None else g for g, o in zip(grads, op.outputs)]
    return [None, array_ops.concat(grads, static_value(op.inputs[0]))]


@RegisterGradient("Slice")
def _slice_grad(op, grad):
    x, begin, _ = op.inputs
    xs, ys = static_shape(x), static_shape(op.outputs[0])
    b = static_value(begin)
    if xs is not None and ys is not None and b is not None:
        b = np.asarray(b).reshape(-1)
        pads = [[int(bb), int(d - bb - s)] for bb, d, s in zip(b, xs, ys)]
        return [array_ops.pad(grad, pads), None, None]
    after = array_ops.shape(x) - array_ops.shape(op.outputs[0]) - begin
    pads = array_ops.stack([begin, after], axis=1)
    return [array_ops.pad(grad, pads), None, None]


@RegisterGradient("Pad")
def _pad_grad(op, grad):
    x, paddings = op.inputs
    p = static_value(paddings)
    if p is None:
        raise LookupError("Pad gradient needs constant paddings.")
    begin = [int(v) for v in np.asarray(p).reshape(-1, 2)[:, 0]]
    return [array_ops.slice(grad, begin, _shape_of(x)), None]


@RegisterGradient("Pack")
def _pack_grad(op, grad):
    return array_ops.unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


@RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    grads = [array_ops.zeros_like(o) if g is None else g for g, o in zip(grads, op.outputs)]
    return array_ops.stack(grads, axis=op.get_attr("axis"))


@RegisterGradient("Tile")
def _tile_grad(op, grad):
    x, multiples = op.inputs
    m = static_value(multiples)
    xs = static_shape(x)
    if m is None or xs is None:
        raise LookupError("Tile gradient needs a static input shape and constant multiples.")
    m = [int(v) for v in np.asarray(m).reshape(-1)]
    split = [v for pair in zip(m, xs) for v in pair]
    g = array_ops.reshape(grad, split)
    return [math_ops.reduce_sum(g, list(range(0, 2 * len(xs), 2))), None]


@RegisterGradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    return [sum_to_shape(grad, op.inputs[0]), None]


@RegisterGradient("Fill")
def _fill_grad(op, grad):
    return [None, math_ops.reduce_sum(grad)]


@RegisterGradient("GatherV2")
def _gather_grad(op, grad):
    params, indices, axis = op.inputs
    a = static_value(axis)
    if a is None or int(a) != 0:
        raise LookupError("GatherV2 gradient is implemented for axis=0.")
    ps = static_shape(params)
    idx = array_ops.reshape(indices, [-1])
    if ps is None:  # e.g. params reshaped to [-1, n]: the shape is read when the graph runs, as TF does
        dyn = array_ops.shape(params)
        values = array_ops.reshape(grad, array_ops.concat([[-1], dyn[1:]], 0))
        return [array_ops.unsorted_segment_sum(values, idx, dyn[0]), None, None]
    values = array_ops.reshape(grad, [-1] + ps[1:])
    return [array_ops.unsorted_segment_sum(values, idx, ps[0]), None, None]


@RegisterGradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    # Entries with a negative segment id were dropped: their gradient is zero (TF's
    # _GatherDropNegatives). They read an appended row of zeros instead of a segment.
    ids, num_segments = op.inputs[1], op.inputs[2]
    padded = array_ops.concat([grad, array_ops.zeros_like(grad[:1])], 0)
    row = math_ops.where(math_ops.greater_equal(ids, 0), ids,
                         math_ops.cast(num_segments, ids.dtype))
    return [array_ops.gather(padded, row), None, None]


_SS_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


@RegisterGradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    masks = {k: op.get_attr(k) for k in _SS_MASKS}
    shape = _shape_of(x)
    if isinstance(shape, list):
        shape = np.asarray(shape, np.int32)
    return [apply_op("StridedSliceGrad", [shape, begin, end, strides, grad], masks), None, None, None]


@RegisterGradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    masks = {k: op.get_attr(k) for k in _SS_MASKS}
    return [None, None, None, None, apply_op("StridedSlice", [grad, begin, end, strides], masks)]


@RegisterGradient("OneHot")
def _one_hot_grad(op, grad):
    return [None, None, None, None]


no_gradient("Const")
no_gradient("Placeholder")
no_gradient("Shape")
no_gradient("Size")
no_gradient("Rank")
no_gradient("ZerosLike")
no_gradient("OnesLike")
no_gradient("Range")
no_gradient("BroadcastGradientArgs")
no_gradient("StopGradient")
no_gradient("NoOp")
no_gradient("VarHandleOp")
no_gradient("AssignVariableOp")
no_gradient("AssignAddVariableOp")
no_gradient("AssignSubVariableOp")
no_gradient("VarIsInitializedOp")
no_gradient("RandomStandardNormal")
no_gradient("RandomUniform")
no_gradient("TruncatedNormal")
no_gradient("RandomUniformInt")
no_gradient("RandomShuffle")
no_gradient("PrintV2")


def _any(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# Numerical-check recipes (see math_grad.GRADIENT_CHECK_RECIPES).
GRADIENT_CHECK_RECIPES = {
    "Identity": lambda: (array_ops.identity, [_any(2, 3)]),
    "PlaceholderWithDefault": lambda: (lambda x: array_ops.placeholder_with_default(x, [2, 3]), [_any(2, 3)]),
    "IdentityN": lambda: (lambda a, b: math_ops.add_n(array_ops.identity_n([a, b])[:2]),
                          [_any(2, 2), _any(2, 2, seed=1)]),
    "ReadVariableOp": None,  # checked through variables in tests/framework/test_gradients.py
    "Print": lambda: (lambda x: __import__("aicslib").Print(x, [], message="") * 2.0, [_any(3)]),
    "Reshape": lambda: (lambda x: array_ops.reshape(x, [3, 2]), [_any(2, 3)]),
    "ExpandDims": lambda: (lambda x: array_ops.expand_dims(x, 1), [_any(2, 3)]),
    "Squeeze": lambda: (lambda x: array_ops.squeeze(x, [1]), [_any(2, 1, 3)]),
    "Transpose": lambda: (lambda x: array_ops.transpose(x, [2, 0, 1]), [_any(2, 3, 4)]),
    "ConcatV2": lambda: (lambda a, b: array_ops.concat([a, b], 1), [_any(2, 3), _any(2, 2, seed=1)]),
    "Split": lambda: (lambda x: array_ops.split(x, 2, axis=1)[1] * 3.0, [_any(2, 4)]),
    "Slice": lambda: (lambda x: array_ops.slice(x, [1, 0], [2, 2]), [_any(3, 4)]),
    "Pad": lambda: (lambda x: array_ops.pad(x, [[1, 0], [0, 2]]), [_any(2, 3)]),
    "Pack": lambda: (lambda a, b: array_ops.stack([a, b], axis=1), [_any(2, 3), _any(2, 3, seed=1)]),
    "Unpack": lambda: (lambda x: array_ops.unstack(x, axis=1)[2], [_any(2, 3)]),
    "Tile": lambda: (lambda x: array_ops.tile(x, [2, 3]), [_any(2, 2)]),
    "BroadcastTo": lambda: (lambda x: array_ops.broadcast_to(x, [4, 2, 3]), [_any(2, 1)]),
    "Fill": lambda: (lambda v: array_ops.fill([2, 3], v), [np.array(1.5)]),
    "GatherV2": lambda: (lambda p: array_ops.gather(p, np.array([2, 0, 2])), [_any(4, 3)]),
    "UnsortedSegmentSum": lambda: (lambda d: array_ops.unsorted_segment_sum(d, np.array([1, 0, 1]), 3), [_any(3, 2)]),
    "StridedSlice": lambda: (lambda x: x[1:, ::2], [_any(3, 5)]),
    "StridedSliceGrad": lambda: (lambda dy: apply_op("StridedSliceGrad", [np.array([3, 4], np.int32),
                                                                         np.array([1, 0], np.int32),
                                                                         np.array([3, 4], np.int32),
                                                                         np.array([1, 2], np.int32), dy]),
                                 [_any(2, 2)]),
    "OneHot": None,  # no differentiable inputs
}
