"""Values that only shapes decide, computed once per shape in an untraced Session run.

The gradient of ``reduce_mean(losses)`` over a batch of unknown size is ``1/n`` for every
example, and the graph computes it on every step from the losses' shape: ``OnesLike``,
``Shape``, ``Size``, ``Cast``, ``BroadcastTo``, ``RealDiv``, ``ExpandDims``. TF's grappler
turns such nodes into constants when the static shape is known (constant_folding.cc,
``MaterializeShapes``); with a batch dimension of ``None`` it cannot, and TF's executor runs
each of them on every step, as aicslib's did.

A node here is *decided by shapes* when it is an op of ``READS_SHAPE`` (its output depends on
its input's shape and dtype, never on the values), or an op of ``PURE`` whose inputs all come
from constants or from nodes decided by shapes. Each such value that another node reads, or
that the caller fetches, becomes one step of the plan's untraced loop: a :class:`ShapeMemo`,
keyed by the shapes of the values its nodes read. The first run with those shapes runs the
nodes, each through ``run_kernel``; later runs with the same shapes take the kept result
(read-only, so no kernel writes into it). A traced run, and the parallel and control-flow
executors, still run every node. This memo is aicslib's; TF has no such step.
"""
import numpy as np

from . import dtypes
from .execute import run_kernel

#: Ops whose output depends on the shape and dtype of their one input only.
READS_SHAPE = frozenset({"Shape", "Size", "Rank", "OnesLike", "ZerosLike"})
#: Ops whose kernel is a function of its inputs and attrs alone (no state, no randomness, no
#: side effect), as gradient code uses them to turn shapes into values.
PURE = frozenset({"Cast", "AddV2", "Add", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod",
                  "Maximum", "Minimum", "Neg", "Reciprocal", "Identity", "BroadcastTo", "ExpandDims",
                  "Reshape", "Squeeze", "Fill", "Pack", "ConcatV2", "StridedSlice", "Slice", "GatherV2",
                  "Prod", "Sum", "Range", "Tile", "Transpose"})
#: At most this many shapes are kept per value, each result of at most ``MAX_BYTES`` (a larger one
#: is computed on every run: keeping it would hold memory for a few microseconds saved).
MAX_SHAPES = 8
MAX_BYTES = 1 << 18
_HANDLES = (dtypes.resource, dtypes.variant)


class ShapeMemo:
    """The call of the step that stands for the nodes making one value decided by shapes.

    It has what ``run_kernel`` uses of a KernelCall: ``compute`` on the step's inputs (the
    values ``reads`` names), one output already of its declared dtype, nothing to forward.
    """

    single = True
    np_dtype = None         # each node's own run_kernel has checked its output
    forward_inputs = ()

    def __init__(self, steps, reads):
        self.steps = steps  # the nodes to run, in the plan's order; the last makes the value
        self.reads = reads  # the slots they read that no memoized node writes
        self.op_def = steps[-1].call.op_def
        self.device = steps[-1].call.device
        self.values = {}    # input shapes -> the value

    def compute(self, *inputs):
        key = tuple([x.shape for x in inputs])
        value = self.values.get(key)
        if value is None:
            value = self.evaluate(inputs)
            if type(value) is np.ndarray and value.nbytes <= MAX_BYTES and len(self.values) < MAX_SHAPES:
                value.flags.writeable = False
                self.values[key] = value
        return value

    def evaluate(self, inputs):
        """The value, by running the nodes on ``inputs`` (an error names the node that raised it)."""
        vals = dict(zip(self.reads, inputs))
        for s in self.steps:
            vals[s.out_slots[0]] = run_kernel(s.call, [vals[i] for i in s.in_slots], s.op)
        return vals[self.steps[-1].out_slots[0]]


def _decided(step, decided, fixed_slots):
    if step.multi or step.op.control_inputs or step.call.np_dtype is None:
        return False
    if step.op.type in READS_SHAPE:
        return len(step.in_slots) == 1 and step.op.attrs.get("T") not in _HANDLES
    return step.op.type in PURE and bool(step.in_slots) and \
        all(i in decided or i in fixed_slots for i in step.in_slots)


def find(steps, fixed_slots, keep):
    """For ``steps`` (a plan's untraced steps, in order; ``fixed_slots`` hold constants, ``keep``
    the fetched values): ``(memos, decided)``, the ShapeMemo per step whose value a step not
    decided by shapes reads or the caller fetches, and the set of steps decided by shapes."""
    decided = {}                                         # slot -> the step that writes it
    for s in steps:
        if _decided(s, decided, fixed_slots):
            decided[s.out_slots[0]] = s
    steps_decided = set(decided.values())
    read_elsewhere = set(keep)
    for s in steps:
        if s not in steps_decided:
            read_elsewhere.update(s.in_slots)
    position = {s: i for i, s in enumerate(steps)}
    memos = {}
    for slot, s in decided.items():
        if slot not in read_elsewhere:
            continue
        needed, todo = {slot}, [slot]
        while todo:
            for i in decided[todo.pop()].in_slots:
                if i in decided and i not in needed:
                    needed.add(i)
                    todo.append(i)
        chain = sorted((decided[i] for i in needed), key=position.__getitem__)
        reads = tuple(dict.fromkeys(i for d in chain for i in d.in_slots if i not in decided))
        memos[s] = ShapeMemo(chain, reads)
    return memos, steps_decided
