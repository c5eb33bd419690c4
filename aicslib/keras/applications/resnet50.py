"""``tf.keras.applications.resnet50``: the input preprocessing ResNet50 expects (mode 'caffe').

``preprocess_input(x)``: RGB to BGR, then the ImageNet channel means subtracted (no scaling), as
Keras's ``imagenet_utils.preprocess_input(x, mode='caffe')``.
The model itself is not part of aicslib.
"""
from ...framework.missing_api import module_getattr
from . import imagenet_utils

__getattr__ = module_getattr(__name__)


def preprocess_input(x, data_format=None):
    """Preprocesses a batch of images (NumPy array or tensor, 0-255 RGB) for ResNet50."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")
