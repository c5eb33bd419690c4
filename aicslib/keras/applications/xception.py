"""``tf.keras.applications.xception``: the input preprocessing Xception expects (mode 'tf').

``preprocess_input(x)``: pixels scaled from [0, 255] to [-1, 1], as Keras's
``imagenet_utils.preprocess_input(x, mode='tf')``.
The model itself is not part of aicslib.
"""
from ...framework.missing_api import module_getattr
from . import imagenet_utils

__getattr__ = module_getattr(__name__)


def preprocess_input(x, data_format=None):
    """Preprocesses a batch of images (NumPy array or tensor, 0-255 RGB) for Xception."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")
