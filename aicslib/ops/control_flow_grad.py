"""Gradients of graph control flow (TF's python/ops/control_flow_grad.py and the while-loop
half of control_flow_state.py).

**cond.** The gradient of a ``Merge`` is a ``Switch`` on the same predicate
(the gradient goes back into the branch that ran); the gradient of a
``Switch`` is a ``Merge`` of its two outputs' gradients (the untaken one is
dead, so the Merge forwards the live one).

**while_loop.** A loop is differentiated as a whole (``gradients`` calls
:func:`gradients_through_loops` when the graph has loops): for a loop run
``n`` times, ``v_{t+1} = body(v_t)``, the gradient is another loop, run ``n``
times backwards, ``dv_t = J_body(v_t)^T dv_{t+1}``, whose body is the gradient
of the forward body. The forward values that body needs (``v_t`` and every
intermediate) are saved as TF saves them: each is pushed on a stack in every
forward iteration and popped, last in first out, in the backward iteration
that needs it. A counter added to the forward loop gives ``n``. Gradients of
the loop-invariant tensors the body reads are summed over the iterations.

**Nested loops.** The backward body of an outer loop differentiates the outer
body with its inner loops again as single nodes, so each outer backward
iteration runs the inner loop's backward loop. An inner loop's stacks are
created in the outer loop's body (a fresh stack per outer iteration), and each
stack's handle is itself pushed on a stack of the outer loop and popped by the
outer backward iteration that needs it, as TF's GradLoopState does.
"""
import contextlib
import threading

from ..framework import dtypes
from ..framework.gradient_registry import RegisterGradient, no_gradient
from ..framework.ops import name_scope
from . import control_flow_ops as cf
from .stack_ops import stack_pop_v2, stack_push_v2, stack_v2

no_gradient("LoopCond")
no_gradient("StackV2")
no_gradient("StackPushV2")
no_gradient("StackPopV2")


@RegisterGradient("Switch")
def _switch_grad(op, grad_false, grad_true):
    # The gradient of the untaken side is zeros_like(dead output): dead, so Merge picks the other.
    ctx = cf.context_of(op)
    if op.inputs[0].dtype == dtypes.resource and isinstance(ctx, cf.CondContext):
        # A variable read in a branch: only that side has a (float) gradient; the other side's
        # is zeros, switched on the same predicate so that exactly one of the two is alive.
        from .array_ops import zeros
        g = (grad_false, grad_true)[ctx.branch]
        dtype, shape = _variable_of(op.inputs[0])
        other = cf.switch(zeros(shape, dtype=dtype), ctx.pred)[1 - ctx.branch]
        return cf.merge([g, other], name="cond_resource_grad")[0], None
    return cf.merge([grad_false, grad_true], name="cond_grad")[0], None


@RegisterGradient("Merge")
def _merge_grad(op, grad, _):
    pred = cf.cond_pred(op)
    if pred is None:
        raise LookupError(f"No gradient for Merge '{op.name}': it is not the output of an aics.cond "
                          f"(a while loop's Merge is differentiated with its whole loop).")
    grad_false, grad_true = cf.switch(grad, pred)
    return [grad_false, grad_true]


@RegisterGradient("Enter")
def _enter_grad(op, grad):
    return grad


@RegisterGradient("Exit")
def _exit_grad(op, grad):
    return grad


@RegisterGradient("NextIteration")
def _next_iteration_grad(op, grad):
    return grad


def _variable_of(handle):
    """(dtype, shape) of the variable behind a resource handle routed through Enter/Switch."""
    t = handle
    while getattr(t, "handle_data", None) is None and t.op.type in ("Enter", "Switch", "Identity"):
        t = t.op.inputs[0]
    hd = getattr(t, "handle_data", None)
    if hd is None:
        raise LookupError(f"No gradient for resource '{handle.name}' in a cond: its variable is unknown.")
    return hd


# ---------------------------------------------------------------------------
# while_loop gradients

_state = threading.local()


@contextlib.contextmanager
def _loop_gradient_in_progress():
    old = getattr(_state, "active", False)
    _state.active = True
    try:
        yield
    finally:
        _state.active = old


def needs_loop_gradient(graph):
    """True when ``gradients`` must treat while loops as whole nodes (and is not doing so already)."""
    return bool(cf.loops_of(graph)) and not getattr(_state, "active", False)


def _differentiable(t):
    return t.dtype.is_floating or t.dtype == dtypes.resource


def _add(acc, t, g):
    if g is not None:
        acc.setdefault(t, []).append(g)


def _total(acc, t):
    from .gradients_util import aggregate
    return aggregate(acc.get(t, []))


def gradients_through_loops(ys, xs, grad_ys, name, stops):
    """``gradients`` for a graph with while loops: loops, latest first, as single nodes."""
    with _loop_gradient_in_progress():
        return _gradients_around_loops(ys, xs, grad_ys, name, stops, region=None)


def _gradients_around_loops(ys, xs, grad_ys, name, stops, region):
    """Gradients of ``ys`` over ``xs`` where the while loops directly inside ``region`` (a forward
    WhileContext whose body is being differentiated, or None for the top level) are single nodes:
    plain gradients up to their Exits, then each loop's backward loop, then on from its inputs.
    A loop nested in ``region`` is reached here from the backward body of ``region``, so its
    backward loop is built inside that body (one inner backward loop per outer iteration, as TF)."""
    from .gradients_impl import gradients
    graph = ys[0].graph
    loops = [lp for lp in cf.loops_of(graph) if cf.tensor_in_loop(lp.exits[0]) is region]
    enter_outs = [e for lp in loops for e in lp.enters] + \
        [e for lp in loops for e in lp.constant_enters.values()]
    cut = list(stops) + enter_outs  # gradients do not flow into a loop except through this code
    exits = [x for lp in loops for x in lp.exits]
    targets = list(dict.fromkeys(list(xs) + exits))
    acc = {}
    for t, g in zip(targets, gradients(ys, targets, grad_ys, name=name, stop_gradients=cut)):
        _add(acc, t, g)
    for lp in reversed(loops):  # a loop built later can only be downstream of earlier ones
        d_exits = [_total(acc, x) for x in lp.exits]
        if all(g is None for g in d_exits):
            continue
        inputs, d_inputs = _loop_gradient(lp, d_exits, nested=region is not None)
        pairs = []
        for t, g in zip(inputs, d_inputs):
            if g is None:
                continue
            if t.dtype == dtypes.resource:  # a variable's handle: its gradient is the sum itself
                _add(acc, t, g)
            else:
                pairs.append((t, g))
        if not pairs:
            continue
        for t, g in zip(targets, gradients([t for t, _ in pairs], targets, [g for _, g in pairs],
                                           name=name, stop_gradients=cut)):
            _add(acc, t, g)
    return [_total(acc, x) for x in xs]


class GradWhileContext(cf.WhileContext):
    """The backward loop: a forward-loop value it reads is popped from a stack."""

    def __init__(self, name, parallel_iterations, back_prop, graph, forward):
        super().__init__(name, parallel_iterations, back_prop, graph)
        self.forward = forward
        self._popped = {}
        self._grad_conds = {}

    def add_value(self, t):
        fwd_ctx = cf.context_of(t.op)
        if isinstance(fwd_ctx, cf.CondContext):
            fwd_ctx = fwd_ctx.context_of_output(t)
        if cf.tensor_in_loop(t) is self.forward:
            hit = self._popped.get(t)
            if hit is None:
                hit = self._popped[t] = self._pop(t, fwd_ctx)
            return hit
        # Anything else (a value of an enclosing forward loop, or of the enclosing backward body)
        # comes through the outer context: an enclosing backward loop pops it from its own stack.
        return super().add_value(t)

    def _pop(self, t, fwd_ctx):
        """Pushes ``t`` in every forward iteration that computes it; pops it here."""
        graph = self.graph
        saved = graph.control_flow_context
        try:
            graph.control_flow_context = self.forward.outer_context
            from .array_ops import constant
            from ..framework.ops import control_dependencies
            with control_dependencies(None), name_scope(None):
                with name_scope(self.forward.name.rsplit("/", 1)[0] + "/"):
                    handle = stack_v2(constant(-1, dtype=dtypes.int32, name="max_size"), t.dtype,
                                      stack_name=t.op.name, name="f_acc")
            graph.control_flow_context = fwd_ctx
            with control_dependencies(None):
                stack_push_v2(handle, t, name="StackPush")
            graph.control_flow_context = self._grad_cond_for(fwd_ctx)
            popped = stack_pop_v2(handle, t.dtype, name="StackPop")
            popped.set_shape(t.shape)
        finally:
            graph.control_flow_context = saved
        return popped

    def _grad_cond_for(self, fwd_ctx):
        """The backward context that runs exactly when ``fwd_ctx`` ran forward (a cond branch
        inside the loop becomes a cond on the same, popped, predicate)."""
        if fwd_ctx is self.forward or fwd_ctx is None or not isinstance(fwd_ctx, cf.CondContext):
            return self
        hit = self._grad_conds.get(fwd_ctx)
        if hit is not None:
            return hit
        outer = self._grad_cond_for(fwd_ctx.outer_context)
        graph = self.graph
        saved = graph.control_flow_context
        graph.control_flow_context = outer
        try:
            pred = outer.add_value(fwd_ctx.pred) if outer is not self else self.add_value(fwd_ctx.pred)
            from .array_ops import identity
            sw = cf.switch(pred, pred)
            pivot = identity(sw[fwd_ctx.branch], name="switch_t" if fwd_ctx.branch else "switch_f")
            ctx = cf.CondContext(pred, pivot, fwd_ctx.branch, graph)
        finally:
            graph.control_flow_context = saved
        self._grad_conds[fwd_ctx] = ctx
        return ctx


def _loop_gradient(lp, d_exits, nested=False):
    """Builds the backward loop of ``lp``; returns (loop inputs, their gradients).

    A top-level loop's backward loop is built beside it (in its outer context); a loop nested in
    another one (``nested``) is differentiated inside the backward body of the outer loop, so its
    backward loop is built in the current context, once per outer iteration. The stacks of a nested
    loop are created in the outer loop's body (a fresh one per outer iteration), and their handles
    are themselves pushed on the outer loop's stacks: TF's design (GradLoopState)."""
    from .array_ops import zeros, zeros_like
    from .math_ops import add, greater, subtract
    graph = lp.exits[0].graph
    var_idx = [k for k, m in enumerate(lp.merges) if _differentiable(m) and m.dtype != dtypes.resource]
    # Loop invariants: floats, and variables (a resource handle whose variable is known); not the
    # handles of the stacks an earlier gradient of this loop added.
    consts = [(ext, e) for ext, e in lp.constant_enters.items()
              if e.dtype.is_floating or (e.dtype == dtypes.resource and getattr(ext, "handle_data", None))]
    count = cf.add_forward_counter(lp)
    init = [count]
    for k in var_idx:
        g = d_exits[k]
        init.append(g if g is not None else zeros_like(lp.exits[k]))
    for ext, _ in consts:
        if ext.dtype == dtypes.resource:
            hd = ext.handle_data
            init.append(zeros(hd[1], dtype=hd[0]))
        else:
            init.append(zeros_like(ext))
    invariants = [count.shape] + [lp.merges[k].shape for k in var_idx] + [v.shape for v in init[1 + len(var_idx):]]
    body_outs = [lp.body_outputs[k] for k in var_idx]
    body_ins = [lp.identities[k] for k in var_idx]
    const_ins = [e for _, e in consts]
    stops = list(lp.merges) + [lp.pivot]

    def bwd_cond(i, *_):
        return greater(i, 0)

    def bwd_body(i, *rest):
        dvs = list(rest[:len(var_idx)])
        dcs = list(rest[len(var_idx):])
        diff = [(y, g) for y, g in zip(body_outs, dvs) if y.dtype.is_floating]
        grads = _gradients_around_loops([y for y, _ in diff], body_ins + const_ins, [g for _, g in diff],
                                        "gradients", stops, region=lp) if diff \
            else [None] * (len(body_ins) + len(const_ins))
        new_dvs = [g if g is not None else zeros_like(dv) for g, dv in zip(grads[:len(var_idx)], dvs)]
        new_dcs = [dc if g is None else add(dc, g) for g, dc in zip(grads[len(var_idx):], dcs)]
        return [subtract(i, 1)] + new_dvs + new_dcs

    def factory(name, parallel_iterations, back_prop, g):
        return GradWhileContext(name, parallel_iterations, back_prop, g, lp)

    saved = graph.control_flow_context
    if not nested:
        graph.control_flow_context = lp.outer_context
    try:
        with name_scope(lp.name.rsplit("/", 1)[0] + "_grad"):
            outs = cf.build_while_loop(bwd_cond, bwd_body, init, shape_invariants=invariants,
                                       parallel_iterations=lp.parallel_iterations, name="while",
                                       return_same_structure=True, context_factory=factory)
    finally:
        graph.control_flow_context = saved
    outs = list(outs)
    inputs, d_inputs = [], []
    for pos, k in enumerate(var_idx):
        inputs.append(lp.enters[k].op.inputs[0])
        d_inputs.append(outs[1 + pos])
    for pos, (ext, e) in enumerate(consts):
        inputs.append(e.op.inputs[0])
        d_inputs.append(outs[1 + len(var_idx) + pos])
    return inputs, d_inputs


__all__ = ["gradients_through_loops", "needs_loop_gradient", "GradWhileContext"]

# These ops run only in graphs under the control-flow executor; their gradients are checked
# against numerical gradients of whole conds and loops in tests/ops/test_control_flow.py.
GRADIENT_CHECK_RECIPES = {"Switch": None, "Merge": None, "Enter": None, "Exit": None, "NextIteration": None}
