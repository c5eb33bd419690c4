"""Traced graphs run as functions (TF's python/eager/function.py and framework/func_graph.py).

A ``FuncGraph`` is the graph a Python function is traced into: eager tensors
and variables used inside are *captured*: they become extra placeholders fed
at each call; a variable's handle is fed its storage, so assignments in the
graph update the eager variable (resource semantics), in the order the Python
code made them (automatic control dependencies). State created lazily
(optimizer slots, Keras weights) is created once, outside, under
``aics.init_scope()``. A GradientTape opened inside builds gradient ops in the
graph, so TF2's ``train_step`` traces whole.

A ``ConcreteFunction`` is one traced graph, run by a private Session. Under a
GradientTape outside, a call is recorded as one ``PartitionedCall`` op; its
gradient is another traced function, built from the forward graph with
``gradients``. The taped call also fetches the forward tensors that gradient
reads, and the backward is fed them, so the forward pass is not run twice.

``def_function.py`` holds ``aics.function``, which traces and caches these.
"""
import numpy as np

from ..framework import dtypes, tape as _tape
from ..framework.control_flow_executor import has_control_flow
from ..framework.eager import EagerOperation, EagerTensor
from ..framework.gradient_registry import RegisterGradient
from ..framework.nest import pack_sequence_as
from ..framework.ops import Graph, Tensor
from ..framework.session import Session
from ..ops.array_ops import placeholder
from ..ops.gradients_impl import gradients


class FuncGraph(Graph):
    """The graph a function is traced into; knows what it captured from outside."""

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.inputs = []
        self.outputs = []
        self.structured_outputs = None
        self._captures = {}  # id(eager tensor) -> (eager tensor, placeholder)
        self._last_resource_op = {}  # id(resource tensor) -> the last op that used it
        self.building_function = True  # what init_scope looks for (TF's FuncGraph attribute)

    def capture(self, value):
        hit = self._captures.get(id(value))
        if hit is not None:
            return hit[1]
        # The placeholder belongs to the function's top level even when the first use is in a
        # loop body or under control dependencies: the loop routes it in through an Enter.
        saved_context, self.control_flow_context = self.control_flow_context, None
        try:
            with self.as_default(), self.name_scope(None), self.control_dependencies(None):
                ph = placeholder(value.dtype, None if value.dtype == dtypes.resource else value.shape,
                                 name="captured")
        finally:
            self.control_flow_context = saved_context
        if value.dtype == dtypes.resource:
            st = value.array
            ph.handle_data = (st.dtype, st.shape)
        self._captures[id(value)] = (value, ph)
        return ph

    @property
    def captures(self):
        return [(v, ph) for v, ph in self._captures.values()]

    def create_op(self, op_def, *args, **kwargs):
        if op_def.name == "VarHandleOp":
            raise ValueError(f"aics.function-decorated function '{self.name}' tried to create a "
                             f"variable. Create variables outside the function and use them inside "
                             f"(or create them once, under aics.init_scope()).")
        op = super().create_op(op_def, *args, **kwargs)
        if op_def.is_stateful and self.control_flow_context is None:
            self._order_resource_use(op)
        return op

    def _order_resource_use(self, op):
        """TF's automatic control dependencies: ops using one resource (a variable's reads,
        assignments, optimizer updates) run in the order the Python code created them, as
        they would eagerly; the Session alone would only follow data edges."""
        for t in op.inputs:
            if t.dtype != dtypes.resource:
                continue
            last = self._last_resource_op.get(id(t))  # graph tensors live as long as the graph
            if last is not None and last is not op and last not in op.control_inputs \
                    and all(last is not i.op for i in op.inputs):
                op.add_control_input(last)
            self._last_resource_op[id(t)] = op


class ConcreteFunction:
    """One traced graph: placeholders in, tensors out, run by a private Session."""

    def __init__(self, graph, inputs, outputs, structured_outputs):
        self.graph = graph
        self.inputs = inputs            # placeholders for the call's tensor arguments
        self.outputs = outputs          # flat output tensors (None entries for non-tensors)
        self.structured_outputs = structured_outputs
        self._fetch = [t for t in outputs if isinstance(t, Tensor)]  # the tensor outputs
        self._input_set = set(inputs)
        self._session = None
        self._backward = None
        self._backward_failed = False  # building the backward at a taped call raised
        # Side-effect ops (aics.print, assignments) have no outputs to fetch; run them on
        # every call as tf.function does, instead of letting the Session prune them away.
        self._effects = [op for op in graph.get_operations() if op.op_def.is_stateful and not op.outputs]

    @property
    def captured_inputs(self):
        """Captured values fed at each call (those not passed as arguments already)."""
        return [v for v, ph in self.graph.captures if ph not in self._input_set]

    def _run(self, arg_values, extra_fetches=(), extra_feeds=None):
        if self._session is None:
            self._session = Session(graph=self.graph)
        feeds = {ph: v for ph, v in zip(self.inputs, arg_values)}
        for value, ph in self.graph.captures:
            if ph not in feeds:
                feeds[ph] = value.array
        if extra_feeds:
            feeds.update(extra_feeds)
        fetches = self._effects + self._fetch + list(extra_fetches)
        if not fetches:
            return []
        return self._session.run(fetches, feed_dict=feeds)[len(self._effects):]

    arg_names = ()  # the Python parameter name of each input (set by Function when it traces)

    def _positional(self, args, kwargs):
        """``args`` and ``kwargs`` as one positional list, by the traced function's parameter names."""
        if not kwargs:
            return list(args)
        out = list(args) + [_MISSING] * (len(self.inputs) - len(args))
        for k, v in kwargs.items():
            if k not in self.arg_names:
                raise TypeError(f"{self.graph.name}(...) got an unexpected keyword argument '{k}'")
            i = list(self.arg_names).index(k)
            if i < len(args):
                raise TypeError(f"{self.graph.name}(...) got multiple values for argument '{k}'")
            out[i] = v
        missing = [self.arg_names[i] for i, v in enumerate(out) if v is _MISSING]
        if missing:
            raise TypeError(f"{self.graph.name}(...) missing required arguments: {', '.join(missing)}")
        return out

    def __call__(self, *args, **kwargs):
        args = self._positional(args, kwargs)
        args = [a if isinstance(a, EagerTensor) else EagerTensor(np.asarray(a, ph.dtype.as_numpy_dtype), ph.dtype)
                for a, ph in zip(args, self.inputs)]
        recording = False
        if _tape.active:
            for value in self.captured_inputs:  # reading a captured variable counts as access
                owner = getattr(value.array, "owner", None)
                var = owner() if owner is not None else None
                if var is not None:
                    _tape.variable_accessed(var)
            inputs = list(args) + self.captured_inputs
            recording = _tape.should_record(inputs)
        saved = self._saved_for_backward() if recording else []
        values = self._run([a.array for a in args], saved)
        n = len(self._fetch)
        outs = [EagerTensor(v, t.dtype) for v, t in zip(values[:n], self._fetch)]
        if recording:
            # The forward's intermediates the backward needs ride along on the tape's record,
            # so the gradient does not run the forward pass again (TF keeps them likewise).
            rec = EagerOperation("PartitionedCall", inputs, outs,
                                 {"f": self, "saved": dict(zip(saved, values[n:]))})
            _tape.record_operation(rec)
        it = iter(outs)
        flat = [next(it) if isinstance(t, Tensor) else t for t in self.outputs]
        return pack_sequence_as(self.structured_outputs, flat)

    parameter_lines = None   # "  name (KIND): spec" per argument of the trace (set by Function)

    def pretty_printed_signature(self, verbose=True):
        """TF's layout: each parameter with its kind and TensorSpec (or ``Literal[value]`` for
        a Python argument, which is part of the trace), the output type, the captured values."""
        lines = ["Input Parameters:"] + list(self.parameter_lines or [])
        lines += ["Output Type:", f"  {describe_value(self.structured_outputs)}", "Captures:"]
        captured = self.graph.captures
        lines += [f"  {id(value)}: {describe_value(value)}" for value, _ in captured] or ["  None"]
        return "\n".join(lines)

    def _saved_for_backward(self):
        """The forward tensors the backward function reads ([] when it cannot be built now:
        the error then comes from ``tape.gradient``, as before, if a gradient is asked for)."""
        if self._backward is None and self._backward_failed:
            return []
        try:
            return self.backward_function().saved
        except (LookupError, NotImplementedError, TypeError, ValueError):
            self._backward_failed = True
            return []

    def backward_function(self):
        """The traced gradient: (inputs..., captures..., output grads...) -> input grads."""
        if self._backward is None:
            self._backward = _build_backward(self)
        return self._backward

    def pretty_printed_graph(self):
        lines = []
        for op in self.graph.get_operations():
            ins = ", ".join(t.name for t in op.inputs)
            lines.append(f"{op.name} = {op.type}({ins})")
        return "\n".join(lines)


_MISSING = object()


def _build_backward(fwd):
    """The gradient function, built in the forward graph itself with ``gradients``: a forward
    graph with while loops keeps its loop structure (a GraphDef copy would lose it)."""
    g = fwd.graph
    fwd_inputs = list(dict.fromkeys(list(fwd.inputs) + [ph for _, ph in g.captures]))
    fwd_outputs = [t for t in fwd.outputs if isinstance(t, Tensor)]
    n_forward_ops = len(g.get_operations())
    with g.as_default(), g.name_scope(None):
        grad_phs = [placeholder(t.dtype, t.shape, name="dy") for t in fwd_outputs]
        diff = [(o, gph) for o, gph in zip(fwd_outputs, grad_phs) if o.dtype.is_floating]
        dxs = gradients([o for o, _ in diff], fwd_inputs, grad_ys=[gph for _, gph in diff]) if diff \
            else [None] * len(fwd_inputs)
    mask = [d is not None for d in dxs]
    bwd = ConcreteFunction(g, fwd_inputs + grad_phs, [d for d in dxs if d is not None],
                           [d for d in dxs if d is not None])
    bwd._effects = []  # the forward's side effects ran with the forward call
    bwd.mask = mask
    # The forward tensors the backward ops read (activations, variable reads): a taped
    # forward call fetches them too and the backward is fed them. Graphs with control flow
    # are left to recompute (a tensor inside a loop frame has no single value to keep).
    saved = {}
    if not has_control_flow(g):
        for op in g.get_operations()[n_forward_ops:]:
            for t in op.inputs:
                if t.op.id < n_forward_ops and t.op.type != "Placeholder" and t.dtype != dtypes.resource:
                    saved[t] = None
    bwd.saved = list(saved)
    return bwd


@RegisterGradient("PartitionedCall")
def _partitioned_call_grad(op, *grads):
    fwd = op.get_attr("f")
    bwd = fwd.backward_function()
    n_in = len(op.inputs)
    args = list(op.inputs) + list(grads)
    saved = op.get_attr("saved")
    if not bwd.outputs:
        res = []
    elif saved and not _tape.active:
        # Fed the kept forward intermediates: only the backward ops run. (With a tape still
        # recording, for a higher-order gradient, the forward is recomputed inside the
        # recorded backward call instead, so the outer tape sees how it depends on the inputs.)
        values = bwd._run([a.array if isinstance(a, EagerTensor) else np.asarray(a, ph.dtype.as_numpy_dtype)
                           for a, ph in zip(args, bwd.inputs)], extra_feeds=saved)
        res = [EagerTensor(v, t.dtype) for v, t in zip(values, bwd._fetch)]
    else:
        res = bwd(*args)  # the backward function's captures are fed by ConcreteFunction itself
    it = iter(res)
    return [next(it) if m else None for m in bwd.mask][:n_in]


def _spec_text(shape, dtype):
    shape = tuple(shape) if shape is not None else None
    return f"TensorSpec(shape={shape}, dtype={dtype!r}, name=None)"


def describe_value(value):
    """How a signature shows a value: a TensorSpec for tensors and arrays, ``Literal[...]`` for
    Python values, structures element by element."""
    if is_tensor_spec(value):
        return _spec_text(value.shape.as_list() if value.shape.rank is not None else None,
                          dtypes.as_dtype(value.dtype))
    if isinstance(value, Tensor):
        return _spec_text(value.shape.as_list() if value.shape.rank is not None else None, value.dtype)
    if isinstance(value, EagerTensor):   # a captured variable shows as its resource handle, as in TF
        shape = () if value.dtype == dtypes.resource else np.shape(value.array)
        return _spec_text(shape, value.dtype)
    if is_array_argument(value):
        return _spec_text(np.shape(value), dtypes.as_dtype(value.dtype))
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe_value(v) for v in value)
        return f"{type(value).__name__.capitalize()}[{inner}]"
    if isinstance(value, dict):
        inner = ", ".join(f"[{k!r}, {describe_value(v)}]" for k, v in value.items())
        return f"Dict[{inner}]"
    return f"Literal[{value!r}]"


def is_array_argument(x):
    """A NumPy array or NumPy scalar (``np.float32(2.0)``): tf.function makes these tensor
    arguments, traced once per dtype and shape, never baked into the graph as values."""
    return isinstance(x, np.ndarray) or (isinstance(x, np.generic) and x.dtype.kind in "biufc")


def is_tensor_spec(x):
    """A TensorSpec (``aics.TensorSpec``/``aics.data.TensorSpec``): a shape and a dtype, no value."""
    return type(x).__name__ == "TensorSpec" and hasattr(x, "shape") and hasattr(x, "dtype")


# Numerical-check recipe for the gradient registered here (see ops/math_grad.GRADIENT_CHECK_RECIPES).
GRADIENT_CHECK_RECIPES = {
    "PartitionedCall": None,  # checked through aics.function in tests/test_function.py
}
