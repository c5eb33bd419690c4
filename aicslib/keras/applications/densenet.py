"""``tf.keras.applications.densenet``: the input preprocessing DenseNet expects (mode 'torch').

``preprocess_input(x)``: pixels scaled to [0, 1], then normalized by the ImageNet mean and std per
channel, as Keras's ``imagenet_utils.preprocess_input(x, mode='torch')``.
The model itself is not part of aicslib.
"""
from ...framework.missing_api import module_getattr
from . import imagenet_utils

__getattr__ = module_getattr(__name__)


def preprocess_input(x, data_format=None):
    """Preprocesses a batch of images (NumPy array or tensor, 0-255 RGB) for DenseNet."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")
