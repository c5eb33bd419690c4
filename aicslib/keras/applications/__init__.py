"""``tf.keras.applications``: the shared ImageNet utilities and per-model ``preprocess_input``."""
from . import imagenet_utils
from .imagenet_utils import preprocess_input
# Per-model modules with the preprocessing each model expects (the models are not included).
from . import densenet, inception_v3, mobilenet, mobilenet_v2, resnet, resnet50, vgg16, vgg19, xception

__all__ = ["imagenet_utils", "preprocess_input", "densenet", "inception_v3", "mobilenet",
           "mobilenet_v2", "resnet", "resnet50", "vgg16", "vgg19", "xception"]
