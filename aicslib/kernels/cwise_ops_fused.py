"""``_FusedElementwise``: a chain of elementwise ops as one kernel.

Grappler's elementwise fusion (``aicslib/grappler/optimizers/elementwise_fusion.py``)
replaces a chain such as ``relu(x * a + b)`` by one node holding the chain as a
small program (``["Mul i0 i1", "AddV2 t0 i2", "Relu t1"]``: ``iN`` is input N,
``tN`` the result of instruction N). This reference kernel runs the program op
by op on whole arrays; every instruction is the same NumPy call as the unfused
op's kernel (``cwise_ops.py``, ``nn_ops.py``), so results are bit-identical.

What fusion is for, one pass over memory instead of one per op, is the speed
layer's kernel (``aicslib/accel/fused_elementwise.py``): it cuts the output into
cache-sized tiles and runs the whole program tile by tile, on threads.
"""
import numpy as np

from ..framework.dtypes import float32, float64
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel


# Each instruction is f(*operands, out=buffer or None) and returns its result.

def _sigmoid(x, out=None):
    e = np.exp(-np.abs(x))  # as cwise_ops' Sigmoid: exp never overflows
    r = np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
    if out is None:
        return r
    np.copyto(out, r)
    return out


def _rsqrt(x, out=None):
    if out is None:
        return np.reciprocal(np.sqrt(x))
    np.sqrt(x, out=out)
    return np.reciprocal(out, out=out)


def _exp(x, out=None):
    with np.errstate(over="ignore"):
        return np.exp(x, out=out)


def _log(x, out=None):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x, out=out)


def _realdiv(x, y, out=None):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(x, y, out=out)


def _squared_difference(x, y, out=None):
    if out is None:
        d = np.subtract(x, y)
        return np.multiply(d, d)
    np.subtract(x, y, out=out)
    return np.multiply(out, out, out=out)


UNARY = {
    "Neg": lambda x, out=None: np.negative(x, out=out),
    "Abs": lambda x, out=None: np.abs(x, out=out),
    "Square": lambda x, out=None: np.multiply(x, x, out=out),
    "Sqrt": lambda x, out=None: np.sqrt(x, out=out),
    "Rsqrt": _rsqrt,
    "Reciprocal": lambda x, out=None: np.reciprocal(x, out=out),
    "Exp": _exp,
    "Log": _log,
    "Tanh": lambda x, out=None: np.tanh(x, out=out),
    "Sin": lambda x, out=None: np.sin(x, out=out),
    "Cos": lambda x, out=None: np.cos(x, out=out),
    "Sigmoid": _sigmoid,
    "Relu": lambda x, out=None: np.maximum(x, x.dtype.type(0), out=out),
    "Relu6": lambda x, out=None: np.clip(x, x.dtype.type(0), x.dtype.type(6), out=out),
}
BINARY = {
    "AddV2": lambda x, y, out=None: np.add(x, y, out=out),
    "Sub": lambda x, y, out=None: np.subtract(x, y, out=out),
    "Mul": lambda x, y, out=None: np.multiply(x, y, out=out),
    "RealDiv": _realdiv,
    "Maximum": lambda x, y, out=None: np.maximum(x, y, out=out),
    "Minimum": lambda x, y, out=None: np.minimum(x, y, out=out),
    "SquaredDifference": _squared_difference,
}


def parse_program(ops, unary=None):
    """``["Mul i0 i1", "Relu t0"]`` -> [(fn, [("i", 0), ("i", 1)]), (fn, [("t", 0)])], the
    functions from ``UNARY`` (or ``unary``) and ``BINARY``."""
    unary = UNARY if unary is None else unary
    program = []
    for k, ins in enumerate(ops):
        name, *operands = ins.split()
        table = unary if len(operands) == 1 else BINARY if len(operands) == 2 else None
        if table is None or name not in table:
            raise InvalidArgumentError(None, None, f"_FusedElementwise: bad instruction {k} {ins!r}")
        refs = []
        for o in operands:
            kind, idx = o[0], int(o[1:])
            if kind not in "it" or (kind == "t" and idx >= k):
                raise InvalidArgumentError(None, None, f"_FusedElementwise: bad operand {o!r} in {ins!r}")
            refs.append((kind, idx))
        program.append((table[name], refs))
    return program


_PROGRAMS = {}   # ops tuple -> parsed program (a graph node calls its kernel with the same ops every run)


def compiled(ops):
    key = tuple(ops)
    program = _PROGRAMS.get(key)
    if program is None:
        program = _PROGRAMS[key] = parse_program(ops)
    return program


def run_small(program, inputs):
    """Evaluates ``program`` on small inputs, op by op (no tiling: it all fits in cache anyway)."""
    vals = []
    for fn, refs in program:
        vals.append(fn(*[inputs[i] if kind == "i" else vals[i] for kind, i in refs]))
    return vals[-1]


def output_shape(args):
    """The broadcast shape of the inputs; TF's error for incompatible ones."""
    try:
        return np.broadcast_shapes(*[a.shape for a in args])
    except ValueError as e:
        raise InvalidArgumentError(None, None, f"_FusedElementwise: incompatible shapes "
                                   f"{[list(a.shape) for a in args]}: {e}") from None


@register_kernel("_FusedElementwise", type_constraint={"T": [float32, float64]})
def _fused_elementwise(args, ops, T):
    args = [np.asarray(a) for a in args]
    out_shape = output_shape(args)
    r = np.asarray(run_small(compiled(ops), args))
    return r if r.shape == out_shape else np.broadcast_to(r, out_shape).copy()
