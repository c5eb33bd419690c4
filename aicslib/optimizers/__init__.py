"""``aics.optimizers`` (= ``aics.keras.optimizers``): TF2's Keras optimizers.

``SGD``, ``Adam``, ``RMSprop``, ``Adagrad`` with Keras's names, defaults and
update rules; ``schedules`` for learning-rate decay. TF1's optimizers
(``GradientDescentOptimizer``...) stay in ``aics.train``.
"""
from ..framework.missing_api import module_getattr
from . import schedules
from .adagrad import Adagrad
from .adam import Adam
from .optimizer_v2 import OptimizerV2
from .rmsprop import RMSprop
from .sgd import SGD

Optimizer = OptimizerV2

__getattr__ = module_getattr(__name__)


def get(identifier):
    """An optimizer from a name ('sgd', 'adam', 'rmsprop', 'adagrad') or an optimizer itself."""
    if isinstance(identifier, OptimizerV2):
        return identifier
    table = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad}
    if isinstance(identifier, str) and identifier.lower() in table:
        return table[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")


__all__ = ["Optimizer", "SGD", "Adam", "RMSprop", "Adagrad", "schedules", "get"]
