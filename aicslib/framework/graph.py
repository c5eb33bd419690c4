"""Graph, Operation and Tensor: the dataflow graph, as TF's python/framework/ops.py.

A Graph is a list of Operations; each Operation consumes Tensors (outputs of
earlier operations) and produces Tensors. Nothing is computed here: a
Session (session.py) or the eager executor (execute.py) runs kernels.

The three classes share one module because each keeps the others' edges
consistent (an Operation registers itself as its inputs' consumer, a Graph
numbers its Operations and sets their output shapes); other modules use only
their public accessors.
"""
import contextlib
import re
import threading
import traceback as _traceback

from . import context
from .device import canonical_device, merge_device
from .errors import GraphConstructionError, InvalidArgumentError
from .shape_inference import InferenceContext
from .tensor_operators import TensorOperators
from .tensor_shape import TensorShape, as_shape, dimension_value, v2_shapes_inside


class Tensor(TensorOperators):
    """A symbolic output of an Operation: ``op.name + ':' + index``."""

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "_handle_data",
                 "__weakref__")

    def __init__(self, op, value_index, dtype):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = TensorShape(None)
        self._consumers = []
        self._handle_data = None  # for resource handles: the variable's (dtype, shape)

    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self):
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        try:
            self._shape = self._shape.merge_with(as_shape(shape))
        except ValueError as e:
            raise ValueError(f"Tensor '{self.name}': {e}") from None

    def relax_shape(self, shape):
        """Gives the tensor ``shape`` even where it is less specific than the one inferred (a
        while loop variable's shape invariant); ``set_shape`` can only refine."""
        self._shape = as_shape(shape)

    @property
    def ndim(self):
        return self._shape.rank

    def consumers(self):
        return list(self._consumers)

    @property
    def handle_data(self):
        """For a resource handle: the (dtype, shape) of the variable it refers to, else None."""
        return self._handle_data

    @handle_data.setter
    def handle_data(self, dtype_and_shape):
        self._handle_data = dtype_and_shape

    def eval(self, feed_dict=None, session=None):
        """Runs the default (or given) session to compute this tensor."""
        sess = session or context.get_default_session_or_raise(f"evaluate tensor '{self.name}'")
        return sess.run(self, feed_dict=feed_dict)

    def __repr__(self):
        return f"<aics.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __bool__(self):
        raise TypeError(f"Using a symbolic aics.Tensor ('{self.name}') as a Python bool is not "
                        f"allowed in graph mode; use aics.cond/where, or run it in a Session.")

    def __iter__(self):
        n = dimension_value(self._shape[0]) if self._shape.rank else None
        if n is None:
            raise TypeError(f"Cannot iterate over tensor '{self.name}' of unknown leading dimension.")
        for i in range(n):
            yield self[i]

    def __len__(self):
        n = dimension_value(self._shape[0]) if self._shape.rank else None
        if n is None:
            raise TypeError(f"len is not well defined for tensor '{self.name}' with shape {self._shape}.")
        return n

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"Cannot convert symbolic tensor '{self.name}' to a NumPy array; "
                        f"run it in a Session first.")


class Operation:
    """A node: op type, attrs, input tensors, output tensors, device, control inputs."""

    def __init__(self, graph, op_def, name, inputs, input_lengths, attrs, output_dtypes,
                 device="", control_inputs=()):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._type = op_def.name
        self._inputs = list(inputs)
        self._input_lengths = input_lengths  # per input arg: None (single) or list length
        self._attrs = attrs
        self._outputs = [Tensor(self, i, dt) for i, dt in enumerate(output_dtypes)]
        self._control_inputs = list(control_inputs)
        self._device = device
        self._traceback = _traceback.extract_stack()[:-3]
        self._id = None
        self._gradient_type = None  # set by gradient_override_map
        self._control_outputs = []
        for t in self._inputs:
            t._consumers.append(self)
        for c in self._control_inputs:
            c._control_outputs.append(self)

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._type

    @property
    def op_def(self):
        return self._op_def

    @property
    def inputs(self):
        return tuple(self._inputs)

    @property
    def input_lengths(self):
        """Per input arg: None for a single tensor, the list's length for an ``N * T`` arg."""
        return list(self._input_lengths)

    @property
    def id(self):
        """The op's position in its graph's creation order (``graph.get_operations()``)."""
        return self._id

    @property
    def gradient_type(self):
        """The gradient registered under another name (``gradient_override_map``), else None."""
        return self._gradient_type

    @property
    def outputs(self):
        return list(self._outputs)

    def values(self):
        return tuple(self._outputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def device(self):
        return self._device

    def set_device(self, device):
        """Places the op on ``device`` (graph rewrites and GraphDef import)."""
        self._device = canonical_device(device)

    @property
    def graph(self):
        return self._graph

    @property
    def traceback(self):
        """The Python stack where this op was created (without the framework's frames)."""
        return [f for f in self._traceback if "/aicslib/" not in f.filename.replace("\\", "/")] \
            or list(self._traceback)

    def get_attr(self, name):
        if name not in self._attrs:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        return self._attrs[name]

    @property
    def attrs(self):
        return dict(self._attrs)

    @property
    def node_def(self):
        """A NodeDef as a JSON-serialisable dict (name, op, input, device, attr)."""
        from .graph_io import node_def_of
        return node_def_of(self)

    def add_control_input(self, op):
        """Adds a control edge, rejecting a cycle (TF checks this when the graph is run)."""
        if op is self or self._reaches(op):
            raise InvalidArgumentError(None, self, f"Adding control input '{op.name}' to '{self.name}' "
                                       f"would create a cycle in the graph.")
        self._control_inputs.append(op)
        op._control_outputs.append(self)
        self._graph._version += 1

    def add_control_inputs(self, ops):
        for op in ops:
            self.add_control_input(op)

    # TF's own (private) names, which TF programs and tests call too
    _add_control_input = add_control_input
    _add_control_inputs = add_control_inputs

    def _reaches(self, target):
        """True if ``target`` depends on self (so an edge self->target... closes a cycle)."""
        seen, stack = set(), [self]
        while stack:
            cur = stack.pop()
            for consumer in [c for t in cur._outputs for c in t._consumers] + cur._control_outputs:
                if consumer is target:
                    return True
                if id(consumer) not in seen:
                    seen.add(id(consumer))
                    stack.append(consumer)
        return False

    def update_input(self, index, tensor, allow_cycle=False):
        """Rewires input ``index`` (used by graph rewrites); rejects cycles, except the
        NextIteration -> Merge back edge of a while loop (``allow_cycle``)."""
        if not allow_cycle and (tensor.op is self or self._reaches(tensor.op)):
            raise InvalidArgumentError(None, self, f"Rewiring input {index} of '{self.name}' to "
                                       f"'{tensor.name}' would create a cycle in the graph.")
        old = self._inputs[index]
        old._consumers.remove(self)
        self._inputs[index] = tensor
        tensor._consumers.append(self)
        self._graph._version += 1

    _update_input = update_input

    def run(self, feed_dict=None, session=None):
        sess = session or context.get_default_session_or_raise(f"run operation '{self.name}'")
        sess.run(self, feed_dict=feed_dict)

    def __repr__(self):
        return f"<aics.Operation '{self._name}' type={self._type}>"



class Graph:
    """A dataflow graph. Use ``with g.as_default():`` to add ops to it."""

    def __init__(self):
        self._ops = []
        self._ops_by_name = {}
        self._names_in_use = {}
        self._name_stack = ""
        self._control_dependencies_stack = []
        self._device_stack = []
        self._collections = {}
        self._gradient_override_map = {}
        self._version = 0
        self._finalized = False
        self._lock = threading.RLock()
        self.seed = None
        self._seed_offset = 0
        self._control_flow_context = None  # the cond/while being built (ops/control_flow_ops.py)

    # ---- default graph management
    @contextlib.contextmanager
    def as_default(self):
        stack = context.thread_state().graph_stack
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    # ---- names
    def unique_name(self, name, mark_as_used=True):
        if self._name_stack:
            name = self._name_stack + "/" + name
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        old = self._name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):
            new = name[:-1]  # an absolute scope, re-entered as is
        else:
            if not re.fullmatch(r"[A-Za-z0-9.][A-Za-z0-9_.\-/]*", name):
                raise ValueError(f"'{name}' is not a valid scope name.")
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    # ---- control dependencies and devices
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        if control_inputs is None:  # clears outer dependencies, as in TF
            saved, self._control_dependencies_stack = self._control_dependencies_stack, []
            try:
                yield
            finally:
                self._control_dependencies_stack = saved
            return
        ops = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element"):
                c = c._as_graph_element()
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be an Operation or Tensor, got {c!r}.")
            if c.graph is not self:
                raise ValueError(f"Control input '{c.name}' is not an element of this graph.")
            ops.append(c)
        self._control_dependencies_stack.append(ops)
        try:
            yield
        finally:
            self._control_dependencies_stack.pop()

    @contextlib.contextmanager
    def device(self, device_name):
        # None resets the device, as in TF; '' changes nothing; inner parts override outer ones.
        self._device_stack.append(None if device_name is None else canonical_device(device_name))
        try:
            yield
        finally:
            self._device_stack.pop()

    def _current_device(self):
        d = ""
        for entry in self._device_stack:
            d = "" if entry is None else merge_device(d, entry)
        return d

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Ops created inside use another registered gradient: ``{"Square": "MyGrad"}``."""
        for k, v in op_type_map.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError("gradient_override_map expects a dict of op type strings.")
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    # ---- building
    def finalize(self):
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    def create_op(self, op_def, inputs, input_lengths, attrs, output_dtypes, name=None):
        """Adds a node. ``inputs`` are this graph's Tensors, flattened over list arguments."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        with self._lock:
            if name is None:
                name = op_def.name
            if name.endswith("/"):
                # A scope name used as an op name is absolute and already unique (TF's rule).
                name = name[:-1]
                if name in self._ops_by_name:
                    raise ValueError(f"Duplicate node name in graph: '{name}'")
                self._names_in_use.setdefault(name.lower(), 1)
            else:
                name = self.unique_name(name)
            for t in inputs:
                if t.graph is not self:
                    raise ValueError(f"Tensor '{t.name}' must be from the same graph as the op "
                                     f"'{name}' being created.")
            control = []
            for deps in self._control_dependencies_stack:
                for c in deps:
                    if c not in control and all(c is not t.op for t in inputs):
                        control.append(c)
            op = Operation(self, op_def, name, inputs, input_lengths, attrs, output_dtypes,
                           device=self._current_device(), control_inputs=control)
            override = self._gradient_override_map.get(op_def.name)
            if override is not None:
                op._gradient_type = override
            self._run_shape_fn(op)
            op._id = len(self._ops)
            self._ops.append(op)
            self._ops_by_name[name] = op
            self._version += 1
            if self._control_flow_context is not None:  # as TF: the context rewires external inputs
                self._control_flow_context.add_op(op)
            return op

    @property
    def control_flow_context(self):
        """The cond or while_loop whose body is being built (ops/control_flow_ops.py), else None."""
        return self._control_flow_context

    @control_flow_context.setter
    def control_flow_context(self, ctx):
        self._control_flow_context = ctx

    def _run_shape_fn(self, op):
        fn = op.op_def.shape_fn
        if fn is None:
            return
        ctx = InferenceContext(op.type, op.name, op._inputs, op._attrs)
        try:
            with v2_shapes_inside():
                shapes = fn(ctx)
        except (ValueError, IndexError) as e:
            # The op is not added; name it and its inputs, as TF's shape errors do.
            shown = ", ".join(f"'{t.name}' {t.shape}" for t in op._inputs)
            self._names_in_use.pop(op.name.lower(), None)
            for t in op._inputs:
                t._consumers.remove(op)
            raise GraphConstructionError(f"{e} for '{{{{node {op.name}}}}} = {op.type}' "
                                         f"with input shapes: {shown}.", op) from None
        if shapes is None:
            return
        shape_like = (TensorShape, list, tuple, type(None))
        if isinstance(shapes, (TensorShape, list, tuple)) and not (
                isinstance(shapes, (list, tuple)) and shapes and isinstance(shapes[0], shape_like)):
            shapes = [shapes]
        for t, s in zip(op._outputs, shapes):
            t._shape = as_shape(s)

    # ---- lookup
    def get_operations(self):
        return list(self._ops)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings, got {name!r}.")
        if ":" in name:
            raise ValueError(f"Name '{name}' looks like a (invalid) Operation name; "
                             f"tensor names have ':<index>', operation names do not.")
        op = self._ops_by_name.get(name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")
        return op

    def get_tensor_by_name(self, name):
        if not isinstance(name, str) or ":" not in name:
            raise ValueError(f"The name '{name}' looks like an (invalid) Operation name, not a "
                             f"Tensor. Tensor names must be of the form '<op_name>:<output_index>'.")
        op_name, idx = name.rsplit(":", 1)
        op = self._ops_by_name.get(op_name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. "
                           f"The operation, '{op_name}', does not exist in the graph.")
        i = int(idx)
        if i >= len(op._outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. The "
                           f"operation, '{op_name}', exists but only has {len(op._outputs)} outputs.")
        return op._outputs[i]

    def as_graph_element(self, obj):
        """Resolves a Tensor, Operation, Variable or name to an element of this graph."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else self.get_operation_by_name(obj)
        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                raise ValueError(f"{obj!r} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    # ---- collections
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for n in ([names] if isinstance(names, str) else names):
            self.add_to_collection(n, value)

    def get_collection(self, name, scope=None):
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pat = re.compile(scope)
        return [i for i in items if hasattr(i, "name") and pat.match(i.name)]

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self):
        return list(self._collections)

    # ---- serialization
    def as_graph_def(self):
        from .graph_io import graph_to_graph_def
        return graph_to_graph_def(self)

    @property
    def version(self):
        return self._version

    def _next_seed_offset(self):
        self._seed_offset += 1
        return self._seed_offset

    def __repr__(self):
        return f"<aics.Graph with {len(self._ops)} ops>"


