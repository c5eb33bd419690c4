"""Plausible wrong answers for notebook 05 (preprocessing), and different correct ones.

Each wrong answer replaces the release stub of its solution cell and must lose exactly that
exercise's points; each correct one must score full marks.
"""

# The reference's lerp (TF's order): top + (bottom - top) * w, in float32.
_WEIGHTS = """
def weights(in_size, out_size):
    s = np.float32(in_size) / np.float32(out_size)
    src = ((np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * s - np.float32(0.5)).astype(np.float32)
    lo = np.maximum(np.floor(src).astype(int), 0)
    hi = np.minimum(np.ceil(src).astype(int), in_size - 1)
    return lo, hi, (src - np.floor(src)).astype(np.float32)
"""

_RESIZE_TF_ORDER = """
x = images.astype(np.float32)
_, H, W, _ = x.shape
""" + _WEIGHTS + """
y0, y1, ly = weights(H, out_h)
x0, x1, lx = weights(W, out_w)
lx = lx[None, None, :, None]
top = x[:, y0][:, :, x0] + (x[:, y0][:, :, x1] - x[:, y0][:, :, x0]) * lx
bottom = x[:, y1][:, :, x0] + (x[:, y1][:, :, x1] - x[:, y1][:, :, x0]) * lx
"""


WRONG_ANSWERS = {
    "my_resize_bilinear": {
        # the library's own implementation
        "library_call": """
return aics.image.resize(images, [out_h, out_w]).numpy()
""",
        "no_half_pixel_centres": """
x = images.astype(np.float32)
_, H, W, _ = x.shape

def weights(in_size, out_size):
    src = np.arange(out_size, dtype=np.float32) * np.float32(in_size / out_size)
    lo = np.minimum(np.floor(src).astype(int), in_size - 1)
    hi = np.minimum(lo + 1, in_size - 1)
    return lo, hi, (src - np.floor(src)).astype(np.float32)

y0, y1, ly = weights(H, out_h)
x0, x1, lx = weights(W, out_w)
lx = lx[None, None, :, None]
top = x[:, y0][:, :, x0] + (x[:, y0][:, :, x1] - x[:, y0][:, :, x0]) * lx
bottom = x[:, y1][:, :, x0] + (x[:, y1][:, :, x1] - x[:, y1][:, :, x0]) * lx
return (top + (bottom - top) * ly[None, :, None, None]).astype(np.float32)
""",
        "nearest_neighbour": """
_, H, W, _ = images.shape
rows = np.minimum(((np.arange(out_h) + 0.5) * H / out_h).astype(int), H - 1)
cols = np.minimum(((np.arange(out_w) + 0.5) * W / out_w).astype(int), W - 1)
return images[:, rows][:, :, cols].astype(np.float32)
""",
        # TF1's align_corners=True sampling instead of TF2's half-pixel centres
        "align_corners_coordinates": """
x = images.astype(np.float64)
_, H, W, _ = x.shape

def weights(in_size, out_size):
    src = np.arange(out_size) * ((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0)
    return np.floor(src).astype(int), np.minimum(np.ceil(src).astype(int), in_size - 1), src - np.floor(src)

y0, y1, ly = weights(H, out_h)
x0, x1, lx = weights(W, out_w)
lx, ly = lx[None, None, :, None], ly[None, :, None, None]
top = x[:, y0][:, :, x0] * (1 - lx) + x[:, y0][:, :, x1] * lx
bottom = x[:, y1][:, :, x0] * (1 - lx) + x[:, y1][:, :, x1] * lx
return (top * (1 - ly) + bottom * ly).astype(np.float32)
""",
        # no clamp at the top/left edge: floor(-0.25) = -1 picks the last row (NumPy's negative index)
        "no_clamp_below_zero": """
x = images.astype(np.float32)
_, H, W, _ = x.shape

def weights(in_size, out_size):
    src = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * np.float32(in_size / out_size) - np.float32(0.5)
    lo = np.floor(src).astype(int)
    hi = np.minimum(np.ceil(src).astype(int), in_size - 1)
    return lo, hi, (src - np.floor(src)).astype(np.float32)

y0, y1, ly = weights(H, out_h)
x0, x1, lx = weights(W, out_w)
lx = lx[None, None, :, None]
top = x[:, y0][:, :, x0] + (x[:, y0][:, :, x1] - x[:, y0][:, :, x0]) * lx
bottom = x[:, y1][:, :, x0] + (x[:, y1][:, :, x1] - x[:, y1][:, :, x0]) * lx
return (top + (bottom - top) * ly[None, :, None, None]).astype(np.float32)
""",
        # the weight y - floor(y) put on the first neighbour instead of the second
        "weights_swapped": _RESIZE_TF_ORDER.replace("* lx\n", "* (1 - lx)\n") + """
return (top + (bottom - top) * (1 - ly)[None, :, None, None]).astype(np.float32)
""",
        # the package's reference, called
        "calls_the_package_reference": """
from workbook.references.image_resize import bilinear_brute
return bilinear_brute(images, out_h, out_w).astype(np.float32)
""",
        # the package's reference, copied: right values, one Python iteration per output pixel
        "copies_the_package_reference": """
import math
n, h, w, c = images.shape
img64 = images.astype(np.float64)
out = np.zeros((n, out_h, out_w, c))
for b in range(n):
    for i in range(out_h):
        y = (i + 0.5) * h / out_h - 0.5
        y0, y1, wy = max(math.floor(y), 0), min(math.ceil(y), h - 1), y - math.floor(y)
        for j in range(out_w):
            x = (j + 0.5) * w / out_w - 0.5
            x0, x1, wx = max(math.floor(x), 0), min(math.ceil(x), w - 1), x - math.floor(x)
            top = img64[b, y0, x0] * (1 - wx) + img64[b, y0, x1] * wx
            bottom = img64[b, y1, x0] * (1 - wx) + img64[b, y1, x1] * wx
            out[b, i, j] = top * (1 - wy) + bottom * wy
return out.astype(np.float32)
""",
        # right values, float64 returned
        "float64_result": _RESIZE_TF_ORDER + """
return (top + (bottom - top) * ly[None, :, None, None]).astype(np.float64)
""",
    },
}

CORRECT_ANSWERS = {
    "my_resize_bilinear": {
        # the textbook lerp (1 - w) * a + w * b in float32: one ulp away from TF's a + (b - a) * w
        "textbook_lerp_float32": """
x = images.astype(np.float32)
_, H, W, _ = x.shape
""" + _WEIGHTS + """
y0, y1, ly = weights(H, out_h)
x0, x1, lx = weights(W, out_w)
lx, ly = lx[None, None, :, None], ly[None, :, None, None]
one = np.float32(1)
top = (one - lx) * x[:, y0][:, :, x0] + lx * x[:, y0][:, :, x1]
bottom = (one - lx) * x[:, y1][:, :, x0] + lx * x[:, y1][:, :, x1]
return ((one - ly) * top + ly * bottom).astype(np.float32)
""",
        # everything in float64 (coordinates too), cast to float32 at the end
        "float64_then_cast": """
x = images.astype(np.float64)
_, H, W, _ = x.shape

def weights(in_size, out_size):
    src = (np.arange(out_size) + 0.5) * in_size / out_size - 0.5
    lo = np.maximum(np.floor(src).astype(int), 0)
    hi = np.minimum(np.ceil(src).astype(int), in_size - 1)
    return lo, hi, src - np.floor(src)

y0, y1, ly = weights(H, out_h)
x0, x1, lx = weights(W, out_w)
lx, ly = lx[None, None, :, None], ly[None, :, None, None]
top = x[:, y0][:, :, x0] * (1 - lx) + x[:, y0][:, :, x1] * lx
bottom = x[:, y1][:, :, x0] * (1 - lx) + x[:, y1][:, :, x1] * lx
return (top * (1 - ly) + bottom * ly).astype(np.float32)
""",
        # rows first, then columns
        "rows_first": """
x = images.astype(np.float32)
_, H, W, _ = x.shape
""" + _WEIGHTS + """
y0, y1, ly = weights(H, out_h)
x0, x1, lx = weights(W, out_w)
rows = x[:, y0] + (x[:, y1] - x[:, y0]) * ly[None, :, None, None]
return (rows[:, :, x0] + (rows[:, :, x1] - rows[:, :, x0]) * lx[None, None, :, None]).astype(np.float32)
""",
        # a loop over the 2 x 2 neighbours (taps), each weighted by the product of its row and column weights
        "loop_over_taps": """
x = images.astype(np.float32)
_, H, W, C = x.shape
""" + _WEIGHTS + """
y0, y1, ly = weights(H, out_h)
x0, x1, lx = weights(W, out_w)
out = np.zeros((x.shape[0], out_h, out_w, C), np.float32)
one = np.float32(1)
for rows, wy in ((y0, one - ly), (y1, ly)):
    for cols, wx in ((x0, one - lx), (x1, lx)):
        out += x[:, rows][:, :, cols] * (wy[:, None] * wx[None, :])[None, :, :, None]
return out
""",
    },
}

WRONG_ANSWERS["caffe_preprocess"] = {
    # the mean subtracted in RGB order, then the channels reversed: each channel gets another's mean
    "mean_before_the_flip": """
x = np.asarray(images, np.float32) - np.array([103.939, 116.779, 123.68], np.float32)
return x[..., ::-1]
""",
    # keeps RGB
    "forgets_bgr": """
return np.asarray(images, np.float32) - np.array([103.939, 116.779, 123.68], np.float32)
""",
    # the tf mode's scaling mixed in
    "scales_to_unit_range": """
x = np.asarray(images, np.float32)[..., ::-1]
return (x - np.array([103.939, 116.779, 123.68], np.float32)) / 127.5
""",
    # uint8 arithmetic: wraps around below zero
    "uint8_arithmetic": """
x = np.asarray(images)[..., ::-1]
return (x - np.array([104, 117, 124], x.dtype)).astype(np.float32)
""",
    # the shortcut: the library's function
    "calls_the_library": """
return preprocess_input(images, mode="caffe")
""",
    # the package's reference
    "copies_the_package_reference": """
from workbook.references.image_resize import caffe_preprocess
return caffe_preprocess(images)
""",
}
CORRECT_ANSWERS["caffe_preprocess"] = {
    # in float64, channel by channel, then cast
    "float64_per_channel": """
x = np.asarray(images, np.float64)
out = np.empty(x.shape, np.float32)
for c, mean in enumerate((103.939, 116.779, 123.68)):
    out[..., c] = (x[..., 2 - c] - np.float32(mean)).astype(np.float32)
return out
""",
}
