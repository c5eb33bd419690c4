"""Decoding BMP, GIF, JPEG and PNG bytes (the "Encoding and Decoding" section of TF's
image_ops_impl.py; aicslib has no encoders). Kernels: aicslib/kernels/decode_image_op.py.
"""
from ..framework import dtypes
from ..framework.execute import apply_op
from .image_color import convert_image_dtype


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """Decodes BMP, GIF, JPEG or PNG bytes (by their signature) to ``uint8``.

    ``channels``: 0/None as stored, 1 grayscale, 3 RGB, 4 RGBA. GIFs are
    ``[frames, h, w, 3]`` unless ``expand_animations=False``. A float
    ``dtype`` converts with ``convert_image_dtype`` (to [0, 1]). Bad data:
    ``InvalidArgumentError`` (when the op runs).
    """
    img = apply_op("DecodeImage", [contents], {"channels": int(channels or 0),
                                               "expand_animations": bool(expand_animations)}, name=name)
    dtype = dtypes.as_dtype(dtype)
    return img if dtype == dtypes.uint8 else convert_image_dtype(img, dtype)


def decode_jpeg(contents, channels=0, name=None):
    return apply_op("DecodeJpeg", [contents], {"channels": int(channels)}, name=name)


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    if dtypes.as_dtype(dtype) != dtypes.uint8:
        raise TypeError("aicslib decodes PNG to uint8 only (there is no uint16 dtype).")
    return apply_op("DecodePng", [contents], {"channels": int(channels)}, name=name)


def decode_bmp(contents, channels=0, name=None):
    return apply_op("DecodeBmp", [contents], {"channels": int(channels)}, name=name)


def decode_gif(contents, name=None):
    return apply_op("DecodeGif", [contents], name=name)
