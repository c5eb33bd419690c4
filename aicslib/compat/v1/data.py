"""``tf.compat.v1.data``: ``aics.data`` with the TF1 iterator functions."""
from ...data import *  # noqa: F403
from ...data import __all__ as _data_all
from ...framework.missing_api import module_getattr


def _from_data(name):
    from ... import data
    return getattr(data, name)


__getattr__ = module_getattr(__name__, _from_data)

__all__ = list(_data_all)
