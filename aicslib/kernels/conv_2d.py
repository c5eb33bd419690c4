"""What Conv2D, its two backprops and the depthwise kernels share.

TF keeps these in headers: the conv parameters and their checks in
core/kernels/conv_ops.h (``Conv2DParameters``, ``ComputeConv2DDimension``),
the padding and im2col functors in core/kernels/conv_2d.h. Layouts follow
TensorFlow: input NHWC ``(N, H, W, C)``, filter HWIO ``(kh, kw, C, K)``.
``strides``/``dilations`` are ``(sh, sw)`` (an int, or 1, 2 or 4 ints, are
accepted) and ``padding`` is ``"SAME"``, ``"VALID"`` or explicit
``[(top, bottom), (left, right)]``. The output size along one axis is the
framework's :func:`~aicslib.framework.kernel_shape_util.get_windowed_output_size`.

=========================  ============================================================
``conv_geometry``          every size a conv needs (``N, H, ..., Ho, Wo, pt, pb, pl, pr``)
``pad_nhwc``               zero-pad H and W
``im2col_view``            the im2col matrix as a strided view (no copy)
``backprop_input_padding`` stride 1: the padding that makes the input gradient a forward conv
``backprop_*_operands``    a backprop's operands in the working type, its geometry, TF's checks
``as_floats``              operands in the working type (float32, or float64)
``conv_args_from_attrs``   TF attrs (4-element lists) -> ``(strides, padding, dilations)``
``run_forward`` & co.      a kernel's body: attrs and layout around an NHWC function
=========================  ============================================================
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..framework.errors import InvalidArgumentError, UnimplementedError
from ..framework.kernel_shape_util import get_windowed_output_size
from .conv_layout import nchw_to_nhwc, nhwc_to_nchw

__all__ = [
    "hw_pair", "padding_pairs", "conv_geometry", "pad_nhwc", "im2col_view",
    "backprop_input_padding", "backprop_input_operands", "backprop_filter_operands", "as_floats",
    "conv_args_from_attrs", "to_nhwc", "from_nhwc", "cast_like",
    "sizes_nhwc", "run_forward", "run_backprop_input", "run_backprop_filter",
]

_F32 = np.float32


def hw_pair(v, name):
    """``(h, w)`` from an int or a list of 1, 2 or 4 (NHWC) ints: strides, dilations."""
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v[0], v[0]
    if len(v) == 2:
        return v
    if len(v) == 4:          # NHWC-style [1, sh, sw, 1]
        return v[1], v[2]
    raise ValueError(f"{name} must be an int or a list of 1, 2 or 4 ints, got {v!r}")


def padding_pairs(padding):
    """``"SAME"``/``"VALID"`` pass through; explicit padding -> ((t, b), (l, r)).

    Explicit padding may be given as 2 pairs (H, W) or 4 pairs (N, H, W, C) as
    in TensorFlow's ``explicit_paddings`` for NHWC.
    """
    if isinstance(padding, str):
        return padding, padding
    pairs = [tuple(int(a) for a in p) for p in padding]
    if len(pairs) == 4:
        pairs = pairs[1:3]
    if len(pairs) != 2 or any(len(p) != 2 for p in pairs):
        raise ValueError(f"explicit padding must be [(top, bottom), (left, right)], got {padding!r}")
    return pairs[0], pairs[1]


def conv_geometry(x_shape, w_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """All the numbers a 2-D convolution needs, as a dict.

    Keys: ``N, H, W, C, kh, kw, K, sh, sw, dh, dw, Ho, Wo, pt, pb, pl, pr``.
    """
    N, H, W, C = x_shape
    kh, kw, C2, K = w_shape
    if C != C2:
        raise ValueError(f"input depth {C} must equal filter in-depth {C2}: "
                         f"input shape {tuple(x_shape)}, filter shape {tuple(w_shape)}")
    sh, sw = hw_pair(strides, "strides")
    dh, dw = hw_pair(dilations, "dilations")
    if min(sh, sw, dh, dw) < 1:
        raise ValueError(f"strides and dilations must be >= 1, got {strides!r}, {dilations!r}")
    pad_h, pad_w = padding_pairs(padding)
    Ho, pt, pb = get_windowed_output_size(H, kh, sh, dh, pad_h)
    Wo, pl, pr = get_windowed_output_size(W, kw, sw, dw, pad_w)
    return dict(N=N, H=H, W=W, C=C, kh=kh, kw=kw, K=K, sh=sh, sw=sw, dh=dh, dw=dw,
                Ho=Ho, Wo=Wo, pt=pt, pb=pb, pl=pl, pr=pr)


def pad_nhwc(x, top, bottom, left, right):
    """Zero-pad the H and W axes of an NHWC array (a new float32 array)."""
    if top == bottom == left == right == 0:
        return x
    N, H, W, C = x.shape
    out = np.zeros((N, H + top + bottom, W + left + right, C), dtype=x.dtype)
    out[:, top:top + H, left:left + W] = x
    return out


def im2col_view(xp, kh, kw, Ho, Wo, strides=(1, 1), dilations=(1, 1)):
    """The im2col matrix of a padded NHWC input, as a *view* (no copy).

    Returns an array of shape ``(N, Ho, Wo, kh, kw, C)`` whose element
    ``[n, oh, ow, i, j, c]`` is ``xp[n, oh*sh + i*dh, ow*sw + j*dw, c]``:
    row ``(n, oh, ow)`` of the im2col matrix is the receptive field of output
    pixel ``(oh, ow)``. Only the strides differ from ``xp``; reshaping it to
    ``(N*Ho*Wo, kh*kw*C)`` is where the data get copied.
    """
    sh, sw = strides
    dh, dw = dilations
    N, _, _, C = xp.shape
    s_n, s_h, s_w, s_c = xp.strides
    return as_strided(xp, shape=(N, Ho, Wo, kh, kw, C),
                      strides=(s_n, s_h * sh, s_w * sw, s_h * dh, s_w * dw, s_c),
                      writeable=False)


def as_floats(*arrays):
    """The arrays as contiguous float32, or float64 when any of them is float64.

    float32 is the working type (half/bfloat16/ints are computed in float32);
    float64 is kept so that gradients can be checked numerically.
    """
    arrays = [np.asarray(a) for a in arrays]
    dt = np.float64 if any(a.dtype == np.float64 for a in arrays) else _F32
    out = [np.ascontiguousarray(a, dtype=dt) for a in arrays]
    return out if len(out) > 1 else out[0]


def backprop_input_padding(input_shape, g):
    """For stride 1 the input gradient is itself a convolution ("full"
    correlation) of dY with the filter rotated by 180 degrees (for Conv2D also
    with its in/out channels swapped):
    ``dx = conv(dY, rot180(W), padding=((k-1)*d - pad_before, ...))``.

    ``g`` is the forward :func:`conv_geometry`. Returns that explicit padding
    ``[(top, bottom), (left, right)]``, or None if part of it would be negative
    (an explicit padding wider than the dilated filter: then the caller uses
    col2im).
    """
    kh, kw, dh, dw = g["kh"], g["kw"], g["dh"], g["dw"]
    H, W = int(input_shape[1]), int(input_shape[2])
    pt, pl = (kh - 1) * dh - g["pt"], (kw - 1) * dw - g["pl"]
    pb, pr = H - g["Ho"] - pt + (kh - 1) * dh, W - g["Wo"] - pl + (kw - 1) * dw
    if min(pt, pb, pl, pr) < 0:
        return None
    return [(pt, pb), (pl, pr)]


def check_out_backprop(dy, g, input_shape, filter_shape, depthwise=False):
    """TF's error when ``dy`` is not the shape of the forward's output (``g``, its geometry;
    a depthwise conv's output has ``C * M`` channels)."""
    want = (g["N"], g["Ho"], g["Wo"], g["C"] * g["K"] if depthwise else g["K"])
    if tuple(dy.shape) != want:
        raise ValueError(f"out_backprop shape {dy.shape} does not match the forward output {want} of input "
                         f"{tuple(input_shape)} and filter {tuple(filter_shape)}")


def backprop_input_operands(dy, w, input_shape, strides, padding, dilations, depthwise=False):
    """``(dy, w, g)`` of an input gradient: the operands in the working type and the forward's
    geometry, after checking that ``dy`` has the forward output's shape."""
    dy, w = as_floats(dy, w)
    input_shape = tuple(int(s) for s in input_shape)
    g = conv_geometry(input_shape, w.shape, strides, padding, dilations)
    check_out_backprop(dy, g, input_shape, w.shape, depthwise)
    return dy, w, g


def backprop_filter_operands(x, dy, filter_shape, strides, padding, dilations, depthwise=False):
    """``(x, dy, g)`` of a filter gradient, as :func:`backprop_input_operands`."""
    x, dy = as_floats(x, dy)
    filter_shape = tuple(int(s) for s in filter_shape)
    g = conv_geometry(x.shape, filter_shape, strides, padding, dilations)
    check_out_backprop(dy, g, x.shape, filter_shape, depthwise)
    return x, dy, g


# Kernel helpers: like TF's Conv2DOp::Compute the kernels read the attrs, work
# out the layout and padding, and call the NHWC functions.


# TF's reference kernels refuse strides and dilations in the batch and depth dimensions with
# these classes (conv_ops.cc, conv_grad_*_ops.cc, depthwise_conv_op.cc, TF 2.21 with oneDNN off).
_STRIDE_ERRORS = {"Conv2D": UnimplementedError, "Conv2DBackpropInput": UnimplementedError}
_DILATION_ERRORS = {"Conv2DBackpropFilter": InvalidArgumentError}


def conv_args_from_attrs(strides, padding, explicit_paddings, data_format, dilations, op_type):
    """TF attrs (4-element lists in data_format order) -> (strides, padding, dilations) pairs,
    after TF's checks of the batch and depth entries, which the NHWC functions never read."""
    hi, wi = (1, 2) if data_format == "NHWC" else (2, 3)
    n, c = 0, 3 if data_format == "NHWC" else 1
    for what, v in (("strides", strides), ("dilations", dilations)):
        if len(v) != 4:
            raise InvalidArgumentError(None, None, f"Sliding window {what} field must specify 4 "
                                                   f"dimensions")
    if strides[n] != 1 or strides[c] != 1:
        raise _STRIDE_ERRORS.get(op_type, InvalidArgumentError)(
            None, None, "Current implementation does not yet support strides in the batch and "
                        "depth dimensions.")
    if dilations[n] != 1 or dilations[c] != 1:
        raise _DILATION_ERRORS.get(op_type, UnimplementedError)(
            None, None, "Current implementation does not yet support dilations in the batch and "
                        "depth dimensions.")
    if padding == "EXPLICIT":
        p = list(explicit_paddings)
        pad = [(p[2 * hi], p[2 * hi + 1]), (p[2 * wi], p[2 * wi + 1])]
    else:
        pad = padding
    return (strides[hi], strides[wi]), pad, (dilations[hi], dilations[wi])


def to_nhwc(x, data_format):
    """``x`` in NHWC (transposed from NCHW when ``data_format`` says so)."""
    return x if data_format == "NHWC" else nchw_to_nhwc(x)


def from_nhwc(y, data_format):
    """An NHWC result back in ``data_format``."""
    return y if data_format == "NHWC" else nhwc_to_nchw(y)


def cast_like(result, like):
    """``result`` in the dtype of ``like`` (the working type is float32/float64)."""
    return result if result.dtype == like.dtype else result.astype(like.dtype)


def sizes_nhwc(sizes, data_format):
    """An ``input_sizes`` tensor (4 ints in ``data_format`` order) as an NHWC shape list."""
    s = [int(v) for v in np.asarray(sizes).reshape(-1)]
    if len(s) != 4:
        raise ValueError(f"sizes must have 4 elements, got {s}")
    return s if data_format == "NHWC" else [s[0], s[2], s[3], s[1]]


# The bodies of the convolution kernels (Conv2D and DepthwiseConv2dNative, each with its two
# backprops; the NumPy reference kernels and the speed layer's alike): TF's attrs in, the NHWC
# function of the algorithm called, the result back in the op's layout and dtype.

def run_forward(nhwc_conv, op_type, input, filter, strides, padding, explicit_paddings,
                data_format, dilations):
    """``nhwc_conv(x, w, strides, padding, dilations)`` on the op's operands, as a forward kernel."""
    s, p, d = conv_args_from_attrs(strides, padding, explicit_paddings, data_format, dilations, op_type)
    y = nhwc_conv(to_nhwc(input, data_format), filter, s, p, d)
    return cast_like(from_nhwc(y, data_format), input)


def run_backprop_input(nhwc_grad, op_type, input_sizes, filter, out_backprop, strides, padding,
                       explicit_paddings, data_format, dilations):
    """``nhwc_grad(dy, w, input_shape, strides, padding, dilations)``, as a backprop-input kernel."""
    s, p, d = conv_args_from_attrs(strides, padding, explicit_paddings, data_format, dilations, op_type)
    dx = nhwc_grad(to_nhwc(out_backprop, data_format), filter, sizes_nhwc(input_sizes, data_format), s, p, d)
    return cast_like(from_nhwc(dx, data_format), out_backprop)


def run_backprop_filter(nhwc_grad, op_type, input, filter_sizes, out_backprop, strides, padding,
                        explicit_paddings, data_format, dilations):
    """``nhwc_grad(x, dy, filter_shape, strides, padding, dilations)``, as a backprop-filter kernel."""
    s, p, d = conv_args_from_attrs(strides, padding, explicit_paddings, data_format, dilations, op_type)
    fs = [int(v) for v in np.asarray(filter_sizes).reshape(-1)]
    dw = nhwc_grad(to_nhwc(input, data_format), to_nhwc(out_backprop, data_format), fs, s, p, d)
    return cast_like(dw, input)
