"""A small slice of ``tf.keras``: the preprocessing utilities exercise 5.4 reads.

Module paths mirror Keras's (``keras/applications/imagenet_utils.py``,
``keras/preprocessing/sequence.py``, ``keras/preprocessing/text.py``), so the
code here can be read next to the original.
"""
from . import applications, preprocessing
from . import backend
from .. import initializers, optimizers
from . import layers, mixed_precision
from . import activations, datasets
from .engine.training import Model
from .engine.sequential import Sequential
from . import losses, metrics
from . import engine as models

__all__ = ["applications", "preprocessing", "backend", "layers", "mixed_precision", "activations",
           "datasets", "Model", "Sequential", "losses", "metrics", "models"]
