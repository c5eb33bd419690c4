"""``aics.function``: trace a Python function into a graph, then run the graph.

The first call with a given input signature (each tensor argument's dtype and
shape, each Python argument's value) *traces*: the function runs once with
placeholders in a fresh FuncGraph, recording ops instead of computing. Later
calls with the same signature run the traced graph (a ConcreteFunction)
without running the Python code again, as ``tf.function`` does.

Eager tensors and variables used inside are *captured*: they become extra
placeholders fed at each call; a variable's handle is fed its storage, so
assignments in the graph update the eager variable (resource semantics), in
the order the Python code made them (automatic control dependencies). State
created lazily (optimizer slots, Keras weights) is created once, outside,
under ``aics.init_scope()``. A GradientTape opened inside builds gradient ops
in the graph, so TF2's ``train_step`` traces whole.

Under a GradientTape outside, a call is recorded as one ``PartitionedCall`` op;
its gradient is another traced function, built from the forward graph with
``gradients``. The taped call also fetches the forward tensors that gradient
reads, and the backward is fed them, so the forward pass is not run twice.
``aics.config.run_functions_eagerly(True)`` runs the Python function as is;
on a method, each object gets its own Function (the descriptor protocol).
"""
import functools
import weakref

import numpy as np

from . import context, dtypes, tape as _tape
from .eager import EagerOperation, EagerTensor
from .gradient_registry import RegisterGradient
from .nest import flatten as _flatten, pack_sequence_as
from .ops import Graph, Tensor


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
        from ..ops.array_ops import placeholder
        # The placeholder belongs to the function's top level even when the first use is in a
        # loop body or under control dependencies: the loop routes it in through an Enter.
        saved_context, self._control_flow_context = self._control_flow_context, None
        try:
            with self.as_default(), self.name_scope(None), self.control_dependencies(None):
                ph = placeholder(value.dtype, None if value.dtype == dtypes.resource else value.shape,
                                 name="captured")
        finally:
            self._control_flow_context = saved_context
        if value.dtype == dtypes.resource:
            st = value._array
            ph._handle_data = (st.dtype, st.shape)
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
        if op_def.is_stateful and self._control_flow_context is None:
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
                op._add_control_input(last)
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
        from .session import Session
        if self._session is None:
            self._session = Session(graph=self.graph)
        feeds = {ph: v for ph, v in zip(self.inputs, arg_values)}
        for value, ph in self.graph.captures:
            if ph not in feeds:
                feeds[ph] = value._array
        if extra_feeds:
            feeds.update(extra_feeds)
        fetches = self._effects + self._fetch + list(extra_fetches)
        if not fetches:
            return []
        return self._session.run(fetches, feed_dict=feeds)[len(self._effects):]

    _arg_names = ()  # the Python parameter name of each input (set by Function when it traces)

    def _positional(self, args, kwargs):
        """``args`` and ``kwargs`` as one positional list, by the traced function's parameter names."""
        if not kwargs:
            return list(args)
        out = list(args) + [_MISSING] * (len(self.inputs) - len(args))
        for k, v in kwargs.items():
            if k not in self._arg_names:
                raise TypeError(f"{self.graph.name}(...) got an unexpected keyword argument '{k}'")
            i = list(self._arg_names).index(k)
            if i < len(args):
                raise TypeError(f"{self.graph.name}(...) got multiple values for argument '{k}'")
            out[i] = v
        missing = [self._arg_names[i] for i, v in enumerate(out) if v is _MISSING]
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
                owner = getattr(value._array, "owner", None)
                var = owner() if owner is not None else None
                if var is not None:
                    _tape.variable_accessed(var)
            inputs = list(args) + self.captured_inputs
            recording = _tape.should_record(inputs)
        saved = self._saved_for_backward() if recording else []
        values = self._run([a._array for a in args], saved)
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
        lines += ["Output Type:", f"  {_describe_value(self.structured_outputs)}", "Captures:"]
        captured = self.graph.captures
        lines += [f"  {id(value)}: {_describe_value(value)}" for value, _ in captured] or ["  None"]
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


def _positional_names(fn):
    """The names of ``fn``'s positional parameters ([] when it has no inspectable signature)."""
    import inspect
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _build_backward(fwd):
    """The gradient function, built in the forward graph itself with ``gradients``: a forward
    graph with while loops keeps its loop structure (a GraphDef copy would lose it)."""
    from ..ops.array_ops import placeholder
    from ..ops.gradients_impl import gradients
    from .control_flow_executor import has_control_flow
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
                if t.op._id < n_forward_ops and t.op.type != "Placeholder" and t.dtype != dtypes.resource:
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
        values = bwd._run([a._array if isinstance(a, EagerTensor) else np.asarray(a, ph.dtype.as_numpy_dtype)
                           for a, ph in zip(args, bwd.inputs)], extra_feeds=saved)
        res = [EagerTensor(v, t.dtype) for v, t in zip(values, bwd._fetch)]
    else:
        res = bwd(*args)  # the backward function's captures are fed by ConcreteFunction itself
    it = iter(res)
    return [next(it) if m else None for m in bwd.mask][:n_in]


def _spec_text(shape, dtype):
    shape = tuple(shape) if shape is not None else None
    return f"TensorSpec(shape={shape}, dtype={dtype!r}, name=None)"


def _describe_value(value):
    """How a signature shows a value: a TensorSpec for tensors and arrays, ``Literal[...]`` for
    Python values, structures element by element."""
    if _is_spec(value):
        return _spec_text(value.shape.as_list() if value.shape.rank is not None else None,
                          dtypes.as_dtype(value.dtype))
    if isinstance(value, Tensor):
        return _spec_text(value.shape.as_list() if value.shape.rank is not None else None, value.dtype)
    if isinstance(value, EagerTensor):   # a captured variable shows as its resource handle, as in TF
        shape = () if value.dtype == dtypes.resource else np.shape(value._array)
        return _spec_text(shape, value.dtype)
    if _is_array(value):
        return _spec_text(np.shape(value), dtypes.as_dtype(value.dtype))
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe_value(v) for v in value)
        return f"{type(value).__name__.capitalize()}[{inner}]"
    if isinstance(value, dict):
        inner = ", ".join(f"[{k!r}, {_describe_value(v)}]" for k, v in value.items())
        return f"Dict[{inner}]"
    return f"Literal[{value!r}]"


def _parameter_lines(fn, skip, args, kwargs):
    """``  name (KIND): spec`` for each argument of a call of ``fn`` (its first ``skip``
    parameters, a method's ``self``, left out), as TF's signatures list them."""
    import inspect
    try:
        params = list(inspect.signature(fn).parameters.values())[skip:]
    except (TypeError, ValueError):
        params = []
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    named = [(positional[i] if i < len(positional) else None, a) for i, a in enumerate(args)]
    by_name = {p.name: p for p in params}
    named += [(by_name.get(k), kwargs[k]) for k in sorted(kwargs)]
    return [f"  {param.name if param is not None else f'arg{i}'} "
            f"({param.kind.name if param is not None else 'VAR_POSITIONAL'}): {_describe_value(value)}"
            for i, (param, value) in enumerate(named)]


def _is_array(x):
    """A NumPy array or NumPy scalar (``np.float32(2.0)``): tf.function makes these tensor
    arguments, traced once per dtype and shape, never baked into the graph as values."""
    return isinstance(x, np.ndarray) or (isinstance(x, np.generic) and x.dtype.kind in "biufc")


def _is_spec(x):
    """A TensorSpec (``aics.TensorSpec``/``aics.data.TensorSpec``): a shape and a dtype, no value."""
    return type(x).__name__ == "TensorSpec" and hasattr(x, "shape") and hasattr(x, "dtype")


class Function:
    """A polymorphic function: one ConcreteFunction per input signature.

    Retracing follows TF: a call traces again when a tensor argument has a new
    dtype or shape, or a Python argument a new value; with ``input_signature``
    (a list of TensorSpecs) there is one trace, and calls must match it. With
    ``autograph=True`` (the default, as TF) Python ``if``/``while``/``for`` on
    tensors become ``cond``/``while_loop`` (``aics.autograph.to_code`` shows how).
    """

    def __init__(self, python_function, input_signature=None, autograph=True, jit_compile=None,
                 reduce_retracing=False):
        self.python_function = python_function
        if input_signature is not None:
            input_signature = list(input_signature)
            for spec in input_signature:
                if not _is_spec(spec):
                    raise TypeError(f"input_signature must be a sequence of TensorSpec, got {spec!r}.")
        self._input_signature = input_signature
        self._autograph = autograph
        self._converted = None
        self._cache = {}
        self.tracing_count = 0
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._instance = None            # weakref to the object of a method's bound Function
        self._bound = weakref.WeakKeyDictionary()  # instance -> its own Function (one trace cache each)
        functools.update_wrapper(self, python_function)

    def _leading_args(self):
        """``(instance,)`` for a method bound to an object, else ``()``."""
        if self._instance is None:
            return ()
        instance = self._instance()
        if instance is None:
            raise ReferenceError(f"The object that method '{self.__name__}' was bound to no longer exists.")
        return (instance,)

    @property
    def input_signature(self):
        return None if self._input_signature is None else tuple(self._input_signature)

    def _python_fn(self):
        """The function traced: AutoGraph's conversion of it unless ``autograph=False``."""
        if not self._autograph:
            return self.python_function
        if self._converted is None:
            from ..autograph.api import convert_or_keep
            self._converted = convert_or_keep(self.python_function)
        return self._converted

    def _check_signature(self, args, kwargs):
        """The call's arguments as arrays matching ``input_signature`` (TF's error otherwise)."""
        flat = list(args) + [kwargs[k] for k in sorted(kwargs)]
        sig = self._input_signature

        def incompatible():
            return ValueError("Python inputs incompatible with input_signature:\n"
                              f"  inputs: ({', '.join(map(repr, flat))})\n"
                              f"  input_signature: ({', '.join(map(repr, sig))}).")
        if len(flat) != len(sig):
            raise incompatible()
        out = []
        for a, spec in zip(flat, sig):
            dt = dtypes.as_dtype(spec.dtype)
            if isinstance(a, EagerTensor):
                if a.dtype != dt:
                    raise incompatible()
                arr = a._array
            else:
                try:
                    arr = np.asarray(a)
                    if arr.dtype.kind == "f" and dt.is_integer:
                        raise TypeError
                    arr = arr.astype(dt.as_numpy_dtype, copy=False)
                except (TypeError, ValueError):
                    raise incompatible() from None
            if not spec.shape.is_compatible_with(arr.shape):
                raise incompatible()
            out.append(EagerTensor(arr, dt))
        return out

    def _signature(self, args, kwargs):
        key = []
        for a in list(args) + [kwargs[k] for k in sorted(kwargs)]:
            if _is_spec(a):
                key.append(("T", dtypes.as_dtype(a.dtype), tuple(a.shape.as_list()) if a.shape.rank is not None
                            else None))
            elif isinstance(a, EagerTensor):
                key.append(("T", a.dtype, tuple(np.shape(a._array))))
            elif _is_array(a):
                key.append(("T", dtypes.as_dtype(a.dtype), np.shape(a)))
            elif isinstance(a, (list, tuple, dict)) or a is None or isinstance(a, (int, float, str, bool)):
                key.append(("py", repr(a)))
            else:
                key.append(("obj", id(a)))
        return tuple(sorted(kwargs)), tuple(key)

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction for these arguments (values or TensorSpecs), traced if new."""
        if self._input_signature is not None:
            if args or kwargs:
                if len(args) + len(kwargs) != len(self._input_signature) or not all(
                        _is_spec(a) for a in list(args) + list(kwargs.values())):
                    self._check_signature(args, kwargs)
            args, kwargs = tuple(self._input_signature), {}
        key = self._signature(args, kwargs)
        cf = self._cache.get(key)
        if cf is None:
            cf = self._trace(args, kwargs)
            self._cache[key] = cf
        return cf

    def _trace(self, args, kwargs):
        from ..ops.array_ops import placeholder
        self.tracing_count += 1
        g = FuncGraph(getattr(self.python_function, "__name__", "function"))
        inputs, names = [], []
        params = _positional_names(self.python_function)[len(self._leading_args()):]

        def symbolic(a, name):
            if _is_spec(a):
                spec_name = getattr(a, "name", None) or f"arg{len(inputs)}"
                ph = placeholder(dtypes.as_dtype(a.dtype), a.shape, name=spec_name)
            elif isinstance(a, EagerTensor) or _is_array(a):
                dt = a.dtype if isinstance(a, EagerTensor) else dtypes.as_dtype(a.dtype)
                ph = placeholder(dt, np.shape(a._array if isinstance(a, EagerTensor) else a),
                                 name=f"arg{len(inputs)}")
            else:
                return a
            inputs.append(ph)
            names.append(name)
            return ph
        with g.as_default():
            sym_args = [symbolic(a, params[i] if i < len(params) else None) for i, a in enumerate(args)]
            sym_kwargs = {k: symbolic(kwargs[k], k) for k in sorted(kwargs)}
            result = self._python_fn()(*self._leading_args(), *sym_args, **sym_kwargs)
            from .ops import convert_to_tensor
            # Every output becomes a tensor, Python numbers included (f(2.0) returning x * 2
            # gives a tensor in TF too); None and other objects pass through.
            flat = [convert_to_tensor(r) if not isinstance(r, Tensor) and (
                        hasattr(r, "dtype") or isinstance(r, (bool, int, float, complex)))
                    else r for r in _flatten(result)]
            result = pack_sequence_as(result, flat)
        g.inputs = inputs
        g.outputs = flat
        g.structured_outputs = result
        cf = ConcreteFunction(g, inputs, flat, result)
        cf._arg_names = names
        # Described now rather than kept: the arguments' arrays need not outlive the call.
        cf.parameter_lines = _parameter_lines(self.python_function, len(self._leading_args()),
                                              args, kwargs)
        return cf

    def __call__(self, *args, **kwargs):
        from ..config import functions_run_eagerly
        if functions_run_eagerly():  # aics.config.run_functions_eagerly(True): plain Python, as TF
            return self.python_function(*self._leading_args(), *args, **kwargs)
        if not context.executing_eagerly():  # inlined into the graph being built
            return self._python_fn()(*self._leading_args(), *args, **kwargs)
        if self._input_signature is not None:
            tensors = self._check_signature(args, kwargs)
            return self.get_concrete_function()(*tensors)
        cf = self.get_concrete_function(*args, **kwargs)
        tensor_args = [a for a in list(args) + [kwargs[k] for k in sorted(kwargs)]
                       if isinstance(a, EagerTensor) or _is_array(a)]
        return cf(*tensor_args)

    def pretty_printed_concrete_signatures(self, verbose=True):
        """Every traced signature, in TF's format (parameters, output type, captures)."""
        return "\n\n".join(cf.pretty_printed_signature(verbose) for cf in self._cache.values())

    def experimental_get_tracing_count(self):
        return self.tracing_count

    def experimental_get_concrete_function(self, *args, **kwargs):
        return self.get_concrete_function(*args, **kwargs)

    def __get__(self, instance, owner):
        """A method: each object gets its own Function, traced for it (TF's descriptor)."""
        if instance is None or self._instance is not None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:  # an object that cannot be weakly referenced: traced per call site's object
            return functools.partial(self.__call__, instance)
        if bound is None:
            bound = Function(self.python_function, self._input_signature, self._autograph,
                             self._jit_compile, self._reduce_retracing)
            bound._converted = self._converted
            bound._instance = weakref.ref(instance)
            self._bound[instance] = bound
        return bound


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_relax_shapes=None):
    """Decorator: ``@aics.function`` compiles a Python function into a graph on first call."""
    if func is None:
        return lambda f: Function(f, input_signature, autograph, jit_compile, reduce_retracing)
    return Function(func, input_signature, autograph, jit_compile, reduce_retracing)
