"""Array ops: definitions (TF's core/ops/array_ops.cc) and Python API (python/ops/array_ops.py).

Kernels: ``aicslib/kernels/array_ops.py``; gradients: ``aicslib/ops/array_grad.py``.
"""
import builtins

import numpy as np

from ..framework import context, dtypes
from ..framework.allocator import check_allocation
from ..framework.common_shapes import range_size, shape_from_constant_input, unchanged_shape
from ..framework.op_def import register_op
from ..framework.strided_slice import strided_slice_spec
from ..framework.execute import apply_op
from ..framework.constant_op import constant
from ..framework.ops import TensorOperators, convert_to_tensor, default_dtype_for
from ..framework.python_sequences import sequence_to_array
from ..framework.tensor_shape import TensorShape, as_shape, dimension_value

_ALL = "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, bool, string, resource, complex64, complex128}"  # noqa: E501
_INDEX = "{int32, int64}"


def _const_shape(ctx):
    return TensorShape(np.shape(ctx.attr("value")))


register_op("Const").output("output: dtype").attr("value: tensor").attr(f"dtype: {_ALL}") \
    .set_shape_fn(_const_shape)


def _placeholder_shape(ctx):
    return TensorShape(ctx.attr("shape"))


register_op("Placeholder").output("output: dtype").attr(f"dtype: {_ALL}") \
    .attr("shape: shape = None").set_shape_fn(_placeholder_shape)
register_op("PlaceholderWithDefault").input("input: dtype").output("output: dtype") \
    .attr(f"dtype: {_ALL}").attr("shape: shape").set_shape_fn(_placeholder_shape)
register_op("Identity").input("input: T").output("output: T").attr(f"T: {_ALL}").set_shape_fn(unchanged_shape)
register_op("StopGradient").input("input: T").output("output: T").attr(f"T: {_ALL}").set_shape_fn(unchanged_shape)
register_op("NoOp")
register_op("ZerosLike").input("x: T").output("y: T").attr(f"T: {_ALL}").set_shape_fn(unchanged_shape)
register_op("OnesLike").input("x: T").output("y: T").attr(f"T: {_ALL}").set_shape_fn(unchanged_shape)
register_op("Fill").input("dims: index_type").input("value: T").output("output: T") \
    .attr(f"T: {_ALL}").attr("index_type: {int32, int64} = DT_INT32") \
    .set_shape_fn(shape_from_constant_input(0))


def _shape_op_shape(ctx):
    s = ctx.input_shape(0)
    return TensorShape([s.rank])


register_op("Shape").input("input: T").output("output: out_type").attr(f"T: {_ALL}") \
    .attr("out_type: {int32, int64} = DT_INT32").set_shape_fn(_shape_op_shape)
register_op("Size").input("input: T").output("output: out_type").attr(f"T: {_ALL}") \
    .attr("out_type: {int32, int64} = DT_INT32").set_shape_fn(lambda ctx: TensorShape([]))
register_op("Rank").input("input: T").output("output: int32").attr(f"T: {_ALL}") \
    .set_shape_fn(lambda ctx: TensorShape([]))


def _reshape_shape(ctx):
    x = ctx.input_shape(0)
    target = ctx.input_constant(1)
    if target is None:
        s = ctx.input_shape(1)
        return TensorShape([None] * s[0]) if s.rank == 1 and s[0] is not None else None
    target = [int(d) for d in np.asarray(target).reshape(-1)]
    for i, d in enumerate(target):
        if d < -1:
            raise ValueError(f"Size {i} must be non-negative, not {d}")
    if target.count(-1) > 1:
        raise ValueError(f"Reshape: only one input size may be -1, not both in {target}")
    n = x.num_elements()
    known = int(np.prod([d for d in target if d != -1])) if target else 1
    if -1 in target:
        if n is not None:
            if known == 0 or n % known:
                raise ValueError(f"Cannot reshape a tensor with {n} elements to shape {target} "
                                 f"({known} elements): the size is not a multiple")
            target = [n // known if d == -1 else d for d in target]
        else:
            target = [None if d == -1 else d for d in target]
    elif n is not None and n != known:
        raise ValueError(f"Cannot reshape a tensor with {n} elements to shape {target} ({known} elements)")
    return TensorShape(target)


register_op("Reshape").input("tensor: T").input("shape: Tshape").output("output: T") \
    .attr(f"T: {_ALL}").attr("Tshape: {int32, int64} = DT_INT32").set_shape_fn(_reshape_shape)


def _transpose_shape(ctx):
    x = ctx.input_shape(0)
    perm = ctx.input_constant(1)
    if x.rank is None:
        return None
    if perm is None:
        return TensorShape([None] * x.rank)
    perm = [int(p) for p in np.asarray(perm).reshape(-1)]
    if sorted(perm) != list(builtins.range(x.rank)):
        raise ValueError(f"Transpose: perm {perm} is not a permutation of 0..{x.rank - 1}")
    return TensorShape([x[p] for p in perm])


register_op("Transpose").input("x: T").input("perm: Tperm").output("y: T").attr(f"T: {_ALL}") \
    .attr("Tperm: {int32, int64} = DT_INT32").set_shape_fn(_transpose_shape)


def _concat_shape(ctx):
    n = ctx.num_inputs - 1
    axis = ctx.input_constant(n)
    shapes = [ctx.input_shape(i) for i in builtins.range(n)]
    ranks = {s.rank for s in shapes if s.rank is not None}
    if len(ranks) > 1:
        raise ValueError(f"ConcatV2: inputs must have the same rank, got {[str(s) for s in shapes]}")
    if not ranks or axis is None:
        return None
    rank = ranks.pop()
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"ConcatV2: axis {axis} out of range for rank {rank}")
    axis %= rank
    out = []
    for d in builtins.range(rank):
        vals = [s[d] for s in shapes]
        if d == axis:
            out.append(None if any(v is None for v in vals) else builtins.sum(vals))
        else:
            known = {v for v in vals if v is not None}
            if len(known) > 1:
                raise ValueError(f"ConcatV2: dimension {d} of the inputs must match, got {vals}")
            out.append(known.pop() if known else None)
    return TensorShape(out)


register_op("ConcatV2").input("values: N * T").input("axis: Tidx").output("output: T") \
    .attr("N: int >= 1").attr(f"T: {_ALL}").attr("Tidx: {int32, int64} = DT_INT32") \
    .set_shape_fn(_concat_shape)


def _split_shape(ctx):
    axis = ctx.input_constant(0)
    x = ctx.input_shape(1)
    n = ctx.attr("num_split")
    if x.rank is None or axis is None:
        return [None] * n
    axis = int(axis) % x.rank
    d = x[axis]
    if d is not None and d % n:
        raise ValueError(f"Split: dimension {axis} of size {d} is not divisible by num_split {n}")
    part = None if d is None else d // n
    dims = x.dims
    dims[axis] = part
    return [TensorShape(dims)] * n


register_op("Split").input("split_dim: int32").input("value: T").output("output: num_split * T") \
    .attr("num_split: int >= 1").attr(f"T: {_ALL}").set_shape_fn(_split_shape)


def _slice_shape(ctx):
    x = ctx.input_shape(0)
    begin, size = ctx.input_constant(1), ctx.input_constant(2)
    if size is None or x.rank is None:
        return None
    size = [int(s) for s in np.asarray(size).reshape(-1)]
    if len(size) != x.rank:
        raise ValueError(f"Slice: size has {len(size)} entries for a rank-{x.rank} input")
    out = []
    for i, s in enumerate(size):
        if s == -1:
            out.append(None if begin is None or x[i] is None else x[i] - int(np.asarray(begin).reshape(-1)[i]))
        else:
            out.append(s)
    return TensorShape(out)


register_op("Slice").input("input: T").input("begin: Index").input("size: Index").output("output: T") \
    .attr(f"T: {_ALL}").attr("Index: {int32, int64}").set_shape_fn(_slice_shape)


def _pack_shape(ctx):
    s = ctx.input_shape(0)
    for i in builtins.range(1, ctx.num_inputs):
        try:
            s = s.merge_with(ctx.input_shape(i))
        except ValueError:
            raise ValueError(f"Pack: shapes of all inputs must match: {ctx.input_shape(0)} != "
                             f"{ctx.input_shape(i)}") from None
    if s.rank is None:
        return None
    axis = ctx.attr("axis")
    if not -(s.rank + 1) <= axis <= s.rank:
        raise ValueError(f"Pack: axis {axis} out of range for rank-{s.rank} inputs")
    dims = s.dims
    dims.insert(axis % (s.rank + 1), ctx.num_inputs)
    return TensorShape(dims)


register_op("Pack").input("values: N * T").output("output: T").attr("N: int >= 1") \
    .attr(f"T: {_ALL}").attr("axis: int = 0").set_shape_fn(_pack_shape)


def _unpack_shape(ctx):
    s = ctx.input_shape(0)
    n = ctx.attr("num")
    if s.rank is None:
        return [None] * n
    dims = s.dims
    axis = ctx.attr("axis") % s.rank
    if dims[axis] is not None and dims[axis] != n:
        raise ValueError(f"Unpack: dimension {axis} has size {dims[axis]}, not num={n}")
    del dims[axis]
    return [TensorShape(dims)] * n


register_op("Unpack").input("value: T").output("output: num * T").attr("num: int >= 0") \
    .attr(f"T: {_ALL}").attr("axis: int = 0").set_shape_fn(_unpack_shape)


def _expand_dims_shape(ctx):
    x = ctx.input_shape(0)
    axis = ctx.input_constant(1)
    if x.rank is None or axis is None:
        return None
    axis = int(np.asarray(axis).reshape(-1)[0])
    if not -(x.rank + 1) <= axis <= x.rank:
        raise ValueError(f"ExpandDims: axis {axis} out of range for rank {x.rank}")
    dims = x.dims
    dims.insert(axis % (x.rank + 1), 1)
    return TensorShape(dims)


register_op("ExpandDims").input("input: T").input("dim: Tdim").output("output: T") \
    .attr(f"T: {_ALL}").attr("Tdim: {int32, int64} = DT_INT32").set_shape_fn(_expand_dims_shape)


def _squeeze_shape(ctx):
    x = ctx.input_shape(0)
    axes = ctx.attr("squeeze_dims")
    if x.rank is None:
        return None
    axes = [a % x.rank for a in axes]
    out = []
    for i, d in enumerate(x.dims):
        if (axes and i in axes) or (not axes and d == 1):
            if d is not None and d != 1:
                raise ValueError(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
            continue
        out.append(d)
    return TensorShape(out) if axes or x.is_fully_defined() else None


register_op("Squeeze").input("input: T").output("output: T").attr(f"T: {_ALL}") \
    .attr("squeeze_dims: list(int) >= 0 = []").set_shape_fn(_squeeze_shape)


def _tile_shape(ctx):
    x = ctx.input_shape(0)
    m = ctx.input_constant(1)
    if x.rank is None or m is None:
        return None
    m = np.asarray(m).reshape(-1)
    if len(m) != x.rank:
        raise ValueError(f"Tile: multiples has {len(m)} entries for a rank-{x.rank} input")
    return TensorShape([None if d is None else d * int(k) for d, k in zip(x.dims, m)])


register_op("Tile").input("input: T").input("multiples: Tmultiples").output("output: T") \
    .attr(f"T: {_ALL}").attr("Tmultiples: {int32, int64} = DT_INT32").set_shape_fn(_tile_shape)
register_op("BroadcastTo").input("input: T").input("shape: Tidx").output("output: T") \
    .attr(f"T: {_ALL}").attr("Tidx: {int32, int64} = DT_INT32").set_shape_fn(shape_from_constant_input(1))
register_op("BroadcastGradientArgs").input("s0: T").input("s1: T").output("r0: T").output("r1: T") \
    .attr("T: {int32, int64} = DT_INT32").set_shape_fn(lambda ctx: [TensorShape([None])] * 2)


def _range_shape(ctx):
    vals = [ctx.input_constant(i) for i in builtins.range(3)]
    if any(v is None for v in vals):
        return TensorShape([None])
    for name, v in zip(("start", "limit", "delta"), vals):
        if v.size != 1:
            raise ValueError(f"{name} must be a scalar, not shape {list(v.shape)}")
    return TensorShape([range_size(*(v.reshape(())[()] for v in vals))])


register_op("Range").input("start: Tidx").input("limit: Tidx").input("delta: Tidx").output("output: Tidx") \
    .attr("Tidx: {half, bfloat16, float, double, int32, int64} = DT_INT32").set_shape_fn(_range_shape)


def _gather_shape(ctx):
    params, indices = ctx.input_shape(0), ctx.input_shape(1)
    axis = ctx.input_constant(2)
    if params.rank is None or indices.rank is None or axis is None:
        return None
    if not -params.rank <= int(axis) < params.rank:
        raise ValueError(f"Expected axis in the range [{-params.rank}, {params.rank}), but got "
                         f"{int(axis)}")
    axis = int(axis) % params.rank
    return TensorShape(params.dims[:axis] + indices.dims + params.dims[axis + 1:])


register_op("GatherV2").input("params: Tparams").input("indices: Tindices").input("axis: Taxis") \
    .output("output: Tparams").attr(f"Tparams: {_ALL}").attr("Tindices: {int32, int64}") \
    .attr("Taxis: {int32, int64} = DT_INT32").attr("batch_dims: int = 0").set_shape_fn(_gather_shape)


def _one_hot_shape(ctx):
    idx = ctx.input_shape(0)
    depth = ctx.input_constant(1)
    if idx.rank is None:
        return None
    dims = idx.dims
    axis = ctx.attr("axis")
    dims.insert(len(dims) if axis == -1 else axis, None if depth is None else int(depth))
    return TensorShape(dims)


register_op("OneHot").input("indices: TI").input("depth: int32").input("on_value: T") \
    .input("off_value: T").output("output: T").attr("axis: int = -1").attr(f"T: {_ALL}") \
    .attr("TI: {uint8, int32, int64} = DT_INT64").set_shape_fn(_one_hot_shape)


def _pad_shape(ctx):
    x = ctx.input_shape(0)
    p = ctx.input_constant(1)
    if x.rank is None or p is None:
        return None
    p = np.asarray(p).reshape(-1, 2)
    if len(p) != x.rank:
        raise ValueError(f"Pad: paddings has {len(p)} rows for a rank-{x.rank} input")
    if (p < 0).any():
        raise ValueError("Paddings must be non-negative")
    return TensorShape([None if d is None else d + int(a) + int(b) for d, (a, b) in zip(x.dims, p)])


register_op("Pad").input("input: T").input("paddings: Tpaddings").output("output: T") \
    .attr(f"T: {_ALL}").attr("Tpaddings: {int32, int64} = DT_INT32").set_shape_fn(_pad_shape)


def _strided_slice_shape(ctx):
    x = ctx.input_shape(0)
    spec = _spec_from_attrs(ctx)
    if x.rank is None or spec is None:
        return None
    probe = np.empty([1 if d is None else d for d in x.dims], dtype=np.int8)
    try:
        out = probe[spec].shape
    except IndexError as e:
        raise ValueError(f"StridedSlice: {e}") from None
    # Dimensions that came from unknown input dimensions stay unknown.
    if x.is_fully_defined():
        return TensorShape(out)
    return TensorShape([None] * len(out))


def _spec_from_attrs(ctx):
    begin, end, strides = (ctx.input_constant(i) for i in (1, 2, 3))
    if begin is None or end is None or strides is None:
        return None
    return strided_slice_spec(begin, end, strides, ctx.attr("begin_mask"), ctx.attr("end_mask"),
                              ctx.attr("ellipsis_mask"), ctx.attr("new_axis_mask"),
                              ctx.attr("shrink_axis_mask"))


_SS_ATTRS = ("begin_mask: int = 0", "end_mask: int = 0", "ellipsis_mask: int = 0",
             "new_axis_mask: int = 0", "shrink_axis_mask: int = 0")
_b = register_op("StridedSlice").input("input: T").input("begin: Index").input("end: Index") \
    .input("strides: Index").output("output: T").attr(f"T: {_ALL}").attr("Index: {int32, int64}")
for _a in _SS_ATTRS:
    _b.attr(_a)
_b.set_shape_fn(_strided_slice_shape)
_b = register_op("StridedSliceGrad").input("shape: Index").input("begin: Index").input("end: Index") \
    .input("strides: Index").input("dy: T").output("output: T").attr(f"T: {_ALL}") \
    .attr("Index: {int32, int64}")
for _a in _SS_ATTRS:
    _b.attr(_a)
_b.set_shape_fn(shape_from_constant_input(0))


# ---------------------------------------------------------------------------
# Python API.

def placeholder(dtype, shape=None, name=None):
    """A graph input that must be fed (``feed_dict``) when a Session runs anything needing it."""
    if context.executing_eagerly():
        raise RuntimeError("aics.placeholder() is not compatible with eager execution; build "
                           "it inside `with aics.Graph().as_default():` or disable eager execution.")
    return apply_op("Placeholder", [], {"dtype": dtypes.as_dtype(dtype),
                                        "shape": None if shape is None else as_shape(shape).dims},
                    name=name)


def placeholder_with_default(input, shape, name=None):
    return apply_op("PlaceholderWithDefault", [input], {"shape": as_shape(shape).dims}, name=name)


def identity(input, name=None):
    return apply_op("Identity", [input], name=name)


def stop_gradient(input, name=None):
    """Identity in the forward pass; blocks gradients from flowing to ``input``."""
    return apply_op("StopGradient", [input], name=name)


def no_op(name=None):
    return apply_op("NoOp", [], name=name)


def group(*inputs, name=None):
    """An op that runs all ``inputs`` (a NoOp with control dependencies)."""
    from ..framework.ops import control_dependencies
    if context.executing_eagerly():
        return None
    flat = []
    for i in inputs:
        flat.extend(i if isinstance(i, (list, tuple)) else [i])
    with control_dependencies([i for i in flat if i is not None]):
        return no_op(name=name)


def _shape_arg(shape):
    """A shape given as a list/tuple/TensorShape becomes an int32 vector (-1 stays -1)."""
    if hasattr(shape, "dtype") and not isinstance(shape, np.ndarray):
        return shape
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    arr = sequence_to_array(shape)
    if arr.size and arr.dtype.kind in "iu" and (arr.min() < -2**31 or arr.max() >= 2**31):
        return arr.astype(np.int64).reshape(-1)   # as TF converts such a list: int64
    return arr.astype(np.int32).reshape(-1)


def fill(dims, value, name=None):
    dims = _shape_arg(dims)
    if isinstance(dims, np.ndarray) and dims.dtype == np.int64:   # sizes past int32's range
        return apply_op("Fill", [dims, value], {"index_type": dtypes.int64}, name=name)
    return apply_op("Fill", [dims, value], name=name)


def zeros(shape, dtype=dtypes.float32, name=None):
    dtype = dtypes.as_dtype(dtype)
    return fill(shape, np.zeros((), dtype.as_numpy_dtype), name=name)


def ones(shape, dtype=dtypes.float32, name=None):
    dtype = dtypes.as_dtype(dtype)
    return fill(shape, np.ones((), dtype.as_numpy_dtype), name=name)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The identity matrix ``[*batch_shape, num_rows, num_columns]`` (TF's ``tf.eye``): ones on
    the main diagonal of each matrix, zeros elsewhere. Sizes must be known Python integers here."""
    dtype = dtypes.as_dtype(dtype)
    num_columns = num_rows if num_columns is None else num_columns
    batch_shape = [] if batch_shape is None else list(batch_shape)
    for what, n in [("num_rows", num_rows), ("num_columns", num_columns)] + \
            [("batch_shape", b) for b in batch_shape]:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"eye: {what} must be a non-negative Python integer, got {n!r}")
    check_allocation([int(b) for b in batch_shape] + [int(num_rows), int(num_columns)], dtype)
    matrix = np.eye(int(num_rows), int(num_columns), dtype=dtype.as_numpy_dtype)
    value = np.broadcast_to(matrix, tuple(int(b) for b in batch_shape) + matrix.shape).copy()
    return constant(value, dtype=dtype, name=name or "eye")


def zeros_like(input, dtype=None, name=None):
    if dtype is not None:
        from .math_ops import cast
        input = cast(input, dtype)
    return apply_op("ZerosLike", [input], name=name)


def ones_like(input, dtype=None, name=None):
    if dtype is not None:
        from .math_ops import cast
        input = cast(input, dtype)
    return apply_op("OnesLike", [input], name=name)


def shape(input, out_type=dtypes.int32, name=None):
    return apply_op("Shape", [input], {"out_type": out_type}, name=name)


def size(input, out_type=dtypes.int32, name=None):
    return apply_op("Size", [input], {"out_type": out_type}, name=name)


def rank(input, name=None):
    return apply_op("Rank", [input], name=name)


def reshape(tensor, shape, name=None):
    return apply_op("Reshape", [tensor, _shape_arg(shape) if isinstance(shape, (list, tuple)) else shape],
                    name=name)


def transpose(a, perm=None, name="transpose"):
    a = convert_to_tensor(a)
    if perm is None:
        if a.shape.rank is None:
            raise ValueError("transpose with perm=None needs an input of known rank.")
        perm = list(builtins.range(a.shape.rank))[::-1]
    return apply_op("Transpose", [a, np.asarray(perm, dtype=np.int32) if isinstance(perm, (list, tuple)) else perm],
                    name=name)


def concat(values, axis, name="concat"):
    return apply_op("ConcatV2", [list(values), axis], name=name)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits into ``num_or_size_splits`` equal parts (an int) or parts of given sizes (a list)."""
    if isinstance(num_or_size_splits, (list, tuple)):
        value = convert_to_tensor(value)
        sizes = [int(s) for s in num_or_size_splits]
        rank_ = value.shape.rank
        dim = dimension_value(value.shape[axis]) if rank_ is not None else None
        if sizes.count(-1) > 1:
            raise ValueError(f"split: at most one entry of size_splits may be -1, got {sizes}.")
        if -1 in sizes:  # inferred from the dimension's size, as in TF
            if dim is None:
                raise ValueError(f"split: cannot infer the -1 in size_splits {sizes} for a dimension "
                                 f"of unknown size.")
            sizes[sizes.index(-1)] = dim - (builtins.sum(sizes) + 1)
        if any(s < 0 for s in sizes) or (dim is not None and builtins.sum(sizes) != dim):
            raise ValueError(f"split: size_splits {list(num_or_size_splits)} must be non-negative and "
                             f"sum to the size {dim} of dimension {axis}.")
        outs, start = [], 0
        for s in sizes:
            begin = [0] * rank_
            sz = [-1] * rank_
            begin[axis] = start
            sz[axis] = s
            outs.append(slice(value, begin, sz))
            start += s
        return outs
    return apply_op("Split", [axis, value], {"num_split": int(num_or_size_splits)}, name=name)


def slice(input_, begin, size, name=None):
    return apply_op("Slice", [input_, np.asarray(begin, dtype=np.int32) if isinstance(begin, (list, tuple)) else begin,
                              np.asarray(size, dtype=np.int32) if isinstance(size, (list, tuple)) else size],
                    name=name)


def stack(values, axis=0, name="stack"):
    return apply_op("Pack", [list(values)], {"axis": axis}, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    value = convert_to_tensor(value)
    if num is None:
        s = value.shape
        num = dimension_value(s[axis]) if s.rank is not None else None
        if num is None:
            raise ValueError(f"Cannot infer num from shape {s}")
    return apply_op("Unpack", [value], {"num": num, "axis": axis}, name=name)


def expand_dims(input, axis, name=None):
    return apply_op("ExpandDims", [input, axis], name=name)


def squeeze(input, axis=None, name=None):
    if axis is None:
        axis = []
    elif isinstance(axis, int):
        axis = [axis]
    return apply_op("Squeeze", [input], {"squeeze_dims": list(axis)}, name=name)


def tile(input, multiples, name=None):
    return apply_op("Tile", [input, _shape_arg(multiples) if isinstance(multiples, (list, tuple)) else multiples],
                    name=name)


def broadcast_to(input, shape, name=None):
    return apply_op("BroadcastTo", [input, _shape_arg(shape) if isinstance(shape, (list, tuple)) else shape],
                    name=name)


_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float16, dtypes.bfloat16, dtypes.float32,
                 dtypes.float64)


def range(start, limit=None, delta=1, dtype=None, name="range"):
    """TF's range: without ``dtype``, the widest of the arguments' dtypes (int32 < int64 <
    float16 < bfloat16 < float32 < float64), so ``range(0, 1, 0.25)`` is float32."""
    if limit is None:
        start, limit = 0, start
    args = [start, limit, delta]
    given = [v.dtype if hasattr(v, "dtype") and not isinstance(v, (np.ndarray, np.generic))
             else None for v in args]   # the dtypes of tensors and variables
    if dtype is None:
        found = [g or default_dtype_for(v) for g, v in zip(given, args)]
        dtype = builtins.max(found, key=lambda d: _RANGE_DTYPES.index(d) if d in _RANGE_DTYPES
                             else len(_RANGE_DTYPES))
    dtype = dtypes.as_dtype(dtype)
    args = [v if g is None or g == dtype else apply_op("Cast", [v], {"DstT": dtype})
            for g, v in zip(given, args)]
    return apply_op("Range", args, {"Tidx": dtype}, name=name)


def gather(params, indices, axis=0, batch_dims=0, name=None):
    return apply_op("GatherV2", [params, indices, axis], {"batch_dims": batch_dims}, name=name)


def one_hot(indices, depth, on_value=None, off_value=None, axis=-1, dtype=None, name=None):
    dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
    on = 1 if on_value is None else on_value
    off = 0 if off_value is None else off_value
    return apply_op("OneHot", [indices, depth, np.asarray(on, dtype.as_numpy_dtype),
                               np.asarray(off, dtype.as_numpy_dtype)], {"axis": axis}, name=name)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    if mode.upper() != "CONSTANT" or constant_values != 0:
        raise NotImplementedError("aics.pad supports mode='CONSTANT' with constant_values=0.")
    attrs = {}
    if isinstance(paddings, (list, tuple)):
        # int32, as TF converts them, unless a padding needs int64
        attrs["Tpaddings"] = default_dtype_for(paddings)
    return apply_op("Pad", [tensor, paddings], attrs, name=name)


def slice_helper(tensor, key):
    """``tensor[key]`` for ints, slices, Ellipsis and None (newaxis), as a StridedSlice."""
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
    for i, k in enumerate(key):
        bit = 1 << i
        if k is Ellipsis:
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif k is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(k, builtins.slice):
            if k.step == 0:
                raise ValueError("slice step cannot be zero")
            begin.append(0 if k.start is None else int(k.start))
            end.append(0 if k.stop is None else int(k.stop))
            strides.append(1 if k.step is None else int(k.step))
            if k.start is None:
                masks["begin_mask"] |= bit
            if k.stop is None:
                masks["end_mask"] |= bit
        elif isinstance(k, (int, np.integer)) or (hasattr(k, "__index__") and not hasattr(k, "shape")):
            k = int(k)
            begin.append(k), end.append(k + 1), strides.append(1)
            masks["shrink_axis_mask"] |= bit
        else:
            raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`) and aics.newaxis (`None`) "
                            f"are valid indices, got {k!r}")
    return apply_op("StridedSlice", [tensor, np.asarray(begin, np.int32), np.asarray(end, np.int32),
                                     np.asarray(strides, np.int32)], masks, name="strided_slice")


newaxis = None


register_op("IdentityN").input("input: T").output("output: T").attr("T: list(type) >= 1") \
    .set_shape_fn(lambda ctx: [ctx.input_shape(i) for i in builtins.range(ctx.num_inputs)])


def identity_n(input, name=None):
    return apply_op("IdentityN", [list(input)], name=name)


register_op("UnsortedSegmentSum").input("data: T").input("segment_ids: Tindices") \
    .input("num_segments: Tnumsegments").output("output: T") \
    .attr("T: {half, bfloat16, float, double, int32, int64}").attr("Tindices: {int32, int64}") \
    .attr("Tnumsegments: {int32, int64} = DT_INT32")


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """output[i] = sum of data[j] over j with segment_ids[j] == i."""
    return apply_op("UnsortedSegmentSum", [data, segment_ids, num_segments], name=name)


TensorOperators.override_operator("__getitem__", slice_helper)
