"""Plausible wrong answers for notebook 12 (convolution-internals), and other correct ones.

The lab "convolution as GEMM, both ways" has four exercises; each answer replaces the release stub of
one of them (after its scaffold lines):

- ``my_conv_output_size(n, k, stride, padding)`` (2 points);
- ``my_im2col(x, kh, kw, stride, padding)`` (3), after ``N, H, W, C = x.shape`` and ``ph, pw = ...``;
- ``my_conv2d_backprop_filter(x, dy, filter_shape, stride, padding)`` (3), after ``kh, kw, C, K = filter_shape``;
- ``my_conv2d_backprop_input(dy, w, x_shape, stride, padding)`` (4), after ``N, H, W, C = x_shape``,
  ``kh, kw, _, K = w.shape`` and ``ph, pw = ...``.

A wrong one must lose its exercise's points inside the locked test cell, a correct one must score them.
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

_SIZE_RULE = """
if padding == "VALID":
    return (n - k) // stride + 1, 0, 0
if padding == "SAME":
    out = (n + stride - 1) // stride
    total = max((out - 1) * stride + k - n, 0)
    return out, total // 2, total - total // 2
before, after = padding
return (n + before + after - k) // stride + 1, before, after
"""

# The backward passes' geometry, through the student's my_conv_output_size.
_PADS = """
Ho, pt, pb = my_conv_output_size(H, kh, stride, ph)
Wo, pl, pr = my_conv_output_size(W, kw, stride, pw)
"""

# col2im of dcols (N, Ho, Wo, kh, kw, C) into dxp, the tap loop of the reference.
_COL2IM = """
for i in range(kh):
    for j in range(kw):
        dxp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride] += dcols[:, :, :, i, j]
"""

WRONG_ANSWERS = {
    "my_conv_output_size": {
        "library_call": """
if isinstance(padding, str):
    return get_windowed_output_size(n, k, stride, 1, padding)
before, after = padding
return (n + before + after - k) // stride + 1, before, after
""",
        "package_reference": """
from workbook.references.im2col import output_size_and_padding
return output_size_and_padding(n, k, stride, padding)
""",
        "odd_pixel_before": _SIZE_RULE.replace("total // 2, total - total // 2", "total - total // 2, total // 2"),
        # the stride-1 rule for every stride: "SAME pads k - 1"
        "same_pads_k_minus_1": _SIZE_RULE.replace("max((out - 1) * stride + k - n, 0)", "k - 1"),
        "same_size_ignores_stride": _SIZE_RULE.replace("out = (n + stride - 1) // stride", "out = n"),
        "negative_padding": _SIZE_RULE.replace("max((out - 1) * stride + k - n, 0)", "(out - 1) * stride + k - n"),
        "valid_floor_without_plus_one": _SIZE_RULE.replace("return (n - k) // stride + 1, 0, 0",
                                                           "return (n - k) // stride, 0, 0"),
        "valid_rounds_n_over_stride": _SIZE_RULE.replace("return (n - k) // stride + 1, 0, 0",
                                                         "return (n - k + 1) // stride, 0, 0"),
    },
    "my_conv2d_backprop_filter": {
        "library_call": """
return aics.nn.conv2d_backprop_filter(x, filter_shape, dy, [1, stride, stride, 1], padding).numpy()
""",
        "package_reference": """
from workbook.references.conv_backprop import conv2d_backprop_filter
return conv2d_backprop_filter(x, dy, filter_shape, stride, padding)
""",
        # the input gradient's 180-degree rotation, applied where it does not belong
        "rotated_filter": """
cols = my_im2col(x, kh, kw, stride, padding)
return (cols.T @ dy.reshape(-1, K)).reshape(filter_shape)[::-1, ::-1]
""",
        # the loss is a sum, not a mean over the batch
        "averaged_over_batch": """
cols = my_im2col(x, kh, kw, stride, padding)
return (cols.T @ dy.reshape(-1, K)).reshape(filter_shape) / x.shape[0]
""",
        # (K, kh*kw*C) reshaped as if it were (kh*kw*C, K)
        "product_the_wrong_way_round": """
cols = my_im2col(x, kh, kw, stride, padding)
return (dy.reshape(-1, K).T @ cols).reshape(filter_shape)
""",
        "stride_ignored": """
cols = my_im2col(x, kh, kw, 1, padding)
return (cols.T @ dy.reshape(-1, K)).reshape(filter_shape)
""",
        "float64_result": """
cols = my_im2col(x, kh, kw, stride, padding).astype(np.float64)
return (cols.T @ dy.reshape(-1, K).astype(np.float64)).reshape(filter_shape)
""",
        # the definition's sums, one output pixel at a time
        "loop_per_pixel": """
N, H, W, _ = x.shape
ph, pw = (padding, padding) if isinstance(padding, str) else padding
Ho, pt, pb = my_conv_output_size(H, kh, stride, ph)
Wo, pl, pr = my_conv_output_size(W, kw, stride, pw)
xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
dw = np.zeros(filter_shape, dtype=x.dtype)
for oh in range(Ho):
    for ow in range(Wo):
        window = xp[:, oh * stride:oh * stride + kh, ow * stride:ow * stride + kw]
        dw += np.einsum("nijc,nk->ijck", window, dy[:, oh, ow])
return dw
""",
    },
    "my_conv2d_backprop_input": {
        "library_call": """
return aics.nn.conv2d_backprop_input(x_shape, w, dy, [1, stride, stride, 1], padding).numpy()
""",
        "package_reference": """
from workbook.references.conv_backprop import conv2d_backprop_input
return conv2d_backprop_input(dy, w, x_shape, stride, padding)
""",
        # col2im writes instead of adding: overlapping windows keep only the last tap
        "assigns_instead_of_adding": _PADS + """
dcols = (dy.reshape(-1, K) @ w.reshape(-1, K).T).reshape(N, Ho, Wo, kh, kw, C)
dxp = np.zeros((N, H + pt + pb, W + pl + pr, C), dtype=dcols.dtype)
""" + _COL2IM.replace("+=", "=") + "return dxp[:, pt:pt + H, pl:pl + W]\n",
        # the padding cut off at the end only (the top/left padding stays in)
        "crops_the_wrong_side": _PADS + """
dcols = (dy.reshape(-1, K) @ w.reshape(-1, K).T).reshape(N, Ho, Wo, kh, kw, C)
dxp = np.zeros((N, H + pt + pb, W + pl + pr, C), dtype=dcols.dtype)
""" + _COL2IM + "return dxp[:, :H, :W]\n",
        # W reshaped to (K, kh*kw*C) instead of transposed
        "reshape_instead_of_transpose": _PADS + """
dcols = (dy.reshape(-1, K) @ w.reshape(K, -1)).reshape(N, Ho, Wo, kh, kw, C)
dxp = np.zeros((N, H + pt + pb, W + pl + pr, C), dtype=dcols.dtype)
""" + _COL2IM + "return dxp[:, pt:pt + H, pl:pl + W]\n",
        # "the input gradient convolves with the rotated filter", mixed into the GEMM form
        "rotated_filter": _PADS + """
dcols = (dy.reshape(-1, K) @ w[::-1, ::-1].reshape(-1, K).T).reshape(N, Ho, Wo, kh, kw, C)
dxp = np.zeros((N, H + pt + pb, W + pl + pr, C), dtype=dcols.dtype)
""" + _COL2IM + "return dxp[:, pt:pt + H, pl:pl + W]\n",
        "float64_result": _PADS + """
dcols = (dy.reshape(-1, K) @ w.reshape(-1, K).T).reshape(N, Ho, Wo, kh, kw, C)
dxp = np.zeros((N, H + pt + pb, W + pl + pr, C))
""" + _COL2IM + "return dxp[:, pt:pt + H, pl:pl + W]\n",
        "loop_per_pixel": _PADS + """
dxp = np.zeros((N, H + pt + pb, W + pl + pr, C), dtype=dy.dtype)
wm = w.reshape(-1, K).T
for oh in range(Ho):
    for ow in range(Wo):
        dxp[:, oh * stride:oh * stride + kh, ow * stride:ow * stride + kw] += (dy[:, oh, ow] @ wm).reshape(N, kh, kw, C)
return dxp[:, pt:pt + H, pl:pl + W]
""",
    },
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
    "my_conv_output_size": {
        # math.ceil on floats, the VALID size as (n - k)//stride + 1
        "math_ceil": """
import math

if padding == "SAME":
    out = math.ceil(n / stride)
    total = max(0, (out - 1) * stride + k - n)
    return out, total // 2, (total + 1) // 2
if padding == "VALID":
    return (n - k) // stride + 1, 0, 0
return (n + padding[0] + padding[1] - k) // stride + 1, padding[0], padding[1]
""",
    },
    "my_conv2d_backprop_filter": {
        # no im2col matrix: one tensordot per tap over (n, oh, ow), in float64, then cast
        "tap_tensordot_float64": """
N, H, W, _ = x.shape
ph, pw = (padding, padding) if isinstance(padding, str) else padding
Ho, pt, pb = my_conv_output_size(H, kh, stride, ph)
Wo, pl, pr = my_conv_output_size(W, kw, stride, pw)
xp = np.pad(x.astype(np.float64), ((0, 0), (pt, pb), (pl, pr), (0, 0)))
dw = np.empty(filter_shape)
for i in range(kh):
    for j in range(kw):
        patch = xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
        dw[i, j] = np.tensordot(patch, dy.astype(np.float64), axes=([0, 1, 2], [0, 1, 2]))
return dw.astype(x.dtype)
""",
        "einsum": """
cols = my_im2col(x, kh, kw, stride, padding)
return np.einsum("pq,pk->qk", cols, dy.reshape(-1, K)).reshape(filter_shape)
""",
    },
    "my_conv2d_backprop_input": {
        # no loop at all: np.add.at with the (row, column) each (pixel, tap) read
        "add_at": _PADS + """
dcols = (dy.reshape(-1, K) @ w.reshape(-1, K).T).reshape(N, Ho, Wo, kh, kw, C)
rows = (np.arange(Ho) * stride)[:, None, None, None] + np.arange(kh)[None, None, :, None]
cols = (np.arange(Wo) * stride)[None, :, None, None] + np.arange(kw)[None, None, None, :]
rows, cols = np.broadcast_arrays(rows, cols)
dxp = np.zeros((N, H + pt + pb, W + pl + pr, C), dtype=dy.dtype)
np.add.at(dxp, (slice(None), rows, cols), dcols)
return dxp[:, pt:pt + H, pl:pl + W]
""",
        "float64_then_cast": _PADS + """
dcols = (dy.astype(np.float64).reshape(-1, K) @ w.astype(np.float64).reshape(-1, K).T).reshape(N, Ho, Wo, kh, kw, C)
dxp = np.zeros((N, H + pt + pb, W + pl + pr, C))
""" + _COL2IM + "return dxp[:, pt:pt + H, pl:pl + W].astype(dy.dtype)\n",
    },
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
