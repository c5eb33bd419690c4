"""``_FusedElementwise``: a chain of elementwise ops as one kernel.

Grappler's elementwise fusion (``aicslib/grappler/optimizers/elementwise_fusion.py``)
replaces a chain such as ``relu(x * a + b)`` by one node holding the chain as a
small program (``["Mul i0 i1", "AddV2 t0 i2", "Relu t1"]``: ``iN`` is input N,
``tN`` the result of instruction N). This reference kernel runs the program op
by op on whole arrays; every instruction is the function of the op's row in
``framework/cwise_table.py``, the unfused op's kernel itself, so results are bit-identical.

What fusion is for, one pass over memory instead of one per op, is the speed
layer's kernel (``aicslib/accel/fused_elementwise.py``): it cuts the output into
cache-sized tiles and runs the whole program tile by tile, on threads.
"""
import numpy as np

from ..framework.allocator import forwarded
from ..framework.cwise_table import fusable
from ..framework.dtypes import float32, float64
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel


# The instructions: the fusable rows' functions, each f(*operands, out=buffer or None).
UNARY = fusable(1)
BINARY = fusable(2)


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


def run_small(program, inputs, out=None, writes=None):
    """Evaluates ``program`` on small inputs, op by op (no tiling: it all fits in cache anyway);
    instruction k into ``out`` where ``writes[k]`` (:func:`writes_into`), else into a new array."""
    vals = []
    for k, (fn, refs) in enumerate(program):
        vals.append(fn(*[inputs[i] if kind == "i" else vals[i] for kind, i in refs],
                       out=out if writes is not None and writes[k] else None))
    return vals[-1]


_WRITES = {}     # (ops tuple, forwarded input) -> writes_into's answer


def writes_into(ops, program, donor):
    """Per instruction, whether it may write into the buffer of input ``donor`` (forwarded by the
    executor): when it reads a value that lives there, so its result has the output's shape,
    and no later instruction reads one. ``relu(x + b)`` with x forwarded: both instructions."""
    key = (tuple(ops), donor)
    writes = _WRITES.get(key)
    if writes is None:
        there, writes = {("i", donor)}, []
        for k, (_, refs) in enumerate(program):
            later = {r for _, rs in program[k + 1:] for r in rs}
            writes.append(bool(there.intersection(refs)) and not there & later)
            if writes[-1]:
                there = {("t", k)}
        _WRITES[key] = writes
    return writes


_SHAPES = {}     # input shapes -> broadcast shape: a node sees the same shapes every step


def output_shape(args):
    """The broadcast shape of the inputs; TF's error for incompatible ones.

    Cached by the inputs' shapes: np.broadcast_shapes took 1.5 us of the 19 that the fused
    bias + ReLU of a 128x300 MLP layer cost (13 of them NumPy's arithmetic; benchmarks/README.md,
    "MNIST MLP step, Session")."""
    key = tuple([a.shape for a in args])   # a list first: one call, where a generator resumes per input
    shape = _SHAPES.get(key)
    if shape is None:
        try:
            shape = np.broadcast_shapes(*key)
        except ValueError as e:
            raise InvalidArgumentError(None, None, f"_FusedElementwise: incompatible shapes "
                                       f"{[list(a.shape) for a in args]}: {e}") from None
        if len(_SHAPES) > 1024:
            _SHAPES.clear()
        _SHAPES[key] = shape
    return shape


@register_kernel("_FusedElementwise", type_constraint={"T": [float32, float64]}, forward_inputs=(0, 1))
def _fused_elementwise(args, ops, T, out=None):
    args = [np.asarray(a) for a in args]
    out_shape = output_shape(args)
    program = compiled(ops)
    out = forwarded(out, out_shape, np.dtype(T.as_numpy_dtype))
    writes = None if out is None else writes_into(ops, program, position(args, out))
    r = np.asarray(run_small(program, args, out, writes))
    return r if r.shape == out_shape else np.broadcast_to(r, out_shape).copy()


def position(args, x):
    """The index of ``x`` itself (not an equal array) in ``args``."""
    for i, a in enumerate(args):
        if a is x:
            return i
    raise ValueError("not among the arguments")
