"""``tf.compat.v1.math``: ``aics.math`` with TF1's reduction keywords.

The reductions take ``reduction_indices``/``keep_dims`` beside ``axis``/``keepdims``,
``argmax``/``argmin`` take ``dimension``, and ``in_top_k`` takes TF1's argument
order (``predictions, targets, k``); every other name is ``aics.math``'s.
"""
from ...framework.missing_api import module_getattr
from ...ops.nn_impl import in_top_k  # noqa: F401  (TF1 order)
from .signatures import (argmax, argmin, count_nonzero, reduce_all, reduce_any,  # noqa: F401
                         reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum)


def _from_math(name):
    from ... import math
    return getattr(math, name)


__getattr__ = module_getattr(__name__, _from_math)
