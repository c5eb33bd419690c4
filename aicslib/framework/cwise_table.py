"""The elementwise ops, one row each: TF's ``core/ops/math_ops.cc`` one-line definitions
(``REGISTER_OP("Sin").UNARY_COMPLEX()``), ``core/kernels/cwise_op_*.cc`` registrations and
``cwise_ops.h`` functors, in one table.

A row names an op, how many inputs it takes, the dtypes its ``T`` accepts (real and
complex), what it returns (``T`` or ``bool``), the NumPy function that computes it, and
whether Grappler's elementwise fusion may put it into a ``_FusedElementwise`` program.
The rest is read off the rows:

* the op definitions (``ops/math_ops.py``): inputs ``x`` (and ``y``), output ``y`` (``z``
  for two inputs), attr ``T``, the unchanged or broadcast shape function;
* the reference kernels for the real dtypes (``kernels/cwise_ops.py``) and the complex ones
  (``kernels/cwise_ops_complex.py``: the row's ``complex_fn`` where complex numbers need
  another formula, else the same function);
* the fusion tables: the instructions a ``_FusedElementwise`` program may use
  (``ops/fused_ops.py``, ``kernels/cwise_ops_fused.py``, ``accel/fused_elementwise.py``) and
  the ops Grappler groups (``grappler/op_types.py``). A fusable row's function takes
  ``out=None``, NumPy's output buffer, so the fused kernel runs the very function the
  unfused kernel runs: the results are bit-identical.

Each row records the line it is written on, and its op definition and kernels are
registered at that line: ``aics.introspect.where("Sin")`` points at the row for both. A
kernel that needs more than one expression is a function above the table, named in its row
(``aics.introspect.kernel_source`` shows that function).

bfloat16 runs on float32 storage; the dispatcher rounds bfloat16 outputs.
"""
import sys

import numpy as np

from .dtypes import (bfloat16, bool as bool_, complex64, complex128, float16, float32, float64, int8, int16,
                     int32, int64, type_string, uint8)
from .errors import InvalidArgumentError

# The dtype lists the ops accept (TF's TF_CALL_* lists of core/framework/register_types.h).
FLOAT = [float16, bfloat16, float32, float64]
INT = [int8, int16, int32, int64, uint8]
SIGNED = FLOAT + [int8, int16, int32, int64]
NUM = FLOAT + INT
ALL = NUM + [bool_]
COMPLEX = [complex64, complex128]
# Ops TF also defines on complex numbers (its guides use them): arithmetic, exp/log, sums.
FLOAT_C, SIGNED_C, NUM_C, ALL_C = FLOAT + COMPLEX, SIGNED + COMPLEX, NUM + COMPLEX, ALL + COMPLEX


def type_spec(types):
    """The attr spec of a dtype list, as an op definition writes it: ``{half, float, ...}``."""
    return "{" + ", ".join(type_string(t) for t in types) + "}"


class Row:
    """One elementwise op. ``types``: the dtypes of ``T`` (None: the inputs are bool, no
    ``T``); ``output``: ``"bool"`` for a predicate; ``complex_fn``: the complex dtypes' kernel
    when it differs from ``fn``; ``define``: False when the op is defined elsewhere (``Relu``
    keeps NN's argument names in ops/nn_ops.py). ``location``: (file, line) of the row."""

    __slots__ = ("op", "arity", "types", "fn", "complex_fn", "output", "fusable", "define", "location")

    def __init__(self, op, arity, types, fn, *, complex_fn=None, output=None, fusable=False, define=True):
        caller = sys._getframe(1)
        self.location = (caller.f_code.co_filename, caller.f_lineno)
        self.op, self.arity, self.types, self.fn, self.complex_fn = op, arity, types, fn, complex_fn
        self.output, self.fusable, self.define = output, fusable, define

    @property
    def real_types(self):
        return None if self.types is None else [t for t in self.types if not t.is_complex]

    @property
    def complex_types(self):
        return [t for t in self.types or () if t.is_complex]

    def __repr__(self):
        return f"<elementwise op {self.op} at {self.location[0]}:{self.location[1]}>"


# --- kernels that need more than one NumPy call ----------------------------------------------

def _silent(fn, *args, out=None, **errstate):
    """``fn(*args, out=out)`` with NumPy's warnings ``errstate`` off: TF overflows to inf and
    takes logs of zero or negatives silently."""
    with np.errstate(**errstate):
        return fn(*args, out=out)


def _rsqrt(x, out=None):
    if out is None:
        return np.reciprocal(np.sqrt(x))
    np.sqrt(x, out=out)
    return np.reciprocal(out, out=out)


def _sigmoid(x, out=None):
    # exp of a non-positive number never overflows: use the form that keeps it so.
    e = np.exp(-np.abs(x))
    r = np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
    if out is None:
        return r
    np.copyto(out, r)
    return out


def _sigmoid_complex(x):
    return (1.0 / (1.0 + np.exp(-x))).astype(x.dtype)


def _sign_complex(x):
    mag = np.abs(x)
    return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag)).astype(x.dtype)


def _check_integer_divisor(x, y):
    if x.dtype.kind in "iu" and np.any(y == 0):
        raise InvalidArgumentError(None, None, "Integer division by zero")


def _realdiv(x, y, out=None):
    if x.dtype.kind in "iu":
        _check_integer_divisor(x, y)
        return np.floor_divide(x, y)
    return _silent(np.true_divide, x, y, out=out, divide="ignore", invalid="ignore")


def _floordiv(x, y):
    _check_integer_divisor(x, y)
    return _silent(np.floor_divide, x, y, divide="ignore", invalid="ignore")


def _floormod(x, y):
    _check_integer_divisor(x, y)
    return _silent(np.mod, x, y, divide="ignore", invalid="ignore")


def _pow(x, y):
    if x.dtype.kind in "iu" and np.any(y < 0):
        raise InvalidArgumentError(None, None, "Integers to negative integer powers are not allowed")
    return _silent(np.power, x, y, divide="ignore", invalid="ignore")


def _squared_difference(x, y, out=None):
    if out is None:
        d = np.subtract(x, y)
        return np.multiply(d, d)
    np.subtract(x, y, out=out)
    return np.multiply(out, out, out=out)


_QUIET_LOG = {"divide": "ignore", "invalid": "ignore"}

# --- the table -------------------------------------------------------------------------------
# op, inputs, T, the kernel (a fusable one takes out=None), then what differs from the default.
# One row per line: a row records the line it is written on.
ROWS = (
    Row("Neg", 1, SIGNED_C, lambda x, out=None: np.negative(x, out=out), fusable=True),
    Row("Abs", 1, SIGNED, lambda x, out=None: np.abs(x, out=out), fusable=True),
    Row("Sign", 1, SIGNED_C, lambda x: np.sign(x), complex_fn=_sign_complex),
    Row("Square", 1, NUM_C, lambda x, out=None: np.multiply(x, x, out=out), fusable=True),
    Row("Sqrt", 1, FLOAT_C, lambda x, out=None: np.sqrt(x, out=out), fusable=True),
    Row("Rsqrt", 1, FLOAT_C, _rsqrt, complex_fn=lambda x: (1.0 / np.sqrt(x)).astype(x.dtype), fusable=True),
    Row("Reciprocal", 1, FLOAT_C, lambda x, out=None: np.reciprocal(x, out=out), fusable=True),
    Row("Exp", 1, FLOAT_C, lambda x, out=None: _silent(np.exp, x, out=out, over="ignore"), fusable=True),
    Row("Log", 1, FLOAT_C, lambda x, out=None: _silent(np.log, x, out=out, **_QUIET_LOG), fusable=True),
    Row("Log1p", 1, FLOAT_C, lambda x: _silent(np.log1p, x, **_QUIET_LOG)),
    Row("Sin", 1, FLOAT, lambda x, out=None: np.sin(x, out=out), fusable=True),
    Row("Cos", 1, FLOAT, lambda x, out=None: np.cos(x, out=out), fusable=True),
    Row("Tan", 1, FLOAT, lambda x: np.tan(x)),
    Row("Tanh", 1, FLOAT_C, lambda x, out=None: np.tanh(x, out=out), fusable=True),
    Row("Sigmoid", 1, FLOAT_C, _sigmoid, complex_fn=_sigmoid_complex, fusable=True),
    Row("Relu", 1, FLOAT, lambda x, out=None: np.maximum(x, x.dtype.type(0), out=out), fusable=True, define=False),
    Row("Relu6", 1, FLOAT, lambda x, out=None: np.clip(x, x.dtype.type(0), x.dtype.type(6), out=out), fusable=True, define=False),
    Row("IsFinite", 1, FLOAT, lambda x: np.isfinite(x), output="bool"),
    Row("LogicalNot", 1, None, lambda x: np.logical_not(x)),
    Row("AddV2", 2, NUM_C, lambda x, y, out=None: np.add(x, y, out=out), fusable=True),
    Row("Sub", 2, NUM_C, lambda x, y, out=None: np.subtract(x, y, out=out), fusable=True),
    Row("Mul", 2, NUM_C, lambda x, y, out=None: np.multiply(x, y, out=out), fusable=True),
    Row("RealDiv", 2, NUM_C, _realdiv, fusable=True),
    Row("FloorDiv", 2, NUM, _floordiv),
    Row("FloorMod", 2, NUM, _floormod),
    Row("Pow", 2, NUM_C, _pow),
    Row("Maximum", 2, NUM, lambda x, y, out=None: np.maximum(x, y, out=out), fusable=True),
    Row("Minimum", 2, NUM, lambda x, y, out=None: np.minimum(x, y, out=out), fusable=True),
    Row("SquaredDifference", 2, NUM_C, _squared_difference, complex_fn=lambda x, y: (x - y) * np.conj(x - y), fusable=True),
    Row("Greater", 2, NUM, lambda x, y: np.greater(x, y), output="bool"),
    Row("GreaterEqual", 2, NUM, lambda x, y: np.greater_equal(x, y), output="bool"),
    Row("Less", 2, NUM, lambda x, y: np.less(x, y), output="bool"),
    Row("LessEqual", 2, NUM, lambda x, y: np.less_equal(x, y), output="bool"),
    Row("Equal", 2, ALL_C, lambda x, y: np.equal(x, y), output="bool"),
    Row("NotEqual", 2, ALL_C, lambda x, y: np.not_equal(x, y), output="bool"),
    Row("LogicalAnd", 2, None, lambda x, y: np.logical_and(x, y)),
    Row("LogicalOr", 2, None, lambda x, y: np.logical_or(x, y)),
)

BY_OP = {row.op: row for row in ROWS}


def fusable(arity):
    """{op: function} of the fusable rows with ``arity`` inputs: a ``_FusedElementwise``
    program's instructions, each called as ``fn(*operands, out=buffer or None)``."""
    return {row.op: row.fn for row in ROWS if row.fusable and row.arity == arity}
