"""References for notebook 05's exercises (sections 8 and 9): bilinear resizing as TF2's
``tf.image.resize`` defines it, and "short side to 256, centre crop 224".

Bilinear with half-pixel centres (TF2, no antialias): output row ``i`` of ``out_h`` samples the
input row coordinate

    y = (i + 0.5) * H / out_h - 0.5,

between the neighbours ``max(floor(y), 0)`` and ``min(ceil(y), H - 1)`` with weight
``y - floor(y)`` on the lower one (rows below the first and past the last are clamped to the
edge); columns alike; the output is the weighted sum of the 2 x 2 neighbours.

Both functions compute in float64 straight from these formulas, one output pixel (or row) at a
time with Python loops: slow, exact, independent of aicslib's kernels. They are what the locked
tests compare an answer with and what the cells below an unanswered exercise show. They are not
answers: the exercises forbid a Python loop per pixel (or row), and ``grading.no_library_calls``
rejects calling them.
"""
import math

import numpy as np


def _neighbours(i, in_size, out_size, offset=0):
    """(lower index, upper index, weight of the upper one) for output index ``i`` (plus
    ``offset``, the position of a crop in a larger resized image)."""
    src = (offset + i + 0.5) * in_size / out_size - 0.5
    lo, hi = max(math.floor(src), 0), min(math.ceil(src), in_size - 1)
    return lo, hi, src - math.floor(src)


def bilinear_brute(images, out_h, out_w):
    """[N, H, W, C] -> [N, out_h, out_w, C] float64: half-pixel centres, edges clamped, no
    antialias; one output pixel at a time."""
    images = np.asarray(images, np.float64)
    n, h, w, c = images.shape
    out = np.zeros((n, out_h, out_w, c))
    for b in range(n):
        img = images[b]
        for i in range(out_h):
            y0, y1, wy = _neighbours(i, h, out_h)
            for j in range(out_w):
                x0, x1, wx = _neighbours(j, w, out_w)
                top = img[y0, x0] * (1 - wx) + img[y0, x1] * wx
                bottom = img[y1, x0] * (1 - wx) + img[y1, x1] * wx
                out[b, i, j] = top * (1 - wy) + bottom * wy
    return out


def short_side_size(h, w, short):
    """(new_h, new_w): the short side becomes ``short``, the long one is scaled by the same
    factor and rounded half up."""
    if h <= w:
        return short, int(w * short / h + 0.5)
    return int(h * short / w + 0.5), short


def short_side_crop(img_u8, short=256, crop=224):
    """[H, W, C] uint8 -> [crop, crop, C] float64 in [0, 1]: resized (bilinear, half-pixel
    centres) so that the short side is ``short``, then the central ``crop`` x ``crop``; only the
    kept pixels are computed, one output row at a time."""
    img = np.asarray(img_u8, np.float64) / 255.0
    h, w, c = img.shape
    new_h, new_w = short_side_size(h, w, short)
    top, left = (new_h - crop) // 2, (new_w - crop) // 2
    cols = [_neighbours(j, w, new_w, left) for j in range(crop)]
    x0 = np.array([lo for lo, _, _ in cols])
    x1 = np.array([hi for _, hi, _ in cols])
    wx = np.array([wt for _, _, wt in cols])[:, None]
    out = np.zeros((crop, crop, c))
    for i in range(crop):
        y0, y1, wy = _neighbours(i, h, new_h, top)
        upper = img[y0, x0] * (1 - wx) + img[y0, x1] * wx
        lower = img[y1, x0] * (1 - wx) + img[y1, x1] * wx
        out[i] = upper * (1 - wy) + lower * wy
    return out


CAFFE_MEAN_BGR = (103.939, 116.779, 123.68)


def caffe_preprocess(images):
    """Keras's ``preprocess_input(mode="caffe")`` for channels-last RGB: BGR order, ImageNet's
    per-channel mean subtracted, float32, no scaling."""
    return np.asarray(images, np.float32)[..., ::-1] - np.asarray(CAFFE_MEAN_BGR, np.float32)
