"""Array CPU kernels (TF's core/kernels/{constant,reshape,transpose,concat,...}_op.cc)."""
import numpy as np

from ..framework.common_shapes import range_size
from ..framework.errors import InvalidArgumentError
from ..framework.allocator import check_allocation
from ..framework.kernel_registry import register_kernel
from ..framework.strided_slice import strided_slice_spec
from ..framework.tensor_shape import shape_debug_string


@register_kernel("Const")
def _const(value):
    return value


@register_kernel("Placeholder")
def _placeholder(ctx):
    # Reached only when a plan forgot a feed; Session checks first with a better message.
    raise InvalidArgumentError(None, None, f"You must feed a value for placeholder tensor '{ctx.node_name}'")


@register_kernel("PlaceholderWithDefault")
def _placeholder_with_default(input):
    return input


@register_kernel("Identity")
def _identity(input):
    return input


@register_kernel("StopGradient")
def _stop_gradient(input):
    return input


@register_kernel("NoOp")
def _no_op():
    return None


@register_kernel("ZerosLike")
def _zeros_like(x):
    return np.zeros_like(x)


@register_kernel("OnesLike")
def _ones_like(x):
    return np.ones_like(x)


def _dims(dims, op):
    d = np.asarray(dims).reshape(-1).tolist()      # Python ints: checked without NumPy scalars
    if any(v < 0 for v in d):
        raise InvalidArgumentError(None, None, f"{op}: dimensions must be non-negative, got {d}")
    return tuple(d)


@register_kernel("Fill")
def _fill(dims, value):
    if np.ndim(value) != 0:
        raise InvalidArgumentError(None, None, f"Fill: value must be a scalar, got shape {list(np.shape(value))}")
    shape = _dims(dims, "Fill")
    check_allocation(shape, value.dtype)
    return np.full(shape, value, dtype=value.dtype)


@register_kernel("Shape")
def _shape(input, out_type):
    return np.asarray(np.shape(input), dtype=out_type.as_numpy_dtype)


@register_kernel("Size")
def _size(input, out_type):
    return np.asarray(np.size(input), dtype=out_type.as_numpy_dtype)


@register_kernel("Rank")
def _rank(input):
    return np.asarray(np.ndim(input), dtype=np.int32)


@register_kernel("Reshape")
def _reshape(tensor, shape):
    target = [int(v) for v in np.asarray(shape).reshape(-1)]
    for i, d in enumerate(target):
        if d < -1:   # NumPy would infer any negative size; TF infers only -1
            raise InvalidArgumentError(None, None, f"Size {i} must be non-negative, not {d}")
    if target.count(-1) > 1:
        raise InvalidArgumentError(None, None, f"Only one input size may be -1, not both "
                                               f"{target.index(-1)} and "
                                               f"{target.index(-1, target.index(-1) + 1)}")
    try:
        return np.reshape(tensor, target)
    except ValueError:
        raise InvalidArgumentError(None, None, f"Input to reshape is a tensor with {np.size(tensor)} "
                                   f"values, but the requested shape has "
                                   f"{int(np.prod([d for d in target if d != -1]))}"
                                   + (" (with one inferred dimension)" if -1 in target else "")) from None


@register_kernel("Transpose")
def _transpose(x, perm):
    perm = [int(p) for p in np.asarray(perm).reshape(-1)]
    if sorted(perm) != list(range(np.ndim(x))):
        raise InvalidArgumentError(None, None, f"transpose expects a permutation of 0..{np.ndim(x) - 1}, got {perm}")
    return np.ascontiguousarray(np.transpose(x, perm))


@register_kernel("ConcatV2")
def _concat(values, axis):
    try:
        return np.concatenate(values, axis=int(axis))
    except (ValueError, np.exceptions.AxisError) as e:
        raise InvalidArgumentError(None, None, f"ConcatV2: cannot concatenate shapes "
                                   f"{[list(np.shape(v)) for v in values]} on axis {int(axis)}: {e}") from None


@register_kernel("Split")
def _split(split_dim, value, num_split):
    axis = int(split_dim)
    if value.shape[axis] % num_split:
        raise InvalidArgumentError(None, None, f"Number of ways to split should evenly divide the split "
                                   f"dimension, but got split_dim {axis} (size = {value.shape[axis]}) "
                                   f"and num_split {num_split}")
    return [np.ascontiguousarray(p) for p in np.split(value, num_split, axis=axis)]


@register_kernel("Slice")
def _slice(input, begin, size):
    begin = np.asarray(begin).reshape(-1)
    size = np.asarray(size).reshape(-1)
    if len(begin) != input.ndim or len(size) != input.ndim:
        raise InvalidArgumentError(None, None, f"Expected begin and size arguments to be 1-D tensors of "
                                   f"size {input.ndim}, but got shapes {list(begin.shape)} and {list(size.shape)}")
    idx = []
    for d, (b, s) in enumerate(zip(begin, size)):
        b, s = int(b), int(s)
        e = input.shape[d] if s == -1 else b + s
        if b < 0 or e > input.shape[d] or e < b:
            raise InvalidArgumentError(None, None, f"Expected begin[{d}] in [0, {input.shape[d]}] and "
                                       f"size[{d}] in [0, {input.shape[d] - b}], but got {b} and {s}")
        idx.append(slice(b, e))
    return np.ascontiguousarray(input[tuple(idx)])


@register_kernel("Pack")
def _pack(values, axis=0):
    shapes = {np.shape(v) for v in values}
    if len(shapes) > 1:
        raise InvalidArgumentError(None, None, f"Shapes of all inputs must match: {sorted(shapes)}")
    return np.stack(values, axis=axis)


@register_kernel("Unpack")
def _unpack(value, num, axis=0):
    if value.shape[axis] != num:
        raise InvalidArgumentError(None, None, f"Unpack: dimension {axis} has size {value.shape[axis]}, num={num}")
    # a 1-D value unpacks to 0-d arrays (np.ascontiguousarray would make each 1-D)
    return [np.ascontiguousarray(v) if np.ndim(v) else np.asarray(v) for v in np.moveaxis(value, axis, 0)]


@register_kernel("ExpandDims")
def _expand_dims(input, dim):
    return np.expand_dims(input, int(np.asarray(dim).reshape(-1)[0]))


@register_kernel("Squeeze")
def _squeeze(input, squeeze_dims):
    if not squeeze_dims:
        return np.squeeze(input)
    for a in squeeze_dims:
        if input.shape[a] != 1:
            raise InvalidArgumentError(None, None, f"Can not squeeze dim[{a}], expected a dimension of 1, "
                                       f"got {input.shape[a]}")
    return np.squeeze(input, axis=tuple(squeeze_dims))


@register_kernel("Tile")
def _tile(input, multiples):
    m = np.asarray(multiples).reshape(-1)
    if len(m) != input.ndim:
        raise InvalidArgumentError(None, None, f"Expected multiples argument to be a vector of length "
                                   f"{input.ndim} but got length {len(m)}")
    check_allocation([int(a) * int(b) for a, b in zip(input.shape, m)], input.dtype)
    return np.tile(input, tuple(int(v) for v in m))


@register_kernel("BroadcastTo")
def _broadcast_to(input, shape):
    dims = _dims(shape, "BroadcastTo")
    check_allocation(dims, input.dtype)
    try:
        return np.ascontiguousarray(np.broadcast_to(input, dims))
    except ValueError:
        raise InvalidArgumentError(None, None, f"Incompatible shapes: {list(input.shape)} vs. "
                                   f"{list(np.asarray(shape).reshape(-1))}") from None


@register_kernel("BroadcastGradientArgs")
def _broadcast_gradient_args(s0, s1):
    """Axes to sum over so a broadcast result's gradient matches each input's shape, in the
    shapes' own integer type (the op's ``T``)."""
    dt = s0.dtype
    s0 = [int(v) for v in s0]
    s1 = [int(v) for v in s1]
    n = max(len(s0), len(s1))
    p0 = [1] * (n - len(s0)) + s0
    p1 = [1] * (n - len(s1)) + s1
    r0, r1 = [], []
    for i, (a, b) in enumerate(zip(p0, p1)):
        if a != b and a != 1 and b != 1:
            raise InvalidArgumentError(None, None, f"Incompatible shapes: {s0} vs. {s1}")
        if a == 1 and b != 1:
            r0.append(i)
        elif b == 1 and a != 1:
            r1.append(i)
        elif a == 1 and b == 1:
            r0.append(i)
            r1.append(i)
    return np.asarray(r0, dtype=dt), np.asarray(r1, dtype=dt)


@register_kernel("Range")
def _range(start, limit, delta):
    for name, v in (("start", start), ("limit", limit), ("delta", delta)):
        if v.size != 1:   # TF also takes a 1-element vector
            raise InvalidArgumentError(None, None, f"{name} must be a scalar, not shape "
                                                   f"{list(v.shape)}")
    start, limit, delta = (v.reshape(())[()] for v in (start, limit, delta))
    try:
        n = range_size(start, limit, delta)
    except ValueError as e:
        raise InvalidArgumentError(None, None, str(e)) from None
    check_allocation([n], start.dtype)
    # start + i * delta, as TF computes each element: np.arange's values differ in the last
    # bit for some float ranges (range(1.5, 100, 0.7)), and its length can differ by one
    return (start + np.arange(n, dtype=start.dtype) * delta).astype(start.dtype, copy=False)


@register_kernel("GatherV2")
def _gather(params, indices, axis, batch_dims=0):
    if batch_dims:
        raise InvalidArgumentError(None, None, "GatherV2: batch_dims != 0 is not supported")
    axis = int(axis)
    if not -params.ndim <= axis < params.ndim:
        raise InvalidArgumentError(None, None, f"Expected axis in the range [{-params.ndim}, "
                                               f"{params.ndim}), but got {axis}")
    axis %= params.ndim
    n = params.shape[axis]
    outside = (indices < 0) | (indices >= n)
    if np.any(outside):
        where = np.unravel_index(int(np.argmax(outside)), np.shape(indices))
        raise InvalidArgumentError(None, None, f"indices[{','.join(map(str, where))}] = "
                                               f"{indices[where]} is not in [0, {n})")
    return np.take(params, indices, axis=axis)


@register_kernel("OneHot")
def _one_hot(indices, depth, on_value, off_value, axis=-1):
    depth = int(depth)
    if depth < 0:
        raise InvalidArgumentError(None, None, f"depth must be non-negative, got: {depth}")
    check_allocation(indices.shape + (depth,), on_value.dtype)
    out = np.full(indices.shape + (depth,), off_value, dtype=on_value.dtype)
    valid = (indices >= 0) & (indices < depth)  # out-of-range indices give all-off rows, as TF
    idx = np.where(valid, indices, 0)
    np.put_along_axis(out, idx[..., None].astype(np.intp), on_value, axis=-1)
    out[~valid] = off_value
    if axis != -1:
        out = np.moveaxis(out, -1, axis)
    return out


@register_kernel("Pad")
def _pad(input, paddings):
    p = np.asarray(paddings)   # TF's checks and messages (pad_op.cc)
    if p.ndim != 2 or p.shape[1] != 2:
        raise InvalidArgumentError(None, None, f"paddings must be a matrix with 2 columns: "
                                               f"{shape_debug_string(p.shape)}")
    if p.shape[0] != input.ndim:
        raise InvalidArgumentError(None, None, f"The first dimension of paddings must be the rank "
                                               f"of inputs{shape_debug_string(p.shape)} "
                                               f"{shape_debug_string(input.shape)}")
    pairs = [(int(a), int(b)) for a, b in p]
    for a, b in pairs:
        if a < 0 or b < 0:
            raise InvalidArgumentError(None, None, f"Paddings must be non-negative: {a} {b}")
    shape = [d + a + b for d, (a, b) in zip(input.shape, pairs)]
    check_allocation(shape, input.dtype)
    return np.pad(input, pairs)


@register_kernel("StridedSlice")
def _strided_slice(input, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                   shrink_axis_mask):
    spec = strided_slice_spec(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                              shrink_axis_mask)
    try:
        return np.array(input[spec])
    except IndexError as e:
        raise InvalidArgumentError(None, None, f"slice index out of bounds: {e}") from None


@register_kernel("StridedSliceGrad")
def _strided_slice_grad(shape, begin, end, strides, dy, begin_mask, end_mask, ellipsis_mask,
                        new_axis_mask, shrink_axis_mask):
    spec = strided_slice_spec(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                              shrink_axis_mask)
    out = np.zeros(tuple(int(d) for d in shape), dtype=dy.dtype)
    out[spec] = dy
    return out


@register_kernel("IdentityN")
def _identity_n(input):
    return list(input)


@register_kernel("UnsortedSegmentSum")
def _unsorted_segment_sum(data, segment_ids, num_segments):
    """TF's unsorted_segment_reduction_ops.cc: an entry whose segment id is negative is
    dropped (how callers mark padding); an id past ``num_segments`` is an error."""
    n = int(num_segments)
    ids = np.asarray(segment_ids)
    if n < 0:
        raise InvalidArgumentError(None, None, f"Input num_segments == {n} must not be negative.")
    if data.shape[:ids.ndim] != ids.shape:
        raise InvalidArgumentError(None, None, f"data.shape = {list(data.shape)} does not start "
                                   f"with segment_ids.shape = {list(ids.shape)}")
    too_big = ids >= n
    if too_big.any():
        where = np.unravel_index(int(np.argmax(too_big)), ids.shape)
        raise InvalidArgumentError(None, None, f"segment_ids[{','.join(map(str, where))}] = "
                                   f"{ids[where]} is out of range [0, {n})")
    shape = (n,) + data.shape[ids.ndim:]
    check_allocation(shape, data.dtype)
    out = np.zeros(shape, dtype=data.dtype)
    kept = ids >= 0
    if kept.all():
        np.add.at(out, ids, data)
    else:
        np.add.at(out, ids[kept], data[kept])
    return out


@register_kernel("Where")
def _where(input):
    return np.argwhere(input).astype(np.int64)
