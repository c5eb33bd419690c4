"""Graph, Operation and Tensor, as tensorflow/python/framework/ops.py.

A Graph is a list of Operations; each Operation consumes Tensors (outputs of
earlier operations) and produces Tensors. Nothing is computed here: a
Session (session.py) or the eager executor (execute.py) runs kernels.
"""
import contextlib
import re
import threading
import traceback as _traceback

import numpy as np

from . import context, dtypes
from .device import canonical_device, eager_device, merge_device
from .errors import GraphConstructionError, InvalidArgumentError
from .python_sequences import first_text, sequence_to_array
from .string_values import to_bytes_array
from .tensor_shape import TensorShape, as_shape, dimension_value, v2_shapes_inside


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"
    QUEUE_RUNNERS = "queue_runners"
    GLOBAL_STEP = "global_step"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    INIT_OP = "init_op"
    # Scaffold's defaults for monitored sessions (TF1): found here before being made.
    SAVERS = "savers"
    SUMMARIES = "summaries"
    SUMMARY_OP = "summary_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    LOCAL_INIT_OP = "local_init_op"


# --------------------------------------------------------------------------
# Operator overloading shared by graph and eager tensors.

class TensorOperators:
    """Python operators (+ - * / @ ** comparisons, indexing) for graph and eager tensors alike.

    The ops behind them are installed by ``aicslib/ops`` (``override_operator``),
    as TF's math_ops overloads Tensor's operators, so the framework does not
    depend on the ops built on it.
    """

    __slots__ = ()
    __array_priority__ = 100  # make ndarray + tensor defer to us

    @classmethod
    def override_operator(cls, name, fn):
        """Makes ``fn(tensor, ...)`` the implementation of operator method ``name``."""
        if not (name.startswith("__") and name.endswith("__")):
            raise ValueError(f"override_operator expects an operator method name such as "
                             f"'__add__', got {name!r}.")
        setattr(cls, name, fn)

    # Tensors hash by identity so they can be dict keys (feeds); == stays identity too,
    # as in TF1 graph mode (use aics.equal for elementwise comparison).
    __hash__ = object.__hash__


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

    @property
    def ndim(self):
        return self._shape.rank

    def consumers(self):
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """Runs the default (or given) session to compute this tensor."""
        from .session import get_default_session_or_raise
        sess = session or get_default_session_or_raise(f"evaluate tensor '{self.name}'")
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
        self._extra = {}  # runtime-only info (e.g. function bodies), not serialised
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

    def _set_device(self, device):
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

    def _add_control_input(self, op):
        """Adds a control edge, rejecting a cycle (TF checks this when the graph is run)."""
        if op is self or self._reaches(op):
            raise InvalidArgumentError(None, self, f"Adding control input '{op.name}' to '{self.name}' "
                                       f"would create a cycle in the graph.")
        self._control_inputs.append(op)
        op._control_outputs.append(self)
        self._graph._version += 1

    def _add_control_inputs(self, ops):
        for op in ops:
            self._add_control_input(op)

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

    def _update_input(self, index, tensor, allow_cycle=False):
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

    def run(self, feed_dict=None, session=None):
        from .session import get_default_session_or_raise
        sess = session or get_default_session_or_raise(f"run operation '{self.name}'")
        sess.run(self, feed_dict=feed_dict)

    def __repr__(self):
        return f"<aics.Operation '{self._name}' type={self._type}>"


class InferenceContext:
    """What a shape function sees: input shapes, constant input values, attrs."""

    def __init__(self, op_type, name, inputs, attrs):
        self.op_type = op_type
        self.name = name
        self._inputs = inputs
        self._attrs = attrs

    @property
    def num_inputs(self):
        return len(self._inputs)

    def input_shape(self, i):
        return self._inputs[i].shape

    def input_dtype(self, i):
        return self._inputs[i].dtype

    def input_constant(self, i):
        """The input's value when it is known at graph-build time (a Const), else None."""
        t = self._inputs[i]
        if isinstance(t, Tensor):
            return constant_value(t)
        return getattr(t, "_array", None)

    def attr(self, name):
        return self._attrs[name]


def constant_value(tensor):
    """Value of a tensor computable without running the graph (Const, Shape of a known shape)."""
    op = tensor.op
    if op.type == "Const":
        return op.get_attr("value")
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.as_list(), dtype=op.get_attr("out_type").as_numpy_dtype)
    if op.type == "Identity":
        return constant_value(op.inputs[0])
    return None


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

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, ctx):
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


# --------------------------------------------------------------------------
# The default graph.

_default_graph = None
_default_graph_lock = threading.Lock()


def get_default_graph():
    """The innermost graph entered with as_default(), else the global default graph."""
    stack = context.thread_state().graph_stack
    if stack:
        return stack[-1]
    global _default_graph
    with _default_graph_lock:
        if _default_graph is None:
            _default_graph = Graph()
        return _default_graph


def reset_default_graph():
    global _default_graph
    if context.thread_state().graph_stack:
        raise AssertionError("Do not use reset_default_graph() inside a 'with g.as_default()' block.")
    _default_graph = Graph()


def _graph_for_building():
    """The graph ops go into when not executing eagerly."""
    return get_default_graph()


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """A name scope for ops created inside (a no-op prefix in eager mode)."""
    name = name if name is not None else default_name
    if context.executing_eagerly():
        yield (name + "/") if name else ""
        return
    with get_default_graph().name_scope(name) as scope:
        yield scope


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Ops created inside run after ``control_inputs`` (eager runs in order anyway)."""
    if context.executing_eagerly():
        yield
        return
    with get_default_graph().control_dependencies(control_inputs):
        yield


@contextlib.contextmanager
def device(device_name):
    """Places ops created inside on ``device_name`` ('/cpu:0', '/gpu:0', '/mlu:0')."""
    if context.executing_eagerly():
        st = context.thread_state().device_stack
        st.append(eager_device(canonical_device(device_name)))
        try:
            yield
        finally:
            st.pop()
        return
    with get_default_graph().device(device_name):
        yield


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def get_collection(name, scope=None):
    return get_default_graph().get_collection(name, scope)


# --------------------------------------------------------------------------
# Conversion of Python values, arrays, variables... to tensors.

_conversion_functions = []  # (type, fn(value, dtype, name) -> Tensor or EagerTensor)
_conversion_by_type = {}    # exact type -> its function or None, filled on first use


def register_tensor_conversion_function(base_type, conversion_func):
    """Lets ``convert_to_tensor`` (and so every op) accept ``base_type`` values, as TF's."""
    _conversion_functions.append((base_type, conversion_func))
    _conversion_by_type.clear()


def conversion_function_for(value_type):
    """The registered conversion function for values of ``value_type``, or None."""
    try:
        return _conversion_by_type[value_type]
    except KeyError:
        fn = next((f for base, f in _conversion_functions if issubclass(value_type, base)), None)
        _conversion_by_type[value_type] = fn
        return fn


def default_dtype_for(value):
    """The dtype TF gives a Python value: float32 for floats, int32 for ints
    (int64 when out of range), bool; NumPy inputs keep their dtype."""
    if isinstance(value, (np.ndarray, np.generic)):
        try:
            return dtypes.as_dtype(value.dtype)
        except TypeError:
            raise TypeError(f"Unsupported NumPy dtype {value.dtype} for a tensor.") from None
    arr = sequence_to_array(value)
    kind = arr.dtype.kind
    if kind == "V":  # ml_dtypes' bfloat16 / float8 arrays keep their own dtype
        return dtypes.as_dtype(arr.dtype)
    if kind == "f":
        return dtypes.float32
    if kind in "iu":
        if arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
            return dtypes.int64
        return dtypes.int32
    if kind == "b":
        return dtypes.bool
    if kind == "c":  # Python complex numbers become complex128, as in TF
        return dtypes.complex128
    if kind in "US":
        return dtypes.string
    raise TypeError(f"Cannot convert {value!r} (of type {type(value).__name__}) to a tensor.")


def to_numpy(value, dtype, what="value"):
    """Converts ``value`` to an array of ``dtype``, refusing lossy kind changes
    (a float into an int tensor, an out-of-range int) instead of coercing silently."""
    if dtype is dtypes.string:   # bytes as bytes: never through NumPy's NUL-stripping 'S'
        return to_bytes_array(value, what)
    np_dtype = dtype.as_numpy_dtype
    if isinstance(value, np.ndarray) and value.dtype == np_dtype:
        arr = value
    else:
        src = value if isinstance(value, (np.ndarray, np.generic)) else sequence_to_array(value)
        if src.dtype.kind in "US" and not isinstance(value, (np.ndarray, np.generic)):
            # TF parses no Python strings as numbers (NumPy would read "1.5" as 1.5)
            raise _text_to_number_error(value, dtype)
        if src.dtype.kind == "O" and dtype != dtypes.string:
            raise TypeError(f"Cannot convert {what} {value!r} to a tensor of {dtype.name}: "
                            f"ragged or non-numeric data.")
        if dtype != dtypes.string and src.dtype != np_dtype:
            if src.dtype.kind == "f" and dtype.is_integer:
                raise TypeError(f"Expected {dtype.name} for {what}, got {value!r} of type "
                                f"'{src.dtype.name}' instead.")
            if src.dtype.kind in "fiub" and dtype.is_bool and src.dtype.kind != "b":
                raise TypeError(f"Expected bool for {what}, got {value!r} of type '{src.dtype.name}' instead.")
            if src.dtype.kind in "iu" and dtype.is_integer and src.size:
                info = np.iinfo(np_dtype)
                if src.min() < info.min or src.max() > info.max:
                    raise ValueError(f"{what} {value!r} is out of range for {dtype.name} "
                                     f"[{info.min}, {info.max}].")
        arr = np.asarray(src, dtype=np_dtype)
    return arr


def _text_to_number_error(value, dtype):
    """TF's TypeError for a Python string given where numbers are expected: the eager
    converter's message, or in a graph the one of TF's make_tensor_proto."""
    if context.executing_eagerly():
        return TypeError(f"Cannot convert {value!r} to EagerTensor of dtype "
                         f"{dtypes.type_string(dtype)}")
    text = first_text(value)
    return TypeError(f"Expected {dtype.name}, but got {text} of type '{type(text).__name__}'.")


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None):
    """Turns a Python value, array, EagerTensor or Variable into a tensor for the
    current mode: an EagerTensor when executing eagerly, else a graph Tensor."""
    EagerTensor = _eager_tensor_type()
    if type(value) is EagerTensor and dtype is None and context.executing_eagerly():
        return value  # the common case inside op wrappers, kept cheap
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    eager = context.executing_eagerly()
    if isinstance(value, Tensor):
        if eager:
            raise TypeError(f"Graph tensor '{value.name}' cannot be used in eager mode; "
                            f"run it in a Session or build the whole computation in the graph.")
        g = get_default_graph()
        if value.graph is not g:
            if hasattr(g, "capture_tensor"):
                value = g.capture_tensor(value)
            else:
                raise ValueError(f"Tensor '{value.name}' must be from the same graph as the "
                                 f"ops being created.")
        if dtype is not None and value.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor "
                             f"'{value.name}' with dtype {value.dtype.name}.")
        return value
    if isinstance(value, EagerTensor):
        if dtype is not None and value.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for an eager "
                             f"tensor with dtype {value.dtype.name}.")
        if eager:
            return value
        g = get_default_graph()
        if hasattr(g, "capture"):
            return g.capture(value)
        from ..ops import array_ops
        return array_ops.constant(value._array, dtype=value.dtype, name=name)
    fn = conversion_function_for(type(value))
    if fn is not None:
        return fn(value, dtype, name)
    if dtype is None:
        dtype = preferred_dtype if preferred_dtype is not None and _fits(value, preferred_dtype) \
            else default_dtype_for(value)
    if eager:
        return EagerTensor(to_numpy(value, dtype), dtype)
    from ..ops import array_ops
    return array_ops.constant(value, dtype=dtype, name=name)


def _fits(value, dtype):
    try:
        to_numpy(value, dtypes.as_dtype(dtype))
        return True
    except (TypeError, ValueError):
        return False


def is_tensor(x):
    return isinstance(x, (Tensor, _eager_tensor_type()))


_eager_types = []


def _eager_tensor_type():
    """EagerTensor, imported on first use (eager.py builds on this module)."""
    if not _eager_types:
        from .eager import EagerTensor
        _eager_types.append(EagerTensor)
    return _eager_types[0]
