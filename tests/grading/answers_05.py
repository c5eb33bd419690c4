"""Plausible wrong answers for notebook 05 (convolution-internals), and other correct ones.

Each replaces the release stub of ``my_im2col(x, kh, kw, stride, padding)`` (after the scaffold's
``N, H, W, C = x.shape`` and ``ph, pw = ...``); a wrong one must lose the exercise's 3 points inside
its locked test cell, a correct one must score them.
"""

# The output size and the paddings, TF's rule, as most answers compute them.
_GEOMETRY = """
def size_and_pads(n, k, pad):
    if pad == "VALID":
        return (n - k) // stride + 1, 0, 0
    if pad == "SAME":
        out = (n + stride - 1) // stride
        total = max((out - 1) * stride + k - n, 0)
        return out, total // 2, total - total // 2
    return (n + pad[0] + pad[1] - k) // stride + 1, pad[0], pad[1]

Ho, pt, pb = size_and_pads(H, kh, ph)
Wo, pl, pr = size_and_pads(W, kw, pw)
"""

# One strided slice per tap, stacked in (i, j, c) order.
_TAPS = """
xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
taps = [xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
        for i in range(kh) for j in range(kw)]
return np.stack(taps, axis=3).reshape(N * Ho * Wo, kh * kw * C)
"""

WRONG_ANSWERS = {
    "my_im2col": {
        # aicslib's own im2col (the geometry, the padding and the strided view)
        "library_call": """
Ho, pt, pb = get_windowed_output_size(H, kh, stride, 1, ph)
Wo, pl, pr = get_windowed_output_size(W, kw, stride, 1, pw)
xp = c2d.pad_nhwc(x, pt, pb, pl, pr)
return np.ascontiguousarray(c2d.im2col_view(xp, kh, kw, Ho, Wo, (stride, stride))).reshape(N * Ho * Wo, kh * kw * C)
""",
        # the old scaffold's helper: the SAME rule is what the exercise asks for
        "library_output_size": """
Ho, pt, pb = get_windowed_output_size(H, kh, stride, 1, ph)
Wo, pl, pr = get_windowed_output_size(W, kw, stride, 1, pw)
""" + _TAPS,
        # the package's reference, called
        "package_reference": """
from workbook.references.im2col import im2col as _reference
return _reference(x, kh, kw, stride, padding)
""",
        # the definition, one output pixel at a time: right values, a Python loop per pixel
        "loop_per_pixel": _GEOMETRY + """
out = np.zeros((N * Ho * Wo, kh * kw * C), dtype=x.dtype)
for n in range(N):
    for oh in range(Ho):
        for ow in range(Wo):
            row = (n * Ho + oh) * Wo + ow
            for i in range(kh):
                for j in range(kw):
                    r, c = oh * stride + i - pt, ow * stride + j - pl
                    if 0 <= r < H and 0 <= c < W:
                        out[row, (i * kw + j) * C:(i * kw + j + 1) * C] = x[n, r, c]
return out
""",
        "channel_major_columns": _GEOMETRY + """
xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
taps = [xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
        for i in range(kh) for j in range(kw)]
return np.stack(taps, axis=-1).reshape(N * Ho * Wo, kh * kw * C)
""",
        # the larger half of the SAME padding on top: the odd pixel goes before
        "symmetric_padding": _GEOMETRY + """
xp = np.pad(x, ((0, 0), (pb, pb), (pr, pr), (0, 0)))
taps = [xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
        for i in range(kh) for j in range(kw)]
return np.stack(taps, axis=3).reshape(N * Ho * Wo, kh * kw * C)
""",
        "odd_pixel_before": _GEOMETRY.replace("total // 2, total - total // 2", "total - total // 2, total // 2")
        + _TAPS,
        "stride_ignored": _GEOMETRY + """
xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
taps = [xp[:, i:i + Ho, j:j + Wo] for i in range(kh) for j in range(kw)]
return np.stack(taps, axis=3).reshape(N * Ho * Wo, kh * kw * C)
""",
        # SAME as "the output is as large as the input", whatever the stride
        "same_size_ignores_stride": _GEOMETRY.replace("out = (n + stride - 1) // stride", "out = n") + _TAPS,
        # the total SAME padding without max(., 0): negative when the window is smaller than the stride
        "negative_padding": _GEOMETRY.replace("max((out - 1) * stride + k - n, 0)", "(out - 1) * stride + k - n")
        + _TAPS,
        "valid_one_row_short": _GEOMETRY.replace("return (n - k) // stride + 1, 0, 0", "return (n - k) // stride, 0, 0")
        + _TAPS,
        # float64 scratch space: the values are right, the dtype is not the input's
        "float64_matrix": _GEOMETRY + """
xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
out = np.zeros((N, Ho, Wo, kh, kw, C))
for i in range(kh):
    for j in range(kw):
        out[:, :, :, i, j] = xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
return out.reshape(N * Ho * Wo, kh * kw * C)
""",
    },
}

CORRECT_ANSWERS = {
    "my_im2col": {
        # a loop over the taps writing into a preallocated array; math.ceil for the sizes
        "tap_loop_into_array": """
import math

def geometry(n, k, pad):
    if pad == "SAME":
        out = math.ceil(n / stride)
        total = max(0, (out - 1) * stride + k - n)
        return out, total // 2, (total + 1) // 2
    if pad == "VALID":
        return math.ceil((n - k + 1) / stride), 0, 0
    before, after = pad
    return (n + before + after - k) // stride + 1, before, after

Ho, top, bottom = geometry(H, kh, ph)
Wo, left, right = geometry(W, kw, pw)
xp = np.zeros((N, H + top + bottom, W + left + right, C), dtype=x.dtype)
xp[:, top:top + H, left:left + W] = x
out = np.empty((N, Ho, Wo, kh, kw, C), dtype=x.dtype)
for i in range(kh):
    for j in range(kw):
        out[:, :, :, i, j, :] = xp[:, i:i + stride * Ho:stride, j:j + stride * Wo:stride][:, :Ho, :Wo]
return out.reshape(N * Ho * Wo, kh * kw * C)
""",
        # NumPy's sliding_window_view: every window at once, then every stride-th one
        "sliding_window_view": _GEOMETRY + """
from numpy.lib.stride_tricks import sliding_window_view

xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
windows = sliding_window_view(xp, (kh, kw), axis=(1, 2))[:, ::stride, ::stride][:, :Ho, :Wo]   # N, Ho, Wo, C, kh, kw
return np.ascontiguousarray(windows.transpose(0, 1, 2, 4, 5, 3)).reshape(N * Ho * Wo, kh * kw * C)
""",
        # no loop at all: index arrays for the rows and columns every (pixel, tap) reads
        "fancy_indexing": _GEOMETRY + """
xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
rows = (np.arange(Ho) * stride)[:, None, None, None] + np.arange(kh)[None, None, :, None]
cols = (np.arange(Wo) * stride)[None, :, None, None] + np.arange(kw)[None, None, None, :]
return xp[:, rows, cols].reshape(N * Ho * Wo, kh * kw * C)
""",
    },
}
