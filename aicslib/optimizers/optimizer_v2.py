"""The Keras optimizer base (TF2's ``tf.keras.optimizers.Optimizer``, keras/optimizer_v2).

Differences from TF1's ``tf.train.Optimizer`` that programs notice:

- ``minimize(loss, var_list, tape=None)``: ``loss`` is a zero-argument callable
  (eager) or a tensor with the ``tape`` that recorded it; ``var_list`` is required
  (a list, or a callable returning one).
- ``iterations`` counts applied steps (an int64 variable); it is the step a
  learning-rate schedule sees and the ``t`` of Adam's bias correction.
- ``learning_rate`` is an attribute that can be read and set (``opt.learning_rate = 0.1``),
  a float or a ``schedules.LearningRateSchedule``.
- ``apply_gradients`` skips variables whose gradient is None (TF logs a warning).
"""
from ..framework import context, dtypes
from ..eager.backprop import GradientTape
from ..framework.init_scope import init_scope
from ..framework.ops import convert_to_tensor, get_default_graph
from ..ops import math_ops
from ..ops.variables import Variable
from ..train.optimizer import Optimizer as _TrainOptimizer


class OptimizerV2(_TrainOptimizer):
    """Base class of the Keras optimizers (SGD, Adam, RMSprop, Adagrad)."""

    def __init__(self, name, learning_rate, **kwargs):
        allowed = {"clipnorm", "clipvalue", "global_clipnorm", "lr", "decay"}
        for k in kwargs:
            if k not in allowed:
                raise TypeError(f"Unexpected keyword argument passed to optimizer: {k}. "
                                f"Allowed kwargs are {sorted(allowed)}.")
        if "lr" in kwargs:
            learning_rate = kwargs.pop("lr")
        super().__init__(False, name)
        self._learning_rate = learning_rate
        self._clipnorm = kwargs.get("clipnorm")
        self._clipvalue = kwargs.get("clipvalue")
        self._iterations = {}

    # ---- hyperparameters
    @property
    def learning_rate(self):
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._learning_rate = value

    lr = learning_rate

    @property
    def iterations(self):
        """How many times apply_gradients has run (an int64 variable, created on first use)."""
        with init_scope():  # inside aics.function: the counter of the eager (or outer) context
            return self._iterations_here()

    def _iterations_here(self):
        key = None if context.executing_eagerly() else get_default_graph()
        it = self._iterations.get(key)
        if it is None:
            if key is None:
                it = Variable(0, trainable=False, name="iter", dtype=dtypes.int64)
            else:
                with key.name_scope(None):
                    it = Variable(0, trainable=False, name=f"{self._name}/iter", dtype=dtypes.int64)
            self._iterations[key] = it
        return it

    def _lr(self, var):
        """The learning rate as a tensor of var's dtype; a schedule is evaluated at ``iterations``."""
        lr = self._learning_rate
        if hasattr(lr, "__call__") and not isinstance(lr, Variable) and not hasattr(lr, "dtype"):
            lr = lr(self.iterations)
        return self._hyper(lr, var, "learning_rate")

    def _local_step(self, var):
        """``iterations + 1`` as var's dtype (the step being taken)."""
        return math_ops.cast(self.iterations, var.dtype) + 1.0

    # ---- the Keras API
    def minimize(self, loss, var_list, grad_loss=None, name=None, tape=None):
        """Computes gradients of ``loss`` for ``var_list`` and applies them (one step)."""
        grads_and_vars = self._compute_gradients(loss, var_list, grad_loss, tape)
        return self.apply_gradients(grads_and_vars, name=name)

    def _compute_gradients(self, loss, var_list, grad_loss=None, tape=None):
        if not callable(loss) and tape is None and context.executing_eagerly():
            raise ValueError("`tape` is required when a `Tensor` loss is passed. "
                             f"Received: loss={loss}, tape={tape}.")
        if callable(loss):
            tape = GradientTape()
            with tape:
                if not callable(var_list):
                    tape.watch(list(var_list))
                loss = loss()
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        if tape is not None:
            grads = tape.gradient(loss, var_list, output_gradients=grad_loss)
        else:
            from ..ops.gradients_impl import gradients
            grads = gradients(loss, var_list, grad_ys=grad_loss)
        return list(zip(grads, var_list))

    def get_gradients(self, loss, params):
        from ..ops.gradients_impl import gradients
        return gradients(loss, params)

    def _clip(self, grad):
        if self._clipvalue is not None:
            grad = math_ops.clip_by_value(grad, -self._clipvalue, self._clipvalue)
        if self._clipnorm is not None:
            norm = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(grad)))
            grad = grad * (self._clipnorm / math_ops.maximum(norm, self._clipnorm))
        return grad

    def apply_gradients(self, grads_and_vars, name=None, experimental_aggregate_gradients=True):
        """Applies one step to each variable with a gradient; ``iterations`` += 1."""
        pairs = [(g, v) for g, v in grads_and_vars]
        if not pairs:
            raise ValueError("No gradients provided for any variable.")
        kept = [(g, v) for g, v in pairs if g is not None]
        if not kept:
            raise ValueError(f"No gradients provided for any variable: "
                             f"{tuple(v.name for _, v in pairs)}.")
        kept = [(self._clip(convert_to_tensor(g, dtype=v.dtype)), v) for g, v in kept]
        return super().apply_gradients(kept, global_step=self.iterations, name=name)

    def get_config(self):
        lr = self._learning_rate
        return {"name": self._name,
                "learning_rate": lr.get_config() if hasattr(lr, "get_config") else lr}

    def __repr__(self):
        return f"<aics.optimizers.{type(self).__name__} '{self._name}'>"
