"""``tf.keras.applications.mobilenet_v2``: the input preprocessing MobileNetV2 expects (mode 'tf').

``preprocess_input(x)``: pixels scaled from [0, 255] to [-1, 1], as Keras's
``imagenet_utils.preprocess_input(x, mode='tf')``.
The model itself is not part of aicslib.
"""
from ...framework.missing_api import module_getattr
from . import imagenet_utils

__getattr__ = module_getattr(__name__)


def preprocess_input(x, data_format=None):
    """Preprocesses a batch of images (NumPy array or tensor, 0-255 RGB) for MobileNetV2."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")
