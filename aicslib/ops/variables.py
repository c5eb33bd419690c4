"""Variables (TF's python/ops/variables.py and resource_variable_ops.py).

In a graph a Variable is three nodes: ``w`` (VarHandleOp), ``w/Assign``
(its initializer) and ``w/Read/ReadVariableOp`` (what fetching ``w``
returns). Each use of ``w`` in an op adds a fresh ReadVariableOp, so the
order of reads and assignments is explicit in the graph. Eagerly, the
Variable holds its value and each read is a snapshot.
"""
import numpy as np

from ..framework import context, dtypes, tape
from ..framework.eager import EagerTensor, array_of_numpy_value
from ..framework.execute import apply_op
from ..framework.ops import (GraphKeys, TensorOperators, convert_to_tensor, get_default_graph, name_scope,
                             register_tensor_conversion_function)
from ..framework.resource import VariableStorage
from ..framework.tensor_shape import as_shape


class Variable(TensorOperators):
    """A mutable tensor that keeps its value across Session.run calls (or eager steps)."""

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, shape=None,
                 collections=None, validate_shape=True):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
        self._trainable = bool(trainable)
        if context.executing_eagerly():
            self._init_eager(initial_value, name, dtype, shape)
        else:
            self._init_graph(initial_value, name, dtype, shape, collections)

    # ---- construction
    def _init_eager(self, initial_value, name, dtype, shape):
        if callable(initial_value):
            initial_value = initial_value()
        value = convert_to_tensor(initial_value, dtype=dtype)
        self._dtype = value.dtype
        self._shape = as_shape(shape) if shape is not None else value.shape
        self._name = (name or "Variable") + ":0"
        self._storage = VariableStorage(self._name[:-2], self._dtype, self._shape)
        self._storage.assign(value.array)
        import weakref
        self._storage.owner = weakref.ref(self)
        self._handle = EagerTensor(self._storage, dtypes.resource)
        self._graph = None
        self._initializer_op = None
        self._graph_element = None
        self._initial_value = value

    def _init_graph(self, initial_value, name, dtype, shape, collections):
        g = get_default_graph()
        with name_scope(name, "Variable") as scope:
            var_name = scope[:-1]
            with name_scope("Initializer"):
                if callable(initial_value):
                    initial_value = initial_value()
                init = convert_to_tensor(initial_value, dtype=dtype)
            self._dtype = init.dtype
            self._shape = as_shape(shape) if shape is not None else init.shape
            self._handle = apply_op("VarHandleOp", [], {"shared_name": var_name, "dtype": self._dtype,
                                                        "shape": self._shape.dims}, name=scope)
            self._handle.handle_data = (self._dtype, self._shape)
            self._initializer_op = apply_op("AssignVariableOp", [self._handle, init], name="Assign")
            with name_scope("Read"):
                self._graph_element = apply_op("ReadVariableOp", [self._handle], {"dtype": self._dtype})
        self._name = var_name + ":0"
        self._graph = g
        self._initial_value = init
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if self._trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections = list(collections) + [GraphKeys.TRAINABLE_VARIABLES]
        g.add_to_collections(collections, self)

    # ---- properties
    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def trainable(self):
        return self._trainable

    @property
    def handle(self):
        return self._handle

    @property
    def op(self):
        return None if self._graph is None else self._handle.op

    @property
    def graph(self):
        return self._graph

    @property
    def device(self):
        return "/device:CPU:0" if self._graph is None else self._handle.op.device

    @property
    def initializer(self):
        """The op that assigns the initial value (graph mode)."""
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    def initialized_value(self):
        """The value, guaranteed to run the initializer first (for initialising other variables)."""
        if self._graph is None:
            return self.read_value()
        from ..framework.ops import control_dependencies
        with self._own_graph(), control_dependencies([self._initializer_op]):
            return apply_op("ReadVariableOp", [self._handle], {"dtype": self._dtype})

    # ---- reading
    def _own_graph(self):
        """Builds into the variable's graph, as TF1 does when a method is called outside it."""
        import contextlib
        if self._graph is None or (not context.executing_eagerly() and get_default_graph() is self._graph):
            return contextlib.nullcontext()
        return self._graph.as_default()

    def value(self):
        tape.variable_accessed(self)
        if self._graph is None:  # an eager variable: no graph to enter
            return apply_op("ReadVariableOp", [self._handle], {"dtype": self._dtype})
        with self._own_graph():
            return apply_op("ReadVariableOp", [self._handle], {"dtype": self._dtype})

    read_value = value

    def numpy(self):
        if self._graph is not None:
            raise NotImplementedError("numpy() is only available for eager variables; use sess.run(v).")
        value = self._storage.read()
        return value[()] if value.ndim == 0 else value   # a NumPy scalar (bytes for a string), as TF

    def eval(self, session=None):
        return self._graph_element.eval(session=session)

    def _as_graph_element(self):
        return self._graph_element

    def __array__(self, dtype=None, copy=None):
        return array_of_numpy_value(self.numpy(), dtype)

    # ---- writing
    def _assign(self, op_type, value, name, read_value):
        with self._own_graph():
            return self._assign_here(op_type, value, name, read_value)

    def _assign_here(self, op_type, value, name, read_value):
        value = convert_to_tensor(value, dtype=self._dtype)
        if not self._shape.is_compatible_with(value.shape):
            # As TF: a static shape mismatch is an error when the assignment is built.
            raise ValueError(f"Cannot assign value to variable '{self._name}': Shape mismatch. The "
                             f"variable shape {self._shape}, and the assigned value shape "
                             f"{value.shape} are incompatible.")
        op = apply_op(op_type, [self._handle, value], name=name)
        if context.executing_eagerly():  # (an eager variable inside aics.function returns ops)
            return self
        if not read_value:
            return op
        from ..framework.ops import control_dependencies
        with control_dependencies([op]):
            return apply_op("ReadVariableOp", [self._handle], {"dtype": self._dtype})

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return self._assign("AssignVariableOp", value, name, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._assign("AssignAddVariableOp", delta, name, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._assign("AssignSubVariableOp", delta, name, read_value)

    def load(self, value, session=None):
        """Writes ``value`` into the variable in ``session`` without adding ops each call."""
        if self._graph is None:
            self.assign(value)
            return
        from ..framework.session import get_default_session_or_raise
        sess = session or get_default_session_or_raise(f"load variable '{self.name}'")
        storage = sess.run(self._handle)
        storage.assign(convert_to_numpy_for(self, value))

    def __repr__(self):
        if self._graph is None:
            return (f"<aics.Variable '{self._name}' shape={self._shape} dtype={self._dtype.name}, "
                    f"numpy={np.array_repr(self._storage.read())}>")
        return f"<aics.Variable '{self._name}' shape={self._shape} dtype={self._dtype.name}>"

    __hash__ = object.__hash__


def convert_to_numpy_for(var, value):
    from ..framework.ops import to_numpy
    return to_numpy(value, var.dtype, what=f"value for variable '{var.name}'")


def _dense_var_to_tensor(var, dtype=None, name=None):
    if dtype is not None and dtypes.as_dtype(dtype) != var.dtype:
        raise ValueError(f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' "
                         f"for variable of type '{var.dtype.name}' ({var.name})")
    return var.value()


register_tensor_conversion_function(Variable, _dense_var_to_tensor)


# ---------------------------------------------------------------------------

def global_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """One op running the initializers of ``var_list`` (None when executing eagerly)."""
    if context.executing_eagerly():
        return None
    from .array_ops import group
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer():
    return variables_initializer(global_variables())


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init_local")


def is_variable_initialized(variable):
    """A bool scalar: whether ``variable`` holds a value yet (its initializer has run)."""
    return apply_op("VarIsInitializedOp", [variable.handle])


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor: the names (``'w'``, not ``'w:0'``) of the variables in ``var_list``
    (all global and local ones by default) that are not initialized when it runs.

    A variable created after ``global_variables_initializer()`` was built is not in that
    initializer; this reports it until ``variables_initializer([v])`` runs, as in TF.
    """
    from .array_ops import constant, stack
    from .where_ops import boolean_mask
    from . import math_ops
    if var_list is None:
        var_list = global_variables() + local_variables()
    with name_scope(name):
        if not var_list:
            return constant([], dtype=dtypes.string)
        names = constant([v.op.name for v in var_list])
        initialized = stack([is_variable_initialized(v) for v in var_list])
        return boolean_mask(names, math_ops.logical_not(initialized))


def assign(ref, value, name=None):
    return ref.assign(value, name=name)


def assign_add(ref, value, name=None):
    return ref.assign_add(value, name=name)


def assign_sub(ref, value, name=None):
    return ref.assign_sub(value, name=name)
