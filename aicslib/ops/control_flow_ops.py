"""Graph control flow: ``cond``, ``case``, ``while_loop`` (TF's python/ops/control_flow_ops.py,
cond.py, while_loop.py; op definitions from core/ops/control_flow_ops.cc).

In a graph these are built, as in TF1, from five dataflow primitives whose
kernels only route values (``aicslib/kernels/control_flow_ops.py``); the
Session's control-flow executor (``framework/control_flow_executor.py``) gives
them their meaning with *dead* tensors and *frames*:

* ``Switch(data, pred)`` forwards ``data`` to output 1 (true) or 0 (false);
  the other output is dead, and everything computed from a dead tensor is dead.
* ``Merge(inputs)`` forwards whichever input is alive (and its index).
* ``Enter(data, frame_name)`` moves a value into a loop's frame (iteration 0;
  ``is_constant`` Enters feed every iteration); ``Exit`` moves it back out.
* ``NextIteration`` feeds a value to the next iteration of its frame.
* ``LoopCond`` marks the loop predicate (the pivot of the loop's Switches).

``while_loop`` builds, per loop variable::

    Enter -> Merge -> Switch(pred) --true--> Identity -> body -> NextIteration --+
               ^                  \\--false--> Exit                               |
               +-------------------------------------------------------------------+

Ops created while a branch or a body is built go through their *context*
(``CondContext`` / ``WhileContext``, installed on the graph like TF's control
flow context): an input from outside is routed through a ``Switch`` (cond) or
a constant ``Enter`` (loop), and an op without inputs gets a control edge from
the context's pivot, so it runs only when its branch or iteration does.

Executing eagerly, ``cond``/``case``/``while_loop`` simply run Python.
"""
import weakref

from ..framework import context, dtypes
from ..framework.common_shapes import unchanged_shape
from ..framework.execute import apply_op
from ..framework.nest import flatten, pack_sequence_as
from ..framework.op_def import register_op
from ..framework.ops import Operation, control_dependencies, convert_to_tensor, get_default_graph, \
    name_scope
from ..framework.tensor_shape import TensorShape, as_shape


def _merge_shape(ctx):
    shapes = [ctx.input_shape(i) for i in range(ctx.num_inputs)]
    out = shapes[0]
    for s in shapes[1:]:
        if out.rank is None or s.rank is None or out.rank != s.rank:
            return [TensorShape(None), TensorShape([])]
        out = TensorShape([a if a == b else None for a, b in zip(out.dims, s.dims)])
    return [out, TensorShape([])]


register_op("Switch").input("data: T").input("pred: bool").output("output_false: T") \
    .output("output_true: T").attr("T: type") \
    .set_shape_fn(lambda ctx: [ctx.input_shape(0), ctx.input_shape(0)])
register_op("Merge").input("inputs: N * T").output("output: T").output("value_index: int32") \
    .attr("T: type").attr("N: int >= 1").set_shape_fn(_merge_shape)
register_op("Enter").input("data: T").output("output: T").attr("T: type").attr("frame_name: string") \
    .attr("is_constant: bool = false").attr("parallel_iterations: int = 10").set_shape_fn(unchanged_shape)
register_op("Exit").input("data: T").output("output: T").attr("T: type").set_shape_fn(unchanged_shape)
register_op("NextIteration").input("data: T").output("output: T").attr("T: type") \
    .set_shape_fn(unchanged_shape)
register_op("LoopCond").input("input: bool").output("output: bool") \
    .set_shape_fn(lambda ctx: TensorShape([]))

CONTROL_FLOW_OP_TYPES = frozenset(("Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"))


# ---------------------------------------------------------------------------
# Raw op wrappers (TF's control_flow_ops.switch/merge/_Enter/exit/_NextIteration).

def switch(data, pred, name=None):
    """``(output_false, output_true)``: ``data`` on the side ``pred`` selects, dead on the other."""
    out = apply_op("Switch", [data, pred], name=name or "Switch")
    return tuple(out)


def merge(inputs, name=None):
    """``(output, value_index)``: the one input that is alive."""
    return tuple(apply_op("Merge", [list(inputs)], name=name or "Merge"))


def enter(data, frame_name, is_constant=False, parallel_iterations=10, name=None):
    return apply_op("Enter", [data], {"frame_name": frame_name, "is_constant": is_constant,
                                      "parallel_iterations": parallel_iterations}, name=name or "Enter")


def exit(data, name=None):
    return apply_op("Exit", [data], name=name or "Exit")


def next_iteration(data, name=None):
    return apply_op("NextIteration", [data], name=name or "NextIteration")


def loop_cond(pred, name=None):
    return apply_op("LoopCond", [pred], name=name or "LoopCond")


# ---------------------------------------------------------------------------
# Contexts: which cond branch / loop an op was built in.

_op_context = weakref.WeakKeyDictionary()   # Operation -> the context it was built in
_merge_pred = weakref.WeakKeyDictionary()   # cond Merge -> its predicate (for its gradient)
_loops = weakref.WeakKeyDictionary()        # Graph -> [WhileContext]


def context_of(op):
    """The CondContext/WhileContext ``op`` was built in, or None (the top level)."""
    return _op_context.get(op)


def _is_inside(ctx, target):
    while ctx is not None:
        if ctx is target:
            return True
        ctx = ctx.outer_context
    return False


class ControlFlowContext:
    """Base of CondContext and WhileContext: entering installs it on the graph."""

    def __init__(self, graph):
        self.graph = graph
        self.outer_context = graph.control_flow_context
        self._external = {}  # external Tensor -> its value inside this context

    def enter(self):
        self._saved = self.graph.control_flow_context
        self.graph.control_flow_context = self

    def exit(self):
        self.graph.control_flow_context = self._saved

    def contains(self, tensor):
        return _is_inside(_op_context.get(tensor.op), self)

    def _in_outer(self, fn):
        """Creates ops in the outer context (for this context's own plumbing)."""
        saved = self.graph.control_flow_context
        self.graph.control_flow_context = self.outer_context
        try:
            with control_dependencies(None):
                return fn()
        finally:
            self.graph.control_flow_context = saved

    def add_op(self, op):
        """Called by the graph for every op created while this context is current."""
        _op_context[op] = self
        for i, t in enumerate(op.inputs):
            if not self.contains(t):
                inner = self.add_value(t)
                if inner is not t:
                    op.update_input(i, inner)
        if self._needs_pivot(op):
            pivot = self.pivot_op()
            if pivot is not None and pivot is not op:
                op.add_control_input(pivot)

    def _needs_pivot(self, op):
        return not op.inputs and not op.control_inputs


class CondContext(ControlFlowContext):
    """One branch of a cond: ``pred`` decides, ``pivot`` is alive only when this branch runs."""

    def __init__(self, pred, pivot, branch, graph):
        super().__init__(graph)
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self.sibling = None  # the other branch's context

    def context_of_output(self, t):
        """A Switch this branch made has one output per branch: the other one is the sibling's."""
        if t.op.type == "Switch" and t.value_index != self.branch and self.sibling is not None:
            return self.sibling
        return self

    def pivot_op(self):
        return self.pivot.op

    def add_value(self, t):
        if self.contains(t):
            return t
        hit = self._external.get(t)
        if hit is not None:
            return hit
        outer = t
        if self.outer_context is not None:
            outer = self.outer_context.add_value(t)

        def make():
            sw = switch(outer, self.pred)
            _op_context[sw[0].op] = self  # the Switch's outputs are this branch's values
            return sw[self.branch]
        inner = self._in_outer(make)
        self._external[t] = inner
        return inner


class WhileContext(ControlFlowContext):
    """A while loop being built: its frame name, pivots and the parts of each loop variable."""

    def __init__(self, name, parallel_iterations, back_prop, graph):
        super().__init__(graph)
        self.name = name
        self.frame_name = name
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.pivot_for_pred = None
        self.pivot_for_body = None
        self.pivot = None
        self.enters, self.merges, self.switches, self.identities = [], [], [], []
        self.body_outputs, self.next_iterations, self.exits = [], [], []
        self.constant_enters = {}  # external tensor -> its constant Enter's output

    def pivot_op(self):
        p = self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred
        return None if p is None else p.op

    def add_value(self, t):
        if self.contains(t):
            return t
        hit = self.constant_enters.get(t)
        if hit is not None:
            return hit
        outer = t
        if self.outer_context is not None:
            outer = self.outer_context.add_value(t)

        def make():
            e = enter(outer, self.frame_name, is_constant=True,
                      parallel_iterations=self.parallel_iterations, name="Enter")
            _op_context[e.op] = self
            return e
        inner = self._in_outer(make)
        self.constant_enters[t] = inner
        return inner

    def _needs_pivot(self, op):
        # As TF's _MaybeAddControlDependency: an op fed only by loop invariants would
        # otherwise run once more after the loop ends; tie it to the iteration.
        if op.control_inputs:
            return False
        return all(t.op.type == "Enter" and t.op.get_attr("is_constant") for t in op.inputs)


def _after_side_effects(ctx, body_ops, outs):
    """The body's results, made to wait for its stateful ops (assignments, prints, reads).

    Without this, iteration i + 1 could read a variable before iteration i's assign_sub ran:
    its reads need only the loop's pivot, which the previous iteration's results release. TF2
    runs a loop body as a function whose outputs wait for its side effects; this is that rule,
    for loops traced by tf.function (a TF1 graph's while_loop runs only what its results need,
    as in TF1). Ops inside a cond in the body are left out: a branch not taken would make the
    loop dead.
    """
    effects = [op for op in body_ops if _op_context.get(op) is ctx and op.op_def.is_stateful
               and op.type not in CONTROL_FLOW_OP_TYPES]
    if not effects:
        return outs
    from .array_ops import identity
    with control_dependencies(effects):
        return [identity(r) for r in outs]


def loops_of(graph):
    """The while loops built in ``graph`` (for the gradient and the executor)."""
    return list(_loops.get(graph, []))


# ---------------------------------------------------------------------------
# cond / case

def _as_list_result(res, what):
    if res is None:
        raise ValueError(f"{what} must return a value (a tensor or a structure of tensors), got None.")
    return res


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """``true_fn()`` if ``pred`` else ``false_fn()`` (TF's tf.cond).

    Executing eagerly, calls one of the functions. In a graph, builds both
    branches and joins them with Merge ops: only the taken branch runs.
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if true_fn is None or not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if false_fn is None or not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if context.executing_eagerly():
        p = pred.numpy() if hasattr(pred, "numpy") else pred
        return true_fn() if bool(p) else false_fn()
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    with name_scope(name, "cond"):
        pred = convert_to_tensor(pred)
        if pred.dtype != dtypes.bool:
            raise TypeError(f"pred must be a bool tensor, got '{pred.name}' of dtype {pred.dtype.name}.")
        if pred.shape.rank not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {pred.shape.rank} for pred '{pred.name}' "
                             f"of cond.")
        graph = get_default_graph()
        p_2, p_1 = switch(pred, pred)
        from .array_ops import identity
        pivot_1 = identity(p_1, name="switch_t")
        pivot_2 = identity(p_2, name="switch_f")
        pred_id = identity(pred, name="pred_id")
        results = []
        ctx_t = CondContext(pred_id, pivot_1, 1, graph)
        ctx_f = CondContext(pred_id, pivot_2, 0, graph)
        ctx_t.sibling, ctx_f.sibling = ctx_f, ctx_t
        for branch, fn, pivot, ctx in ((1, true_fn, pivot_1, ctx_t), (0, false_fn, pivot_2, ctx_f)):
            _op_context[pivot.op] = ctx
            ctx.enter()
            try:
                res = _as_list_result(fn(), "true_fn" if branch else "false_fn")
                flat = [_branch_output(ctx, v) for v in flatten(res)]
            finally:
                ctx.exit()
            results.append((res, flat))
        (res_t, flat_t), (res_f, flat_f) = results
        if len(flat_t) != len(flat_f):
            raise ValueError(f"true_fn and false_fn must return the same number of results: "
                             f"{len(flat_t)} vs {len(flat_f)}.")
        merged = []
        for t, f in zip(flat_t, flat_f):
            if isinstance(t, Operation) or isinstance(f, Operation):
                merged.append(_merge_ops(t, f))
                continue
            if t.dtype != f.dtype:
                raise ValueError(f"Outputs of true_fn and false_fn must have the same type: "
                                 f"{t.dtype.name}, {f.dtype.name}")
            m = merge([f, t])[0]
            _merge_pred[m.op] = pred_id
            merged.append(m)
        if not strict and isinstance(res_t, (list, tuple)) and len(flat_t) == 1 and \
                not isinstance(res_t, dict) and len(res_t) == 1:
            return merged[0]
        return pack_sequence_as(res_t, merged)


def _branch_output(ctx, v):
    """A branch result as a tensor of the branch (an external tensor goes through a Switch)."""
    if isinstance(v, Operation):
        from .array_ops import identity
        with control_dependencies([v]):
            return identity(ctx.pivot).op
    v = convert_to_tensor(v)
    if not ctx.contains(v):
        v = ctx.add_value(v)
    return v


def _merge_ops(t, f):
    from .array_ops import group
    return group(t, f)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first true predicate, else ``default`` (TF's tf.case, as nested conds)."""
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    for p in pairs:
        if not isinstance(p, tuple) or len(p) != 2:
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {p!r}.")
        if not callable(p[1]):
            raise TypeError(f"fn for pred {p[0]!r} must be callable.")
    if default is None:
        if not pairs:
            raise ValueError("case needs at least one (pred, fn) pair or a default.")
        *pairs, (_, default) = pairs  # TF: the last fn is the default when none is given
    if context.executing_eagerly():
        for p, fn in pairs:
            if bool(p.numpy() if hasattr(p, "numpy") else p):
                return fn()
        return default()
    with name_scope(name, "case"):
        fn = default
        for p, f in reversed(pairs):
            def fn(p=p, f=f, rest=fn):
                return cond(p, f, rest, strict=strict)
        return fn()


# ---------------------------------------------------------------------------
# while_loop

def _shape_less_or_equal(shape, invariant):
    if invariant.rank is None:
        return True
    if shape.rank != invariant.rank:
        return False
    return all(i is None or s == i for s, i in zip(shape.dims, invariant.dims))


def _relax_shape(tensor, shape):
    """Gives a loop tensor its (possibly less specific) shape invariant. A plain set_shape can
    only refine a shape; a loop variable that grows must be allowed to be less specific."""
    tensor.relax_shape(shape)


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """Repeats ``body`` while ``cond`` is true (TF's tf.while_loop).

    ``loop_vars`` is a tensor or a nested structure (list/tuple/dict/namedtuple)
    of tensors; ``cond`` and ``body`` take them as positional arguments and
    ``body`` returns the same structure. ``shape_invariants`` (same structure
    of TensorShapes) lets a variable change shape; ``maximum_iterations`` stops
    the loop after that many iterations. ``parallel_iterations`` and
    ``swap_memory`` are accepted (iterations run in order here).
    """
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    single = not isinstance(loop_vars, (list, tuple, dict))
    if isinstance(loop_vars, (list, tuple)) and len(loop_vars) == 0:
        raise ValueError("No loop variables provided")
    if context.executing_eagerly():
        return _eager_while(cond, body, loop_vars, maximum_iterations, single, return_same_structure)
    return build_while_loop(cond, body, loop_vars, shape_invariants, parallel_iterations, back_prop, name,
                            maximum_iterations, return_same_structure)


def build_while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
                     name=None, maximum_iterations=None, return_same_structure=False, context_factory=None):
    """Builds the graph of a while loop; ``context_factory`` makes its WhileContext (a gradient
    loop uses one that fetches forward values from stacks)."""
    single = not isinstance(loop_vars, (list, tuple, dict))
    with name_scope(name, "while") as scope:
        graph = get_default_graph()
        structure = loop_vars
        flat_vars = [convert_to_tensor(v) for v in flatten(loop_vars)]
        if shape_invariants is not None:
            invariants = [as_shape(s) for s in (flatten(shape_invariants) if not single else [shape_invariants])]
            if len(invariants) != len(flat_vars):
                raise ValueError(f"shape_invariants has {len(invariants)} shapes for {len(flat_vars)} "
                                 f"loop variables.")
        else:
            invariants = [v.shape for v in flat_vars]
        for v, inv in zip(flat_vars, invariants):
            if not _shape_less_or_equal(v.shape, inv):
                raise ValueError(f"The shape invariant specified for {v.name} is not compatible with the "
                                 f"initial shape of the loop variable. It enters the loop with shape "
                                 f"{v.shape}, but the specified shape invariant is {inv}.")
        counter = None
        if maximum_iterations is not None:
            counter = convert_to_tensor(0)
            max_iter = convert_to_tensor(maximum_iterations)
            if max_iter.dtype != dtypes.int32:
                from .math_ops import cast
                max_iter = cast(max_iter, dtypes.int32)
            flat_vars = [counter] + flat_vars
            invariants = [TensorShape([])] + invariants
        ctx = (context_factory or WhileContext)(
            scope.rstrip("/") + "/while_context" if scope else "while/while_context",
            parallel_iterations, back_prop, graph)
        ctx.frame_name = ctx.name
        ctx.enter()
        try:
            def make_enters():
                return [enter(v, ctx.frame_name, False, parallel_iterations, name="Enter") for v in flat_vars]
            enters = ctx._in_outer(make_enters)
            for e, inv in zip(enters, invariants):
                _op_context[e.op] = ctx
                _relax_shape(e, inv)
            merges = []
            for e, inv in zip(enters, invariants):
                m = merge([e, e], name="Merge")[0]
                _relax_shape(m, inv)
                merges.append(m)
            ctx.pivot_for_pred = merges[0]
            user_merges = merges[1:] if counter is not None else merges
            packed = pack_sequence_as(structure, user_merges) if not single else user_merges[0]
            c = cond(*packed) if isinstance(packed, (list, tuple)) and not _is_namedtuple(packed) \
                else cond(packed)
            c = convert_to_tensor(c)
            if c.dtype != dtypes.bool:
                raise TypeError(f"cond of while_loop must return a bool tensor, got {c.dtype.name}.")
            if counter is not None:
                from .math_ops import less, logical_and
                c = logical_and(less(merges[0], max_iter), c)
            pivot = loop_cond(c, name="LoopCond")
            ctx.pivot = pivot
            switches = [switch(m, pivot, name="Switch") for m in merges]
            from .array_ops import identity
            body_vars = [identity(s[1], name="Identity") for s in switches]
            for bv, inv in zip(body_vars, invariants):
                _relax_shape(bv, inv)
            ctx.pivot_for_body = body_vars[0]
            user_body = body_vars[1:] if counter is not None else body_vars
            packed = pack_sequence_as(structure, user_body) if not single else user_body[0]
            n_ops_before_body = len(graph.get_operations())
            res = body(*packed) if isinstance(packed, (list, tuple)) and not _is_namedtuple(packed) \
                else body(packed)
            if single and isinstance(res, (list, tuple)) and len(res) == 1:
                res = res[0]
            flat_res = flatten(res) if not single else [res]
            if len(flat_res) != len(user_body):
                raise ValueError(f"body of while_loop returned {len(flat_res)} tensors, but the loop "
                                 f"has {len(user_body)} loop variables (the structures must match).")
            flat_res = [convert_to_tensor(r) for r in flat_res]
            if counter is not None:
                from .math_ops import add
                flat_res = [add(body_vars[0], 1)] + flat_res
            outs = []
            for r in flat_res:
                if not ctx.contains(r):
                    r = ctx.add_value(r)
                outs.append(r)
            for r, v, inv in zip(outs, merges, invariants):
                if r.dtype != v.dtype:
                    raise TypeError(f"Loop variable '{v.name}' enters the loop with type {v.dtype.name}, "
                                    f"but has type {r.dtype.name} after one iteration.")
                if not _shape_less_or_equal(r.shape, inv):
                    raise ValueError(f"Input tensor '{flat_vars[merges.index(v)].name}' enters the loop "
                                     f"with shape {inv}, but has shape {r.shape} after one iteration. "
                                     f"To allow the shape to vary across iterations, use the "
                                     f"`shape_invariants` argument of tf.while_loop to specify a less-"
                                     f"specific shape.")
            if getattr(graph, "building_function", False):  # tf.function: TF2's loop semantics
                outs = _after_side_effects(ctx, graph.get_operations()[n_ops_before_body:], outs)
            nexts = [next_iteration(r, name="NextIteration") for r in outs]
            exits = []
            for s, inv in zip(switches, invariants):
                x = exit(s[0], name="Exit")
                _relax_shape(x, inv)
                exits.append(x)
        finally:
            ctx.exit()
        for x in exits:
            _op_context[x.op] = ctx.outer_context  # an Exit's output lives outside the loop
        for m, n in zip(merges, nexts):
            m.op.update_input(1, n, allow_cycle=True)  # the back edge
        ctx.enters, ctx.merges, ctx.switches, ctx.identities = enters, merges, switches, body_vars
        ctx.body_outputs, ctx.next_iterations, ctx.exits = outs, nexts, exits
        _loops.setdefault(graph, []).append(ctx)
        user_exits = exits[1:] if counter is not None else exits
        if single:
            return user_exits[0]
        result = pack_sequence_as(structure, user_exits)
        if not return_same_structure and isinstance(result, (list, tuple)) and len(result) == 1 \
                and not _is_namedtuple(result):
            return result[0]
        return result


def add_forward_counter(loop):
    """Adds a loop variable counting ``loop``'s iterations; returns its Exit (the count).

    The gradient loop runs that many iterations (TF's GradLoopState.AddForwardLoopCounter)."""
    graph = loop.exits[0].graph
    from .array_ops import constant, identity
    from .math_ops import add
    with graph.as_default(), name_scope(loop.name.rsplit("/", 1)[0] + "/"):
        def start():
            zero = constant(0, name="f_count_init")
            return enter(zero, loop.frame_name, False, loop.parallel_iterations, name="f_count")
        saved = graph.control_flow_context
        graph.control_flow_context = loop
        try:
            e = loop._in_outer(start)
            _op_context[e.op] = loop
            m = merge([e, e], name="f_count_merge")[0]
            sw = switch(m, loop.pivot, name="f_count_switch")
            body = identity(sw[1], name="f_count_identity")
            saved_pivot = loop.pivot_for_body
            loop.pivot_for_body = body
            nxt = next_iteration(add(body, 1), name="f_count_next")
            loop.pivot_for_body = saved_pivot
            x = exit(sw[0], name="f_count_exit")
        finally:
            graph.control_flow_context = saved
    _op_context[x.op] = loop.outer_context
    m.op.update_input(1, nxt, allow_cycle=True)
    return x


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _eager_while(cond, body, loop_vars, maximum_iterations, single, return_same_structure):
    def call(fn, v):
        if single or _is_namedtuple(v) or isinstance(v, dict):
            return fn(v)
        return fn(*v)
    v = loop_vars
    i = 0
    while True:
        if maximum_iterations is not None and i >= int(maximum_iterations):
            break
        c = call(cond, v)
        if not bool(c.numpy() if hasattr(c, "numpy") else c):
            break
        new = call(body, v)
        if single and isinstance(new, (list, tuple)) and len(new) == 1:
            new = new[0]
        if not single and isinstance(v, list) and isinstance(new, tuple):
            new = list(new)
        v = new
        i += 1
    if not single and not return_same_structure and isinstance(v, (list, tuple)) and len(v) == 1:
        return v[0]
    return v


def tensor_in_loop(t):
    """The WhileContext a tensor belongs to (innermost), or None."""
    ctx = _op_context.get(t.op)
    while ctx is not None and not isinstance(ctx, WhileContext):
        ctx = ctx.outer_context
    return ctx


def cond_pred(merge_op):
    """The predicate of the cond a Merge joins (None for a loop Merge)."""
    return _merge_pred.get(merge_op)


__all__ = ["cond", "case", "while_loop", "switch", "merge", "enter", "exit", "next_iteration", "loop_cond",
           "CONTROL_FLOW_OP_TYPES", "CondContext", "WhileContext", "context_of", "loops_of", "cond_pred",
           "tensor_in_loop"]
