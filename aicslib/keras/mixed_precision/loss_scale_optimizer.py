"""Loss scaling (Keras's ``keras/mixed_precision/loss_scale_optimizer.py``).

float16's smallest positive value is 2**-24: many gradients of a real network
are smaller and round to zero (underflow). Loss scaling multiplies the loss by
a *loss scale* S before differentiating, so that every gradient of the
backward pass is S times larger, and divides the final weight gradients by S
before the float32 update::

    scaled_loss = loss * S
    grads = gradients(scaled_loss, vars) / S

Dynamic loss scaling picks S by itself (Keras's rule, implemented exactly):

* gradients not all finite (S too large: something overflowed) -> the step is
  skipped (no variable, slot or global step changes), S = max(S / 2, 1), the
  counter of good steps goes back to 0;
* finite gradients -> the counter goes up; when it reaches
  ``dynamic_growth_steps`` S doubles (unless 2S is not finite) and the counter
  goes back to 0.

``dynamic=False`` keeps ``initial_scale`` for ever and never skips.

The wrapped optimizer is an ``aics.train`` optimizer (TF1's API: ``minimize``,
``compute_gradients``, ``apply_gradients``, ``global_step``). Eagerly the skip
is a Python ``if``. In a graph it is a real conditional, as in TF: the inner
optimizer's update is built inside ``aics.cond(all_finite, apply, no_op)``, so
when a gradient is not finite none of its update ops (``ResourceApplyAdam``,
the beta-power and global-step assignments, ...) runs at all: the untaken
branch's ops receive dead tensors and are skipped by the executor.

What a skipped step leaves alone differs between TF's two wrappers, and we
follow the one for the kind of optimizer we wrap. TF1's
``tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer`` (for
``tf.compat.v1.train`` optimizers, like ``aics.train``'s) skips with
``control_flow_ops.no_op``: weights, slots (Adam's m and v), Adam's
``beta1_power``/``beta2_power`` and ``global_step`` all keep their values
(checked against TensorFlow 2.21). Keras's ``LossScaleOptimizer`` instead
increments ``optimizer.iterations`` on a skipped step (its ``do_not_apply_fn``:
"Normally self._optimizer.iterations is incremented in apply_gradients(); since
that is not called in this branch, we increment it here"), so that Keras's
``iterations`` counts every step while weights and slots stay unchanged. TF1
optimizers have no ``iterations``; their bias-correction state (the beta
powers) lives in variables that a skipped step does not touch.
"""
from ...framework import context, dtypes
from ...framework.init_scope import init_scope
from ...framework.ops import control_dependencies, convert_to_tensor, get_default_graph, name_scope
from ...ops import array_ops, control_flow_ops, math_ops, variables
from ...train.optimizer import Optimizer

__all__ = ["LossScaleOptimizer"]

_DEFAULT_INITIAL_SCALE = 2 ** 15
_DEFAULT_GROWTH_STEPS = 2000
_MULTIPLIER = 2.0


def all_finite(grads):
    """A scalar bool tensor: True when every element of every (non-None) gradient is finite."""
    per_grad = [math_ops.reduce_min(math_ops.cast(math_ops.is_finite(g), dtypes.int32))
                for g in grads if g is not None]
    if not per_grad:
        return convert_to_tensor(True)
    return math_ops.equal(math_ops.reduce_min(array_ops.stack(per_grad)), 1)


class LossScaleOptimizer:
    """Wraps ``inner_optimizer`` with loss scaling (Keras's arguments and defaults)."""

    def __init__(self, inner_optimizer, dynamic=True, initial_scale=None, dynamic_growth_steps=None):
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f'"inner_optimizer" must be an instance of aics.train.Optimizer, '
                            f'but got: {inner_optimizer!r}')
        if not isinstance(dynamic, bool):
            raise TypeError(f'"dynamic" argument to LossScaleOptimizer.__init__ must be a bool, '
                            f'but got: {dynamic!r}')
        if dynamic:
            initial_scale = _DEFAULT_INITIAL_SCALE if initial_scale is None else initial_scale
            dynamic_growth_steps = (_DEFAULT_GROWTH_STEPS if dynamic_growth_steps is None
                                    else dynamic_growth_steps)
            if int(dynamic_growth_steps) != dynamic_growth_steps or dynamic_growth_steps < 1:
                raise ValueError(f'"dynamic_growth_steps" must be a positive integer, but got: '
                                 f'{dynamic_growth_steps}')
        else:
            if initial_scale is None:
                raise ValueError('"initial_scale" must be specified if "dynamic" is False')
            if dynamic_growth_steps is not None:
                raise ValueError(f'"dynamic_growth_steps" must be None if "dynamic" is False, '
                                 f'but got: {dynamic_growth_steps}')
        initial_scale = float(initial_scale)
        if not initial_scale >= 1 or initial_scale == float("inf"):
            raise ValueError(f'"initial_scale" must be a finite number >= 1, but got: {initial_scale}')
        self._optimizer = inner_optimizer
        self._dynamic = dynamic
        self._initial_scale = initial_scale
        self._growth_steps = int(dynamic_growth_steps) if dynamic else None
        self._state = {}  # graph (None when eager) -> (loss scale variable, counter variable)

    # ---- the properties Keras has
    @property
    def inner_optimizer(self):
        return self._optimizer

    @property
    def dynamic(self):
        return self._dynamic

    @property
    def initial_scale(self):
        return self._initial_scale

    @property
    def dynamic_growth_steps(self):
        return self._growth_steps

    @property
    def loss_scale(self):
        """The current loss scale as a float32 scalar tensor."""
        if not self._dynamic:
            return convert_to_tensor(self._initial_scale, dtype=dtypes.float32)
        return self._variables()[0].value()

    @property
    def dynamic_counter(self):
        """Finite steps since the loss scale last changed (an int64 variable); None if fixed."""
        return self._variables()[1] if self._dynamic else None

    def _variables(self):
        """The (loss scale, counter) variables of the current graph, made on first use."""
        # Inside aics.function the variables belong outside the trace (made once, as Keras
        # makes its loss-scale weights): init_scope leaves the function being traced.
        with init_scope():
            eager = context.executing_eagerly()
            key = None if eager else get_default_graph()
            state = self._state.get(key)
            if state is None:
                if eager:
                    state = self._make_variables()
                else:
                    with key.name_scope(None), control_dependencies(None):
                        state = self._make_variables()
                self._state[key] = state
        return state

    def _make_variables(self):
        with name_scope("loss_scale"):
            scale = variables.Variable(self._initial_scale, trainable=False, name="current_loss_scale",
                                       dtype=dtypes.float32)
            counter = variables.Variable(0, trainable=False, name="good_steps", dtype=dtypes.int64)
        return scale, counter

    def variables(self):
        """The inner optimizer's variables, then the loss scale's (dynamic only)."""
        out = list(self._optimizer.variables())
        for scale, counter in self._state.values():
            out += [scale, counter]
        return out

    # ---- scaling
    def get_scaled_loss(self, loss):
        """``loss * loss_scale`` (``loss`` may be a tensor or a function returning one)."""
        if callable(loss):
            def scaled_loss():
                value = loss()
                return value * math_ops.cast(self.loss_scale, value.dtype)
            return scaled_loss
        return loss * math_ops.cast(self.loss_scale, loss.dtype)

    def get_unscaled_gradients(self, grads):
        """Each gradient times ``1 / loss_scale`` (None stays None)."""
        reciprocal = math_ops.reciprocal(self.loss_scale)
        return [None if g is None else g * math_ops.cast(reciprocal, g.dtype) for g in grads]

    # ---- the optimizer API
    def compute_gradients(self, loss, var_list=None, **kwargs):
        """The inner optimizer's gradients of the scaled loss, unscaled."""
        grads_and_vars = self._optimizer.compute_gradients(self.get_scaled_loss(loss),
                                                           var_list=var_list, **kwargs)
        grads = self.get_unscaled_gradients([g for g, _ in grads_and_vars])
        return list(zip(grads, [v for _, v in grads_and_vars]))

    def minimize(self, loss, global_step=None, var_list=None, name=None, **kwargs):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, **kwargs)
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Updates the loss scale and applies the (unscaled) gradients unless one is not
        finite. Returns the train op in a graph, None eagerly."""
        grads_and_vars = list(grads_and_vars)
        grads = [g for g, _ in grads_and_vars]
        with name_scope(name, "LossScaleOptimizer"):
            finite = all_finite(grads)
            update_scale = self._update_loss_scale(finite) if self._dynamic else []
            if context.executing_eagerly():
                if bool(finite.numpy()):
                    self._optimizer.apply_gradients(grads_and_vars, global_step=global_step)
                return None
            apply_op = self._apply_unless_skipped(finite, grads_and_vars, global_step)
            train_op = array_ops.group(apply_op, *update_scale, name="train")
        get_default_graph().add_to_collection("train_op", train_op)
        return train_op

    def _update_loss_scale(self, finite):
        """Keras's dynamic rule as dataflow (the same ops eagerly and in a graph)."""
        scale_var, counter_var = self._variables()
        scale, counter = scale_var.value(), counter_var.value()
        count = counter + math_ops.cast(1, dtypes.int64)
        grow = math_ops.logical_and(finite, math_ops.greater_equal(
            count, math_ops.cast(self._growth_steps, dtypes.int64)))
        doubled = scale * _MULTIPLIER
        doubled = math_ops.where(math_ops.is_finite(doubled), doubled, scale)  # never grow to inf
        halved = math_ops.maximum(scale / _MULTIPLIER, 1.0)
        new_scale = math_ops.where(finite, math_ops.where(grow, doubled, scale), halved)
        zero = math_ops.cast(0, dtypes.int64)
        new_counter = math_ops.where(grow, zero, math_ops.where(finite, count, zero))
        return [scale_var.assign(new_scale, read_value=False),
                counter_var.assign(new_counter, read_value=False)]

    def _apply_unless_skipped(self, finite, grads_and_vars, global_step):
        """``cond(finite, inner update, no_op)``: no update op runs on a skipped step."""
        opt = self._optimizer
        var_list = [v for g, v in grads_and_vars if g is not None]
        # Slots and non-slot variables (Adam's beta powers) are created outside the cond,
        # as Keras creates all weights before its cond (LossScaleOptimizer._create_all_weights):
        # a variable's initializer must not live in a branch.
        opt._create_slots(var_list)
        # The inner optimizer caches its hyperparameter constants per graph; the ones made
        # inside the branch carry the branch's pivot and are dead when the step is skipped, so
        # they must not be reused by a train op built later outside this cond.
        cache = getattr(opt, "_hyper_cache", {})
        cached_before = set(cache)

        def apply_fn():
            return opt.apply_gradients(grads_and_vars, global_step=global_step)
        try:
            return control_flow_ops.cond(finite, apply_fn, array_ops.no_op, name="maybe_apply")
        finally:
            for key in set(cache) - cached_before:
                del cache[key]
