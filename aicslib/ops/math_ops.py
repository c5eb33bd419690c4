"""Math ops: definitions (TF's core/ops/math_ops.cc) and Python API (python/ops/math_ops.py).

The elementwise ops (``Sin``, ``AddV2``, ``Greater``...) are defined from their rows in the
elementwise table, ``aicslib/framework/cwise_table.py``, which also holds their NumPy
kernels; every other op is declared here once with ``register_op``, its NumPy kernels in
``aicslib/kernels/cwise_ops.py``, ``matmul_op.py`` and ``reduction_ops.py``. Gradients:
``aicslib/ops/math_grad.py``.
"""
import builtins

import numpy as np

from ..framework import cwise_table, dtypes
from ..framework.common_shapes import (broadcast_binary_op_shape, matmul_shape, reduction_shape,
                                       unchanged_shape)
from ..framework.cwise_table import type_spec
from ..framework.op_def import op_def_registry, register_op
from ..framework.execute import apply_op
from ..framework.op_def_library import dtype_of
from ..framework.ops import TensorOperators, convert_to_tensor
from ..framework.tensor_shape import TensorShape

# The dtype lists of the ops below (the elementwise ops take theirs from their rows).
_NUM = type_spec(cwise_table.NUM)
_NUM_C = type_spec(cwise_table.NUM_C)
_ALL = type_spec(cwise_table.ALL)


# --- element-wise ops: one definition per row of framework/cwise_table.py -----------------------
def _define_elementwise(row):
    """``x`` (and ``y``) in, ``y`` (``z``) out, ``T`` from the row; registered at the row's line,
    which is where aics.introspect.where(op) points."""
    t = "T" if row.types is not None else "bool"
    builder = op_def_registry.register(row.op, row.location)
    for name in ("x", "y")[:row.arity]:
        builder.input(f"{name}: {t}")
    builder.output(f"{'yz'[row.arity - 1]}: {row.output or t}")
    if row.types is not None:
        builder.attr(f"T: {type_spec(row.types)}")
    builder.set_shape_fn(unchanged_shape if row.arity == 1 else broadcast_binary_op_shape)


for _row in cwise_table.ROWS:
    if _row.define:
        _define_elementwise(_row)


def _select_shape(ctx):
    from ..framework.common_shapes import broadcast_shapes
    return broadcast_shapes(broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1)), ctx.input_shape(2))


register_op("SelectV2").input("condition: bool").input("t: T").input("e: T").output("output: T") \
    .attr(f"T: {_ALL}").set_shape_fn(_select_shape)


def _clip_shape(ctx):
    return ctx.input_shape(0)


register_op("ClipByValue").input("t: T").input("clip_value_min: T").input("clip_value_max: T") \
    .output("output: T").attr(f"T: {_NUM}").set_shape_fn(_clip_shape)


def _add_n_shape(ctx):
    s = ctx.input_shape(0)
    for i in range(1, ctx.num_inputs):
        try:
            s = s.merge_with(ctx.input_shape(i))
        except ValueError:
            raise ValueError(f"Inputs to AddN must all have the same shape, got {ctx.input_shape(0)} "
                             f"and {ctx.input_shape(i)}") from None
    return s


register_op("AddN").input("inputs: N * T").output("sum: T").attr("N: int >= 1") \
    .attr(f"T: {_NUM_C}").set_shape_fn(_add_n_shape)

# Cast also reaches the 8-bit float formats, which no arithmetic op takes (as in TF).
_CAST = type_spec(cwise_table.ALL + [dtypes.float8_e4m3fn, dtypes.float8_e5m2] + cwise_table.COMPLEX)
register_op("Cast").input("x: SrcT").output("y: DstT").attr(f"SrcT: {_CAST}").attr(f"DstT: {_CAST}") \
    .attr("Truncate: bool = false").set_shape_fn(unchanged_shape)

register_op("MatMul").input("a: T").input("b: T").output("product: T") \
    .attr("transpose_a: bool = false").attr("transpose_b: bool = false") \
    .attr("T: {half, bfloat16, float, double, int32, int64, complex64, complex128}").set_shape_fn(matmul_shape)


def _batch_matmul_shape(ctx):
    from ..framework.common_shapes import broadcast_shapes
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    for t in (a, b):
        if t.rank is not None and t.rank < 2:   # TF's WithRankAtLeast(2)
            raise ValueError(f"Shape must be at least rank 2 but is rank {t.rank}")
    if a.rank is None or b.rank is None:
        return None
    m, ka = (a[-1], a[-2]) if ctx.attr("adj_x") else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if ctx.attr("adj_y") else (b[-2], b[-1])
    if ka is not None and kb is not None and ka != kb:
        raise ValueError(f"Dimensions must be equal, but are {ka} and {kb}")
    batch = broadcast_shapes(a[:-2], b[:-2])
    return TensorShape(batch.dims + [m, n])


register_op("BatchMatMulV2").input("x: T").input("y: T").output("output: T") \
    .attr("adj_x: bool = false").attr("adj_y: bool = false") \
    .attr("T: {half, bfloat16, float, double, int32, int64, complex64, complex128}") \
    .set_shape_fn(_batch_matmul_shape)


def _reduction_op(builder, types=_NUM):
    """The signature every reduction shares: input and axes in, reduced output out."""
    return builder.input("input: T").input("reduction_indices: Tidx").output("output: T") \
        .attr("keep_dims: bool = false").attr(f"T: {types}").attr("Tidx: {int32, int64} = DT_INT32") \
        .set_shape_fn(reduction_shape)


_reduction_op(register_op("Sum"), _NUM_C)
_reduction_op(register_op("Mean"), _NUM_C)
_reduction_op(register_op("Max"))
_reduction_op(register_op("Min"))
_reduction_op(register_op("Prod"), _NUM_C)


def _arg_shape(ctx):
    x = ctx.input_shape(0)
    axis = ctx.input_constant(1)
    if x.rank is None or axis is None:
        return None
    axis = int(axis) % x.rank
    return TensorShape([d for i, d in enumerate(x.dims) if i != axis])


register_op("ArgMax").input("input: T").input("dimension: Tidx").output("output: output_type") \
    .attr(f"T: {_NUM}").attr("Tidx: {int32, int64} = DT_INT32") \
    .attr("output_type: {int32, int64} = DT_INT64").set_shape_fn(_arg_shape)
register_op("ArgMin").input("input: T").input("dimension: Tidx").output("output: output_type") \
    .attr(f"T: {_NUM}").attr("Tidx: {int32, int64} = DT_INT32") \
    .attr("output_type: {int32, int64} = DT_INT64").set_shape_fn(_arg_shape)


# ---------------------------------------------------------------------------
# Python API.

def add(x, y, name=None):
    """x + y element-wise, with NumPy broadcasting (an AddV2 op named ``Add``, as TF names it)."""
    if _is_string(x) or _is_string(y):   # TF's _add_dispatch: strings concatenate, op Add
        return apply_op("Add", [x, y], name=name or "Add")
    return apply_op("AddV2", [x, y], name=name or "Add")


def _is_string(value):
    return isinstance(value, (str, bytes)) or getattr(value, "dtype", None) is dtypes.string


def subtract(x, y, name=None):
    return apply_op("Sub", [x, y], name=name)


def multiply(x, y, name=None):
    return apply_op("Mul", [x, y], name=name)


def divide(x, y, name=None):
    """True division. Integer inputs are cast to float64 first, as tf.math.divide does."""
    x, y = _same_dtype(x, y)
    if x.dtype.is_integer:
        x, y = cast(x, dtypes.float64), cast(y, dtypes.float64)
    return apply_op("RealDiv", [x, y], name=name)


def _same_dtype(x, y):
    dt = dtype_of(x) or dtype_of(y)
    x = convert_to_tensor(x, dtype=dt)
    y = convert_to_tensor(y, dtype=x.dtype)
    return x, y


def realdiv(x, y, name=None):
    return apply_op("RealDiv", [x, y], name=name)


def floordiv(x, y, name=None):
    return apply_op("FloorDiv", [x, y], name=name)


def floormod(x, y, name=None):
    return apply_op("FloorMod", [x, y], name=name)


def pow(x, y, name=None):
    return apply_op("Pow", [x, y], name=name)


def maximum(x, y, name=None):
    return apply_op("Maximum", [x, y], name=name)


def minimum(x, y, name=None):
    return apply_op("Minimum", [x, y], name=name)


def squared_difference(x, y, name=None):
    return apply_op("SquaredDifference", [x, y], name=name)


def greater(x, y, name=None):
    return apply_op("Greater", [x, y], name=name)


def greater_equal(x, y, name=None):
    return apply_op("GreaterEqual", [x, y], name=name)


def less(x, y, name=None):
    return apply_op("Less", [x, y], name=name)


def less_equal(x, y, name=None):
    return apply_op("LessEqual", [x, y], name=name)


def equal(x, y, name=None):
    return apply_op("Equal", [x, y], name=name)


def not_equal(x, y, name=None):
    return apply_op("NotEqual", [x, y], name=name)


def logical_and(x, y, name=None):
    return apply_op("LogicalAnd", [x, y], name=name)


def logical_or(x, y, name=None):
    return apply_op("LogicalOr", [x, y], name=name)


def logical_not(x, name=None):
    return apply_op("LogicalNot", [x], name=name)


def _unary(op_type, doc):
    def fn(x, name=None):
        return apply_op(op_type, [x], name=name)
    fn.__name__ = op_type.lower()
    fn.__doc__ = doc
    return fn


negative = _unary("Neg", "-x element-wise.")
_real_abs = _unary("Abs", "|x| element-wise.")


def abs(x, name=None):
    """|x| element-wise; for complex x the modulus, a real tensor (TF's ComplexAbs)."""
    if getattr(x, "dtype", None) is not None and x.dtype.is_complex:
        from .complex_ops import complex_abs
        return complex_abs(x, name=name)
    return _real_abs(x, name=name)
sign = _unary("Sign", "-1, 0 or 1 by the sign of x.")
square = _unary("Square", "x * x element-wise.")
sqrt = _unary("Sqrt", "sqrt(x) element-wise.")
rsqrt = _unary("Rsqrt", "1 / sqrt(x) element-wise.")
reciprocal = _unary("Reciprocal", "1 / x element-wise.")
exp = _unary("Exp", "e^x element-wise.")
log = _unary("Log", "Natural logarithm element-wise.")
log1p = _unary("Log1p", "log(1 + x), accurate for small x.")
sin = _unary("Sin", "sin(x) element-wise.")
cos = _unary("Cos", "cos(x) element-wise.")
tan = _unary("Tan", "tan(x) element-wise (its gradient is left for the chapter 4 exercise).")
tanh = _unary("Tanh", "tanh(x) element-wise.")
sigmoid = _unary("Sigmoid", "1 / (1 + exp(-x)) element-wise, computed stably.")
is_finite = _unary("IsFinite", "True where x is neither inf nor NaN.")


def where(condition, x=None, y=None, name=None):
    """Elements of x where condition is true, else of y (TF2 semantics: broadcasting)."""
    if x is None or y is None:
        raise ValueError("aics.where needs both x and y (index form is not supported).")
    return apply_op("SelectV2", [condition, x, y], name=name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    return apply_op("ClipByValue", [t, clip_value_min, clip_value_max], name=name)


def add_n(inputs, name=None):
    """Sums a list of tensors of the same shape and dtype."""
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors.")
    if len(inputs) == 1 and name is None:
        return convert_to_tensor(inputs[0])
    return apply_op("AddN", [list(inputs)], name=name)


def cast(x, dtype, name=None):
    """Converts x to ``dtype``; floats to ints truncate toward zero, as in TF."""
    dtype = dtypes.as_dtype(dtype)
    x = convert_to_tensor(x) if not hasattr(x, "dtype") else x
    if getattr(x, "dtype", None) == dtype and name is None:
        return convert_to_tensor(x)
    return apply_op("Cast", [x], {"DstT": dtype}, name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """Matrix product of rank-2 tensors (batched for higher ranks)."""
    a = convert_to_tensor(a)
    if isinstance(b, (np.ndarray, np.generic)) or not hasattr(b, "dtype"):
        # NumPy values keep their dtype (a mismatch is reported by the op); Python values take a's.
        b = convert_to_tensor(b, dtype=None if hasattr(b, "dtype") else a.dtype)
    ra, rb = a.shape.rank, b.shape.rank
    if (ra is not None and ra > 2) or (rb is not None and rb > 2):
        return apply_op("BatchMatMulV2", [a, b], {"adj_x": transpose_a, "adj_y": transpose_b}, name=name)
    return apply_op("MatMul", [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b}, name=name)


def _axis_tensor(x, axis):
    """The reduction axes as an int32 value: all axes when axis is None."""
    if axis is None:
        rank = x.shape.rank
        if rank is None:
            from .array_ops import range as _range, rank as _rank
            return _range(0, _rank(x))
        return np.arange(rank, dtype=np.int32)
    if hasattr(axis, "dtype") and not isinstance(axis, np.ndarray):
        return axis
    return np.asarray(axis, dtype=np.int32)


def _reduce(op_type):
    def fn(input_tensor, axis=None, keepdims=False, name=None):
        x = convert_to_tensor(input_tensor)
        return apply_op(op_type, [x, _axis_tensor(x, axis)], {"keep_dims": builtins.bool(keepdims)},
                        name=name)
    fn.__name__ = f"reduce_{op_type.lower()}"
    fn.__doc__ = f"{op_type} over ``axis`` (all axes when None); ``keepdims`` keeps them as size 1."
    return fn


reduce_sum = _reduce("Sum")
reduce_mean = _reduce("Mean")
reduce_max = _reduce("Max")
reduce_min = _reduce("Min")
reduce_prod = _reduce("Prod")


def argmax(input, axis=None, output_type=dtypes.int64, name=None):
    return apply_op("ArgMax", [input, 0 if axis is None else axis], {"output_type": output_type}, name=name)


def argmin(input, axis=None, output_type=dtypes.int64, name=None):
    return apply_op("ArgMin", [input, 0 if axis is None else axis], {"output_type": output_type}, name=name)


def scalar_mul(scalar, x, name=None):
    return multiply(scalar, x, name=name)


def truediv(x, y, name=None):
    return divide(x, y, name=name)


# ---------------------------------------------------------------------------
# Python operators on tensors, as TF's math_ops overloads them.

def _named_operator(fn, op_name):
    """``x <op> y`` as TF's binary_op_wrapper builds it: the op is named after the
    operator (``a + b`` is an AddV2 op named ``add``, ``a * b`` a Mul named ``mul``)."""
    def binary(x, y):
        return fn(x, y, name=op_name)
    binary.__name__ = op_name
    return binary


def _reflected(fn, op_name):
    def reflected(y, x):
        return fn(x, y, name=op_name)
    reflected.__name__ = f"r{op_name}"
    return reflected


for _name, _fn in (("add", add), ("sub", subtract), ("mul", multiply), ("truediv", divide),
                   ("floordiv", floordiv), ("mod", floormod), ("pow", pow), ("matmul", matmul),
                   ("and", logical_and), ("or", logical_or)):
    TensorOperators.override_operator(f"__{_name}__", _named_operator(_fn, _name))
    TensorOperators.override_operator(f"__r{_name}__", _reflected(_fn, _name))
for _name, _fn in (("lt", less), ("le", less_equal), ("gt", greater), ("ge", greater_equal),
                   ("neg", negative), ("abs", abs), ("invert", logical_not)):
    TensorOperators.override_operator(f"__{_name}__", _fn)
