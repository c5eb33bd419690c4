"""Shape functions shared by many ops (TF's core/framework/common_shape_fns.cc).

A shape function takes an inference context (``ctx.input_shape(i)``,
``ctx.input_constant(i)``, ``ctx.attr(name)``) and returns the output
shape(s). It raises ValueError for incompatible inputs; the graph builder
turns that into a GraphConstructionError (an InvalidArgumentError and a ValueError)
naming the node and its inputs.
"""
import math

import numpy as np

from .tensor_shape import TensorShape


def unknown_shape(ctx):
    return None


def scalar_shape(ctx):
    return TensorShape([])


def unchanged_shape(ctx):
    return ctx.input_shape(0)


def broadcast_shapes(a, b):
    """NumPy broadcasting of two partial shapes; ValueError when incompatible."""
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    da, db = a.dims, b.dims
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y}")
    return TensorShape(out)


def broadcast_binary_op_shape(ctx):
    return broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1))


def matmul_shape(ctx):
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    if a.rank is not None and a.rank != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {a.rank}")
    if b.rank is not None and b.rank != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {b.rank}")
    if a.rank is None or b.rank is None:
        return TensorShape([None, None])
    m, ka = (a[1], a[0]) if ta else (a[0], a[1])
    kb, n = (b[1], b[0]) if tb else (b[0], b[1])
    if ka is not None and kb is not None and ka != kb:
        raise ValueError(f"Dimensions must be equal, but are {ka} and {kb}")
    return TensorShape([m, n])


def normalize_axes(axes, rank, op_name="reduction"):
    out = []
    for a in axes:
        a = int(a)
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions")
        out.append(a % rank)
    return sorted(set(out))


def reduction_shape(ctx):
    x = ctx.input_shape(0)
    axes = ctx.input_constant(1)
    keep = ctx.attr("keep_dims")
    if x.rank is None:
        return TensorShape(None)
    if axes is None:
        return TensorShape([None] * x.rank) if keep else TensorShape(None)
    axes = normalize_axes(np.atleast_1d(axes).tolist(), x.rank)
    if keep:
        return TensorShape([1 if i in axes else d for i, d in enumerate(x.dims)])
    return TensorShape([d for i, d in enumerate(x.dims) if i not in axes])


def shape_from_constant_input(index):
    """Output shape given by a 1-D constant input (Fill's dims, random ops' shape)."""
    def fn(ctx):
        v = ctx.input_constant(index)
        if v is None:
            s = ctx.input_shape(index)
            return TensorShape([None] * s[0]) if s.rank == 1 and s[0] is not None else None
        return TensorShape([int(d) for d in v.reshape(-1)])
    return fn



def _shown(v):
    """A number as TF's StrCat prints it: ``5`` for 5.0, ``0.5``, ``nan``."""
    if float(v).is_integer():
        return str(int(v))
    text = f"{float(v):g}"
    return text if float(text) == float(v) else repr(float(v))


def range_size(start, limit, delta):
    """Length of ``Range(start, limit, delta)`` (NumPy scalars of the op's dtype), with the
    refusals of TF's RangeOp (sequence_ops.cc) as ValueError: the graph builder reports them
    when the inputs are constants, the kernel when they are not."""
    if delta == 0:
        raise ValueError(f"Requires delta != 0: {_shown(delta)}")
    if delta > 0:
        if not start <= limit:   # also refuses a NaN, as TF's comparison does
            raise ValueError(f"Requires start <= limit when delta > 0: "
                             f"{_shown(start)}/{_shown(limit)}")
    elif not start >= limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {_shown(start)}/{_shown(limit)}")
    if isinstance(delta, (int, np.integer)):
        size = -(-abs(int(limit) - int(start)) // abs(int(delta)))   # Python ints: no overflow
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            quotient = abs((limit - start) / delta)   # in the op's dtype, as TF divides
        size = math.ceil(quotient) if math.isfinite(quotient) else math.inf
    if size > 2**63 - 1:
        raise ValueError(f"Requires ((limit - start) / delta) <= {2**63 - 1}")
    return int(size)
