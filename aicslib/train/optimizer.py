"""The Optimizer base class (TF's python/training/optimizer.py).

``minimize(loss)`` is exactly ``compute_gradients`` followed by
``apply_gradients``:

* ``compute_gradients(loss, var_list)`` returns ``[(gradient, variable), ...]``:
  in a graph it adds the backward pass with ``aics.gradients``; eagerly,
  ``loss`` must be a function (called under a ``GradientTape``).
* ``apply_gradients(grads_and_vars, global_step)`` creates the optimizer's
  *slot variables* (e.g. Momentum's accumulator, one per variable, named
  ``<var>/Momentum``), then one ``ResourceApply*`` op per variable, and
  increments ``global_step`` after all updates. In a graph it returns the
  train op; eagerly the updates happen at once and it returns None.

Subclasses define ``_create_slots``, ``_prepare`` and ``_apply_dense`` (and
``_finish`` when they keep extra state, like Adam's beta powers).

``gate_gradients``, ``aggregation_method`` and ``colocate_gradients_with_ops``
are TF's scheduling and placement knobs; see ``compute_gradients`` for what
each means here.
"""
from ..framework import context
from ..framework.eager import EagerTensor
from ..framework.init_scope import init_scope
from ..framework.ops import (Tensor, control_dependencies, convert_to_tensor, get_default_graph,
                             name_scope)
from ..ops import array_ops, math_ops, variables


def _is_tensor_like(v):
    return isinstance(v, (Tensor, EagerTensor, variables.Variable))


class AggregationMethod:
    """How gradient contributions reaching one tensor are summed (TF's ``tf.AggregationMethod``).

    ``ADD_N`` sums them with one AddN op once all are computed. TF's experimental
    methods sum the same terms in another order to save memory (``EXPERIMENTAL_TREE``:
    pairwise; ``EXPERIMENTAL_ACCUMULATE_N``: as they arrive). The result is the same
    sum (up to the rounding of a different order); that memory saving is not what
    this runtime teaches, so all three are accepted and use AddN.
    """

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def _check_gradient_args(gate_gradients, aggregation_method):
    """Rejects values TensorFlow rejects, with its messages; the valid ones all work."""
    if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
        raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                         f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")
    if aggregation_method is not None and aggregation_method not in (
            AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_TREE,
            AggregationMethod.EXPERIMENTAL_ACCUMULATE_N):
        raise ValueError(f"Invalid aggregation_method specified {aggregation_method}.")


def _check_colocation_changes_nothing(graph):
    """colocate_gradients_with_ops=True asks TF to put each gradient op on the device of
    the op it differentiates, whatever device scope is active. ``aics.gradients`` places
    gradient ops like any other op, by the device scope around the call, so the request
    is honoured only where it makes no difference: when no op in the graph, the gradient
    ops just built included, is placed on a device."""
    placed = sorted({op.device for op in graph.get_operations() if op.device})
    if placed:
        raise NotImplementedError(
            f"colocate_gradients_with_ops=True is not supported in a graph whose ops are placed "
            f"on devices ({', '.join(placed)}): aicslib places gradient ops by the device scope "
            f"active when compute_gradients/minimize is called, not next to the ops they "
            f"differentiate. Pass colocate_gradients_with_ops=False and choose the gradients' "
            f"device with `with aics.device(...):` around the call.")


class Optimizer:
    """Base class for optimizers. Do not instantiate it directly; use a subclass."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}          # slot name -> {variable: slot variable}
        self._non_slot_dict = {}  # (name, graph key) -> variable
        self._hyper_cache = {}
        self._var_order = []      # variables in the order they were first updated
        self._var_order_set = set()
        self._step_hypers = None  # eagerly, during one apply_gradients: (key, dtype) -> tensor
        self._deferred_restorations = {}  # checkpoint key -> value, see defer_restorations

    def get_name(self):
        return self._name

    # ---- the two halves of minimize ------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """Adds ops to minimize ``loss`` by updating ``var_list`` (default: all trainable
        variables). Same as ``apply_gradients(compute_gradients(loss, var_list))``."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {[v.name for _, v in grads_and_vars]} "
                f"and loss {getattr(loss, 'name', loss)!r}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """Returns a list of ``(gradient, variable)`` pairs; the gradient is None for a
        variable the loss does not depend on.

        ``gate_gradients`` (GATE_NONE, GATE_OP, GATE_GRAPH) is how long TF holds
        gradients back before they are used, so that an update applied early cannot
        change a variable whose value a gradient still to be computed reads. Here the
        gradient ops use the values read in the forward pass, snapshots that updates do
        not change (copy-on-write), so the three values give the same result; anything
        else is rejected, as TF does. ``aggregation_method``: see
        ``AggregationMethod``. ``colocate_gradients_with_ops=True`` is accepted where it
        changes nothing (eagerly, as in TF, or in a graph with no device placements)
        and raises NotImplementedError otherwise.
        """
        _check_gradient_args(gate_gradients, aggregation_method)
        if callable(loss):
            from ..eager.backprop import GradientTape
            with GradientTape() as tape:
                if var_list is not None:
                    tape.watch(list(var_list))
                loss_value = loss()
            if var_list is None:
                var_list = [v for v in tape.watched_variables() if v.trainable]
            var_list = list(var_list)
            if not var_list:
                raise ValueError("No variables to optimize: the loss function read no "
                                 "trainable variable.")
            grads = tape.gradient(loss_value, var_list, output_gradients=grad_loss)
            return list(zip(grads, var_list))
        if context.executing_eagerly():
            raise RuntimeError("`loss` passed to Optimizer.compute_gradients should be a "
                               "function when eager execution is enabled.")
        if var_list is None:
            var_list = variables.trainable_variables()
        var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not isinstance(v, variables.Variable):
                raise TypeError(f"Argument is not a aics.Variable: {v!r}")
        from ..ops.gradients_impl import gradients
        grads = gradients(loss, var_list, grad_ys=grad_loss)
        if colocate_gradients_with_ops:
            _check_colocation_changes_nothing(loss.graph)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies gradients to variables. Returns the train op (graph) or None (eager)."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if not isinstance(v, variables.Variable):
                raise TypeError(f"apply_gradients expects (gradient, Variable) pairs, got "
                                f"{v!r} as the variable.")
            if g is not None and not (type(g) is EagerTensor and g.dtype == v.dtype):
                try:
                    g = convert_to_tensor(g, dtype=v.dtype)
                except (TypeError, ValueError) as e:
                    raise TypeError(f"Gradient for variable '{v.name}' must be convertible to "
                                    f"a {v.dtype.name} tensor: {e}") from None
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[str(v.name) for _, v in converted]}.")
        if context.executing_eagerly():
            self._apply_gradients_eagerly(converted, var_list, global_step)
            return None
        with name_scope(name, self._name) as scope:
            self._note_var_order(var_list)
            self._create_slots(var_list)
            self._prepare()
            update_ops = []
            for g, v in converted:
                if g is None:
                    continue
                with name_scope("update_" + v.name.split(":")[0].replace("/", "_")):
                    update_ops.append(self._apply_dense(g, v))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                finish = self._finish(update_ops, "update")
                with control_dependencies([finish] if finish is not None else []):
                    # One AssignAddVariableOp named as the step, as TF's optimizer.py adds.
                    one = convert_to_tensor(1, dtype=global_step.dtype)
                    apply_updates = global_step.assign_add(one, read_value=False, name=scope)
            get_default_graph().add_to_collection("train_op", apply_updates)
            return apply_updates

    def _apply_gradients_eagerly(self, converted, var_list, global_step):
        """The eager training step's update: no graph to name ops in or group them by, so
        each variable's update op runs at once, and each hyperparameter is converted (a
        learning-rate Variable read) once per step rather than once per variable."""
        self._note_var_order(var_list)
        self._create_slots(var_list)
        self._prepare()
        self._step_hypers = {}
        try:
            for g, v in converted:
                if g is not None:
                    self._apply_dense(g, v)
        finally:
            self._step_hypers = None
        self._finish([], None)
        if global_step is not None:
            global_step.assign_add(convert_to_tensor(1, dtype=global_step.dtype), read_value=False)

    def _note_var_order(self, var_list):
        known = self._var_order_set
        for v in var_list:
            if v not in known:
                known.add(v)
                self._var_order.append(v)

    # ---- slots ------------------------------------------------------------------------
    def get_slot_names(self):
        """Names of the slots this optimizer created (e.g. ['momentum'])."""
        return sorted(self._slots)

    def get_slot(self, var, name):
        """The slot variable ``name`` for ``var``, or None."""
        return self._slots.get(name, {}).get(var)

    def variables(self):
        """All variables this optimizer created (slots and non-slots such as beta powers)."""
        out = []
        for v in self._var_order:
            for name in sorted(self._slots):
                s = self._slots[name].get(v)
                if s is not None:
                    out.append(s)
        out.extend(self._non_slot_dict[k] for k in sorted(self._non_slot_dict, key=str))
        return out

    def _slot_dict(self, name):
        return self._slots.setdefault(name, {})

    def _create_slot_var(self, var, op_name, initial_value):
        """A non-trainable variable like ``var``, named ``<var>/<op_name>`` (TF's naming:
        ``w/Momentum``, ``w/Adam`` and ``w/Adam_1`` for Adam's two slots)."""
        name = var.name.split(":")[0] + "/" + op_name
        if context.executing_eagerly():
            return variables.Variable(initial_value, trainable=False, name=name,
                                      dtype=var.dtype)
        g = var.graph
        with g.as_default(), g.name_scope(None), control_dependencies(None):
            return variables.Variable(initial_value, trainable=False, name=name,
                                      dtype=var.dtype)

    def _zeros_slot(self, var, slot_name, op_name):
        return self._slot_with_init(var, slot_name, op_name, 0.0)

    def _slot_with_init(self, var, slot_name, op_name, value):
        slots = self._slot_dict(slot_name)
        if var not in slots:
            with init_scope():  # inside aics.function: created once, outside the trace
                self._create_slot(var, slot_name, op_name, value, slots)
        return slots[var]

    def _create_slot(self, var, slot_name, op_name, value, slots):
        shape = var.shape
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot create the '{slot_name}' slot of variable "
                             f"'{var.name}': its shape {shape} is not fully defined.")
        if context.executing_eagerly():
            init = array_ops.fill(shape.as_list(), convert_to_tensor(value, dtype=var.dtype))
        else:
            def init():
                return array_ops.fill(shape.as_list(), convert_to_tensor(value,
                                                                         dtype=var.dtype))
        slots[var] = self._create_slot_var(var, op_name, init)
        self._restore_deferred(f"slots/{self._var_order.index(var)}/{slot_name}"
                               if var in self._var_order else None, slots[var])

    # ---- checkpointing (aics.train.Checkpoint) ----------------------------------------
    def checkpoint_variables(self):
        """{key: Variable} for the slot and non-slot variables created eagerly, keyed as a
        Checkpoint saves them: ``slots/<i>/<slot name>``, where i is the variable's
        position in the order variables were first updated, and the non-slot variable's
        name (``beta1_power``)."""
        out = {}
        for i, v in enumerate(self._var_order):
            for slot_name in sorted(self._slots):
                s = self._slots[slot_name].get(v)
                if s is not None:
                    out[f"slots/{i}/{slot_name}"] = s
        for (name, graph), var in self._non_slot_dict.items():
            if graph is None:
                out[name] = var
        return out

    def defer_restorations(self, values):
        """Keeps checkpoint values ({key: ndarray}, keys as in ``checkpoint_variables``)
        for variables this optimizer has not created yet; each is assigned when its
        variable is created (TF2's deferred restoration). Replaces values kept before."""
        self._deferred_restorations = dict(values)

    def _restore_deferred(self, key, variable):
        """Applies a value a Checkpoint restored before this variable existed."""
        pending = self._deferred_restorations
        if key not in pending:
            return
        value = pending.pop(key)
        if tuple(value.shape) != tuple(variable.shape.as_list()):
            raise ValueError(f"Checkpoint value for optimizer variable {key!r} has shape "
                             f"{value.shape}, expected {variable.shape}.")
        variable.assign(value.astype(variable.dtype.as_numpy_dtype, copy=False))

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        with init_scope():  # inside aics.function: created once, outside the trace
            return self._create_non_slot_variable_here(initial_value, name, colocate_with)

    def _create_non_slot_variable_here(self, initial_value, name, colocate_with):
        eager = context.executing_eagerly()
        key = (name, None if eager else colocate_with.graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            if eager:
                v = variables.Variable(initial_value, trainable=False, name=name)
            else:
                g = colocate_with.graph
                with g.as_default(), g.name_scope(None), control_dependencies(None):
                    v = variables.Variable(initial_value, trainable=False, name=name)
            self._non_slot_dict[key] = v
            if eager:
                self._restore_deferred(name, v)
        return v

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph))

    # ---- hyperparameters ------------------------------------------------------------
    def _call_if_callable(self, value):
        return value() if callable(value) else value

    def _hyper(self, value, var, key):
        """``value`` as a tensor of ``var``'s dtype. Python numbers become constants once
        per graph and dtype; tensors of another dtype are cast. Eagerly, within one
        ``apply_gradients``, each (key, dtype) is converted once, for the first variable."""
        step = self._step_hypers
        if step is not None:
            ck = (key, var.dtype)
            t = step.get(ck)
            if t is None:
                t = self._convert_hyper(value, var, key)
                if isinstance(t, variables.Variable):   # read once per step, not per update
                    t = t.value()
                step[ck] = t
            return t
        return self._convert_hyper(value, var, key)

    def _convert_hyper(self, value, var, key):
        value = self._call_if_callable(value)
        if _is_tensor_like(value):
            if value.dtype.base_dtype != var.dtype:
                return math_ops.cast(value, var.dtype)
            return value
        eager = context.executing_eagerly()
        ck = (key, var.dtype, float(value), None if eager else get_default_graph())
        t = self._hyper_cache.get(ck)
        if t is None:
            if eager:
                t = convert_to_tensor(value, dtype=var.dtype)
            else:
                with control_dependencies(None):
                    t = convert_to_tensor(value, dtype=var.dtype, name=key)
            self._hyper_cache[ck] = t
        return t

    # ---- to be implemented by subclasses -----------------------------------------------
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError()

    def _finish(self, update_ops, name_scope):
        return array_ops.group(*update_ops, name=name_scope or None)

    def __repr__(self):
        return f"<aics.train.{type(self).__name__} '{self._name}'>"
