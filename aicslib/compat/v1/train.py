"""``tf.compat.v1.train``: TF1's optimizers, Saver, queue runners and learning-rate schedules.

Everything in ``aics.train`` plus the TF1 learning-rate decay functions
(``exponential_decay``, ``piecewise_constant``, ...).
"""
from ...framework.missing_api import module_getattr
from ...train import *  # noqa: F403
from ...train import __all__ as _train_all
from ...summary.v1 import summary_iterator
from ...train.learning_rate_decay import (cosine_decay, exponential_decay, inverse_time_decay,
                                          natural_exp_decay, piecewise_constant, polynomial_decay)


def _from_train(name):
    from ... import train
    return getattr(train, name)


__getattr__ = module_getattr(__name__, _from_train)

__all__ = list(_train_all) + ["cosine_decay", "exponential_decay", "inverse_time_decay",
                              "natural_exp_decay", "piecewise_constant", "polynomial_decay",
                              "summary_iterator"]
