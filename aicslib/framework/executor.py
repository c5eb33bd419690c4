"""Running a Session's plan: the step list, its value slots, and the loop over it
(TF's core/common_runtime/executor.cc, for graphs without control flow).

A :class:`Plan` is the planner's order turned into steps: per node its
KernelCall, the slots its inputs are read from and its outputs written to, and
the slots to clear after it (the planner's ``free_after``). A step that is the
last reader of a value another step made may let its kernel write its output
into that value's buffer, if the kernel offers to (``forward_inputs``) and nothing
else holds the array (TF's ``forward_input_or_allocate_output``): ``relu(x @ w + b)``
then updates the product in place, as hand-written NumPy would. Nodes whose values only
shapes decide (a mean's ``1/n`` from the batch's shape) run once per shape in an untraced
run (``shape_memo.py``). Every step runs
through one step function, ``execute.run_kernel`` (the execution contract),
or, when the run is traced or logged, a :class:`Tracer` wrapped around it; the
same plan runs on one thread (:func:`run_sequential`) or, when its nodes sit on
several devices, on one thread per device (``parallel_executor.py``).
"""
import itertools
import operator
import sys
import threading
import time

import numpy as np

from . import logging as _log, parallel_executor, shape_memo
from .execute import describe_value, run_kernel
from .node_def_util import summarize_node_def
from .planner import last_uses
from .run_metadata import NodeExecStats


class Step:
    """One node of a plan: its KernelCall and where its values live."""

    __slots__ = ("op", "call", "in_slots", "out_slots", "multi")

    def __init__(self, op, call, in_slots, out_slots):
        self.op = op
        self.call = call
        self.in_slots = in_slots
        self.out_slots = out_slots
        self.multi = len(out_slots) != 1

    @property
    def device(self):
        return self.call.device


class Plan:
    """The steps of one (fetches, feeds) signature, in the planner's order."""

    def __init__(self, steps, num_slots, feed_slots, fetch_slots, free_after, memoize_shapes=True):
        self.steps = steps
        self.num_slots = num_slots
        self.feed_slots = feed_slots      # list of (tensor, slot)
        self.fetch_slots = fetch_slots    # per fetch element: slot or None (an op)
        self.free_after = free_after      # per step: slots to clear once it has run, or None
        self.keep = {s for s in fetch_slots if s is not None}
        self.uses = {}                    # slot -> how many steps read it (threads count down)
        for s in steps:
            for slot in s.in_slots:
                self.uses[slot] = self.uses.get(slot, 0) + 1
        # Nodes whose output is the same object on every run (a Const's array, a VarHandleOp's
        # variable in this session's resources): an untraced run takes their values from a
        # template filled by running them once, and loops over the other steps only (TF's
        # VarHandleOp kernel likewise makes its handle once and hands it out on every run).
        fixed = [i for i, s in enumerate(steps) if s.op.type in FIXED_VALUE_OPS and not s.in_slots
                 and not s.op.control_inputs and not s.multi]
        self.fixed_steps = [steps[i] for i in fixed]
        fixed = set(fixed)
        made = {slot for i, s in enumerate(steps) if i not in fixed for slot in s.out_slots}
        self.loop = [_loop_entry(s, free, made) for s, free in zip(steps, free_after)]
        # Nodes decided by shapes alone run once per shape (shape_memo.py); only for the library's
        # planner, so another planner's plan runs as that planner made it.
        varying = [s for i, s in enumerate(steps) if i not in fixed]
        memos, decided = shape_memo.find(varying, {steps[i].out_slots[0] for i in fixed}, self.keep) \
            if memoize_shapes else ({}, ())
        if memos:
            # Steps dropped, so each value's last reader is found again, by the planner's rule.
            varying = [Step(s.op, memos[s], memos[s].reads, s.out_slots) if s in memos else s
                       for s in varying if s in memos or s not in decided]
            frees = last_uses(varying, self.keep, _IN_SLOTS, _OUT_SLOTS)
            self.varying_loop = [_loop_entry(s, tuple(free) or None, made) for s, free in zip(varying, frees)]
        else:
            self.varying_loop = [entry for i, entry in enumerate(self.loop) if i not in fixed]
        self._template = None

    def template(self, step):
        """A fresh value list with the fixed nodes' values in their slots (run once, on first use)."""
        if self._template is None:
            vals = [None] * self.num_slots
            for s in self.fixed_steps:
                vals[s.out_slots[0]] = step(s.call, (), s.op)
            self._template = vals
        return self._template.copy()

    @property
    def ops(self):
        return [s.op for s in self.steps]


_IN_SLOTS, _OUT_SLOTS = operator.attrgetter("in_slots"), operator.attrgetter("out_slots")


def _loop_entry(step, free, made):
    """What the loop needs of a step, unpacked once when planning rather than on every run."""
    out = step.out_slots if step.multi else step.out_slots[0]
    return step.call, step.op, _gather(step.in_slots), out, step.multi, free, _forwarding(step, free, made)


def _gather(slots):
    """``vals -> the step's input values`` in one C call (a list comprehension costs a frame)."""
    if len(slots) == 1:
        return operator.itemgetter(slice(slots[0], slots[0] + 1))
    if not slots:
        return operator.itemgetter(slice(0, 0))
    return operator.itemgetter(*slots)


def _forwarding(step, free, made):
    """The (input position, slot) pairs whose buffer ``step``'s kernel may be given as its output:
    inputs it offers to forward, read by no later step and by no other input of this one, whose
    value a step of this plan made (not a feed, not a constant). None when there are none."""
    slots = step.in_slots
    pairs = tuple((p, slots[p]) for p in step.call.forward_inputs
                  if p < len(slots) and slots[p] in (free or ()) and slots[p] in made and slots.count(slots[p]) == 1)
    return pairs or None


def forwardable_input(vals, args, candidates):
    """The first candidate input (``_forwarding``) whose array the step's ``args`` alone hold, or None.

    Its slot is cleared first (this step is its last reader). Then any other holder, a view
    of it, a fetched, fed or stored value, an EagerTensor, shows in its reference count.
    """
    for _, slot in candidates:
        vals[slot] = None
    for pos, _ in candidates:
        x = args[pos]
        # The references: ``args``, ``x`` and getrefcount's argument.
        if type(x) is np.ndarray and sys.getrefcount(x) == 3 and x.flags.writeable and x.flags.owndata:
            return x
    return None


#: Ops without inputs whose kernel returns the same object on every run of a session's plan.
FIXED_VALUE_OPS = frozenset({"Const", "VarHandleOp"})


def run_plan(plan, feeds, step=run_kernel):
    """Runs ``plan`` with ``feeds`` ({tensor: array}); the fetched values, in fetch order.

    An untraced run on one thread skips the plan's fixed-value nodes (``Plan.template``); a
    traced or logged one (``step``, a Tracer) and one on several devices run every node.
    """
    parallel = parallel_executor.applies(plan)
    fast = step is run_kernel and not parallel
    vals = plan.template(step) if fast else [None] * plan.num_slots
    for t, slot in plan.feed_slots:
        vals[slot] = feeds[t]
    if parallel:
        parallel_executor.run(plan, vals, step)
    else:
        run_sequential(plan, vals, step, plan.varying_loop if fast else plan.loop)
    return [None if slot is None else vals[slot] for slot in plan.fetch_slots]


def run_sequential(plan, vals, step=run_kernel, loop=None):
    """The plan's steps (``loop``: all of ``plan.loop`` by default) in order on this thread,
    each value cleared after its last use."""
    for call, op, gather, out, multi, free, forward in plan.loop if loop is None else loop:
        if forward is None:
            r = step(call, gather(vals), op)
        else:
            r = v = None  # this loop's references to the last step's results: one may be an input here
            args = gather(vals)
            r = step(call, args, op, forwardable_input(vals, args, forward))
        if multi:
            for s, v in zip(out, r):
                vals[s] = v
        else:
            vals[out] = r
        if free:
            for s in free:
                vals[s] = None


_STEP_IDS = itertools.count(1)  # "step N" in the VLOG 3 lines, as TF's executor numbers its steps


class Tracer:
    """The step function of a traced or logged run: ``run_kernel``, timed and reported.

    ``RunOptions(trace_level=...)`` fills ``run_metadata``'s step stats (one
    NodeExecStats per node run, on its device, with the executor thread that ran
    it); VLOG level 3 logs each node as TF's executor does (``Process node: ...``)
    and each kernel with its inputs, outputs and time.
    """

    def __init__(self, ops, run_metadata, verbose):
        self.node_ids = {op: i for i, op in enumerate(ops)}
        self.run_metadata = run_metadata
        self.verbose = verbose
        self.step_id = next(_STEP_IDS)
        self.t0 = time.perf_counter()
        self.records = []

    def __call__(self, call, args, node, out=None):
        node_id = self.node_ids[node]
        if self.verbose:  # TF's executor.cc line (its VLOG(1)); the node as SummarizeNodeDef prints it
            _log.vlog(3, f"Process node: {node_id} step {self.step_id} "
                         f"{summarize_node_def(node.name, node.type, node.attrs, _input_names(node))}"
                         f" device: {call.device}")
        start = time.perf_counter()
        r = run_kernel(call, args, node, out)
        end = time.perf_counter()
        outs = (r,) if call.single else r
        if self.verbose:
            _log.vlog(3, f"Executing kernel {node.type} for node '{node.name}' on {call.device}: "
                         f"inputs [{', '.join(describe_value(a) for a in args)}] -> "
                         f"[{', '.join(describe_value(v) for v in outs)}] in "
                         f"{(end - start) * 1e6:.1f}us")
        if self.run_metadata is not None:
            self.records.append((start, end, threading.get_ident(), node, call.device,
                                 [tuple(np.shape(v)) for v in outs]))
        return r

    def finish(self):
        """Hands the recorded node stats to ``run_metadata``, by start time, threads numbered
        in the order they started their first node."""
        if self.run_metadata is None:
            return
        threads = {}
        for start, end, tid, node, device, shapes in sorted(self.records, key=lambda r: r[0]):
            ns = NodeExecStats(node.name, node.type, device, int((start - self.t0) * 1e6),
                               max(1, int((end - start) * 1e6)), shapes)
            ns.timeline_label = f"{node.name} = {node.type}({', '.join(t.name.split(':')[0] for t in node.inputs)})"
            ns.thread_id = threads.setdefault(tid, len(threads))
            self.run_metadata.step_stats.for_device(device).node_stats.append(ns)
        self.records = []


def _input_names(op):
    """A node's inputs as a NodeDef lists them: "x:1", then "^y" for each control input."""
    return [getattr(t, "name", str(t)) for t in op.inputs] + [f"^{c.name}" for c in op.control_inputs]
