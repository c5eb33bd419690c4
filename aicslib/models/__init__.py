"""``aics.models``: whole networks built from aicslib ops (chapter 3's driving example).

* :mod:`aicslib.models.vgg19` -- VGG19 as the lecture builds it, weights from
  ``vgg19.npy`` / ``.npz`` / MatConvNet ``.mat`` or a documented random init.
* :mod:`aicslib.models.style_transfer` -- Gatys et al.'s neural style transfer:
  content and Gram-matrix style losses, the TF1 Session loop and the TF2
  GradientTape loop.
"""
from . import vgg19, style_transfer

__all__ = ["vgg19", "style_transfer"]
