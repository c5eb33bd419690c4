"""Integer arguments of transformations (``batch(n)``, ``shuffle(buffer)``, ``repeat(count)``,
``range(...)``) that may be graph tensors.

TF builds the dataset op with the argument as an input, so ``batch(batch_size)`` with a
placeholder or ``range(tf.cast(x, tf.int64))`` works: the value is read when the iterator
starts. Here a value known when the dataset is built (a Python int, an eager tensor, a
constant) is used at once; any other graph tensor is *captured* like the tensors of
``from_tensor_slices``, and bound when an initializable iterator's initializer (or a one-shot
iterator, on its first run) evaluates it.
"""
import operator

import numpy as np

from ...framework.eager import EagerTensor
from ...framework.errors import InvalidArgumentError
from ...framework.ops import Tensor, constant_value


def scalar_value(value, name):
    """``(int, None)`` when ``value`` is known now, ``(None, tensor)`` for a graph tensor."""
    if isinstance(value, EagerTensor):
        value = value.numpy()
    elif isinstance(value, Tensor):
        if not value.dtype.is_integer:
            raise TypeError(f"{name} must be an integer tensor, got '{value.name}' of type "
                            f"{value.dtype.name}.")
        if value.shape.rank not in (None, 0):
            raise ValueError(f"{name} must be a scalar, got '{value.name}' of shape {value.shape}.")
        known = constant_value(value)
        if known is None:
            return None, value
        value = known
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got a value of shape {arr.shape}.")
    return operator.index(arr[()]), None


class ScalarArgs:
    """A dataset whose int attributes may wait for a captured tensor's value."""

    def _set_scalar(self, attr, value, name, check=lambda v: v):
        """Sets ``self.<attr>`` to ``check(value)`` now, or records the tensor to bind later
        (``check`` then runs at binding, its ValueError becoming an InvalidArgumentError)."""
        known, tensor = scalar_value(value, name)
        checks = self.__dict__.setdefault("_scalar_checks", {})
        checks[attr] = check
        if tensor is None:
            setattr(self, attr, check(known))
        else:
            setattr(self, attr, None)
            self._captures = list(getattr(self, "_captures", [])) + [(attr, tensor)]

    def _bind_own(self, values_by_id):
        for attr, tensor in getattr(self, "_captures", ()):
            value = int(np.asarray(values_by_id[id(tensor)]).reshape(()))
            try:
                setattr(self, attr, self._scalar_checks[attr](value))
            except ValueError as e:
                raise InvalidArgumentError(None, None, str(e)) from None
        self._captures = []
