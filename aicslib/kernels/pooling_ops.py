"""Pooling kernels (TF's core/kernels/maxpooling_op.cc, avgpooling_op.cc), vectorised.

Each kernel loops over the ``kh*kw`` window taps, never over pixels: a tap is
a strided view of the padded input with one element per output pixel.

TF's rules that matter for results:
* MaxPool with SAME padding never picks a padded position (pads are -inf).
* MaxPoolGrad sends each window's gradient to the *first* maximum in
  row-major order; overlapping windows accumulate.
* AvgPool with SAME padding divides by the number of in-image pixels of the window.
"""
import numpy as np

from ..framework.dtypes import bfloat16, float16, float32, float64, int32, int64
from ..framework.errors import InvalidArgumentError, UnimplementedError
from ..framework.kernel_registry import register_kernel
from ..framework.kernel_shape_util import get_windowed_output_size
from .conv_layout import nchw_to_nhwc, nhwc_to_nchw

FLOAT = [float16, bfloat16, float32, float64]


def _check_ksize(ksize):
    for i, k in enumerate(ksize):
        if k <= 0:   # TF (pooling_ops_common.h): a zero window would read no input at all
            raise InvalidArgumentError(None, None, f"Sliding window ksize for dimension {i} was zero.")


def pool_geometry(shape, ksize, strides, padding, data_format):
    """NHWC shape -> (kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr)."""
    hi, wi = (1, 2) if data_format == "NHWC" else (2, 3)
    _check_ksize(ksize)
    kh, kw, sh, sw = ksize[hi], ksize[wi], strides[hi], strides[wi]
    Ho, pt, pb = get_windowed_output_size(shape[1], kh, sh, 1, padding)
    Wo, pl, pr = get_windowed_output_size(shape[2], kw, sw, 1, padding)
    return kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr


def _pad(x, pt, pb, pl, pr, value):
    if pt == pb == pl == pr == 0:
        return x
    N, H, W, C = x.shape
    out = np.full((N, H + pt + pb, W + pl + pr, C), value, dtype=x.dtype)
    out[:, pt:pt + H, pl:pl + W] = x
    return out


def _tap(xp, i, j, sh, sw, Ho, Wo):
    """The input pixel that tap (i, j) of every window reads: a strided (N, Ho, Wo, C) view."""
    return xp[:, i: i + sh * (Ho - 1) + 1: sh, j: j + sw * (Wo - 1) + 1: sw]


def _nhwc(x, data_format):
    return x if data_format == "NHWC" else nchw_to_nhwc(x)


def _back(y, data_format):
    return y if data_format == "NHWC" else nhwc_to_nchw(y)


def _neg_inf(dtype):
    return -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def max_pool(x, ksize, strides, padding):
    """NHWC max pooling; ``ksize``/``strides`` are 4-element NHWC lists."""
    kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr = pool_geometry(x.shape, ksize, strides, padding, "NHWC")
    xp = _pad(x, pt, pb, pl, pr, _neg_inf(x.dtype))
    y = np.empty((x.shape[0], Ho, Wo, x.shape[3]), dtype=x.dtype)
    first = True
    for i in range(kh):
        for j in range(kw):
            if first:
                np.copyto(y, _tap(xp, i, j, sh, sw, Ho, Wo))
                first = False
            else:
                np.maximum(y, _tap(xp, i, j, sh, sw, Ho, Wo), out=y)
    return y


def _first_max_masks(x, y, ksize, strides, padding):
    """Yields (i, j, mask) per tap: mask marks windows whose first maximum is at tap (i, j)."""
    kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr = pool_geometry(x.shape, ksize, strides, padding, "NHWC")
    xp = _pad(x, pt, pb, pl, pr, _neg_inf(x.dtype))
    taken = np.zeros(y.shape, dtype=bool)
    for i in range(kh):
        for j in range(kw):
            hit = _tap(xp, i, j, sh, sw, Ho, Wo) == y
            hit &= ~taken
            taken |= hit
            yield i, j, hit


def max_pool_grad(x, y, grad, ksize, strides, padding):
    """Gradient of max_pool with TF's CPU tie rule (first maximum in row-major order).

    Per window tap, the windows whose first maximum is there (``_first_max_masks``) send their
    gradient to that input pixel; overlapping windows add up. (The speed layer's float32 kernel,
    ``aicslib/accel/pooling.py``, does it in C in one pass over the windows.)
    """
    kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr = pool_geometry(x.shape, ksize, strides, padding, "NHWC")
    N, H, W, C = x.shape
    dxp = np.zeros((N, H + pt + pb, W + pl + pr, C), dtype=grad.dtype)
    zero = grad.dtype.type(0)
    overlapping = sh < kh or sw < kw
    for i, j, hit in _first_max_masks(x, y, ksize, strides, padding):
        dst = _tap(dxp, i, j, sh, sw, Ho, Wo)
        if overlapping:
            dst += np.where(hit, grad, zero)
        else:                                   # each input pixel is in one window at most
            np.copyto(dst, grad, where=hit)
    return np.ascontiguousarray(dxp[:, pt:pt + H, pl:pl + W])


def max_pool_grad_grad(x, y, grad, ksize, strides, padding):
    """Gradient of max_pool_grad with respect to its ``grad``: each window picks
    ``grad`` (input-shaped) at its first maximum."""
    kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr = pool_geometry(x.shape, ksize, strides, padding, "NHWC")
    gp = _pad(grad, pt, pb, pl, pr, 0)
    out = np.zeros(y.shape, dtype=grad.dtype)
    for i, j, hit in _first_max_masks(x, y, ksize, strides, padding):
        np.copyto(out, _tap(gp, i, j, sh, sw, Ho, Wo), where=hit)
    return out


def _avg_counts(shape, ksize, strides, padding, dtype):
    """Number of in-image pixels of each window, shaped (1, Ho, Wo, 1)."""
    kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr = pool_geometry(shape, ksize, strides, padding, "NHWC")
    rows = np.zeros(Ho)
    cols = np.zeros(Wo)
    for i in range(kh):
        r = np.arange(Ho) * sh + i - pt
        rows += (r >= 0) & (r < shape[1])
    for j in range(kw):
        c = np.arange(Wo) * sw + j - pl
        cols += (c >= 0) & (c < shape[2])
    return (rows[:, None] * cols[None, :]).astype(dtype)[None, :, :, None]


def _tiles_exactly(shape, kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr):
    """Windows that tile the image exactly (2x2 stride 2 on even sizes, no padding):
    every input pixel is in exactly one window, so the image is an (N, Ho, kh, Wo, kw, C) view."""
    return (kh == sh and kw == sw and pt == pb == pl == pr == 0
            and shape[1] == Ho * kh and shape[2] == Wo * kw)


def avg_pool(x, ksize, strides, padding):
    kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr = pool_geometry(x.shape, ksize, strides, padding, "NHWC")
    if _tiles_exactly(x.shape, kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr) and x.dtype in (np.float32, np.float64):
        # one pass per tap into the output, then one scaling: no padded copy, no count array
        y = np.empty((x.shape[0], Ho, Wo, x.shape[3]), dtype=x.dtype)
        taps = [_tap(x, i, j, sh, sw, Ho, Wo) for i in range(kh) for j in range(kw)]
        if len(taps) == 1:
            np.copyto(y, taps[0])
        else:
            np.add(taps[0], taps[1], out=y)
        for t in taps[2:]:
            np.add(y, t, out=y)
        return np.divide(y, x.dtype.type(kh * kw), out=y)          # divide, as TF and the general path
    xp = _pad(x, pt, pb, pl, pr, 0)
    acc = np.zeros((x.shape[0], Ho, Wo, x.shape[3]), dtype=np.float64 if x.dtype == np.float64 else np.float32)
    for i in range(kh):
        for j in range(kw):
            acc += _tap(xp, i, j, sh, sw, Ho, Wo)
    acc /= _avg_counts(x.shape, ksize, strides, padding, acc.dtype)
    return acc.astype(x.dtype, copy=False)


def avg_pool_grad(input_shape, grad, ksize, strides, padding):
    N, H, W, C = input_shape
    kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr = pool_geometry(input_shape, ksize, strides, padding, "NHWC")
    if _tiles_exactly(input_shape, kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr) and grad.dtype in (np.float32,
                                                                                               np.float64):
        # every pixel gets its one window's gradient / (kh*kw): one broadcast write
        dx = np.empty((N, Ho, kh, Wo, kw, C), dtype=grad.dtype)
        np.divide(grad[:, :, None, :, None, :], grad.dtype.type(kh * kw), out=dx)
        return dx.reshape(N, H, W, C)
    g = grad / _avg_counts(input_shape, ksize, strides, padding, grad.dtype)
    dxp = np.zeros((N, H + pt + pb, W + pl + pr, C), dtype=grad.dtype)
    for i in range(kh):
        for j in range(kw):
            dst = _tap(dxp, i, j, sh, sw, Ho, Wo)
            dst += g
    return np.ascontiguousarray(dxp[:, pt:pt + H, pl:pl + W])


def max_pool_with_argmax(x, ksize, strides, padding, include_batch_in_index, index_dtype):
    """Max pool plus the flat index ``((b*H + h)*W + w)*C + c`` (``b`` only with
    ``include_batch_in_index``) of the first maximum of each window."""
    kh, kw, sh, sw, Ho, Wo, pt, pl, pb, pr = pool_geometry(x.shape, ksize, strides, padding, "NHWC")
    N, H, W, C = x.shape
    xp = _pad(x, pt, pb, pl, pr, _neg_inf(x.dtype))
    best = np.full((N, Ho, Wo, C), _neg_inf(x.dtype), dtype=x.dtype)
    h_of = np.zeros((N, Ho, Wo, C), dtype=np.int64)
    w_of = np.zeros((N, Ho, Wo, C), dtype=np.int64)
    oh = np.arange(Ho)[None, :, None, None] * sh - pt
    ow = np.arange(Wo)[None, None, :, None] * sw - pl
    for i in range(kh):
        for j in range(kw):
            t = _tap(xp, i, j, sh, sw, Ho, Wo)
            better = t > best
            np.copyto(best, t, where=better)
            np.copyto(h_of, np.broadcast_to(oh + i, h_of.shape), where=better)
            np.copyto(w_of, np.broadcast_to(ow + j, w_of.shape), where=better)
    c = np.arange(C)[None, None, None, :]
    index = (h_of * W + w_of) * C + c
    if include_batch_in_index:
        index = index + np.arange(N)[:, None, None, None] * (H * W * C)
    return best, index.astype(index_dtype)


def _flat_argmax(argmax, n, per_image, include_batch_in_index):
    idx = np.asarray(argmax).astype(np.int64)
    if not include_batch_in_index:
        idx = idx + (np.arange(n) * per_image).reshape((n,) + (1,) * (idx.ndim - 1))
    return idx.reshape(-1)


def max_pool_grad_with_argmax(x, grad, argmax, include_batch_in_index):
    N = x.shape[0]
    per = int(np.prod(x.shape[1:]))
    idx = _flat_argmax(argmax, N, per, include_batch_in_index)
    dx = np.bincount(idx, weights=grad.reshape(-1).astype(np.float64), minlength=N * per)
    return dx.reshape(x.shape).astype(grad.dtype)


def max_pool_grad_grad_with_argmax(x, grad, argmax, include_batch_in_index):
    N = x.shape[0]
    per = int(np.prod(x.shape[1:]))
    idx = _flat_argmax(argmax, N, per, include_batch_in_index)
    return grad.reshape(-1)[idx].reshape(np.shape(argmax))


def max_pool_depthwise(x, ksize, strides):
    """NHWC max pooling over windows of ``ksize[3]`` channels (TF's CPU "depthwise max
    pooling"): each pixel keeps the maximum of each group of channels."""
    k = ksize[3]
    if ksize[1] != 1 or ksize[2] != 1:
        raise UnimplementedError(None, None, "MaxPooling supports exactly one of pooling across "
                                             "depth or pooling across width/height.")
    if x.shape[3] % k:
        raise UnimplementedError(None, None, "Depthwise max pooling requires the depth window to "
                                             "evenly divide the input depth")
    if strides[3] != k:
        raise UnimplementedError(None, None, "Depthwise max pooling requires the depth window to "
                                             "equal the depth stride")
    N, H, W, C = x.shape
    return x.reshape(N, H, W, C // k, k).max(axis=-1)


# --- registrations -------------------------------------------------------------

NON_SPATIAL = "Non-spatial pooling is not yet supported. Volunteers? :)"


def _pool_dims(ksize, strides, data_format):
    """``ksize`` and ``strides`` in NHWC order, after TF's refusal of windows or strides over
    the batch (pooling_ops_common.cc); the NHWC functions never read those entries."""
    k, s = _nhwc_list(ksize, data_format), _nhwc_list(strides, data_format)
    _check_ksize(k)
    if k[0] != 1 or s[0] != 1:
        raise UnimplementedError(None, None, "Pooling is not yet supported on the batch dimension.")
    return k, s


def _refuse_depth(k, s, grad_op):
    """TF's max pooling gradients have no depthwise form (a stride over channels included)."""
    if k[3] != 1 or s[3] != 1:
        raise UnimplementedError(None, None, f"{grad_op} is not yet supported on the depth "
                                             f"dimension.")


@register_kernel("MaxPool", type_constraint={"T": FLOAT})
def _max_pool_kernel(input, ksize, strides, padding, data_format):
    x = _nhwc(input, data_format)
    k, s = _pool_dims(ksize, strides, data_format)
    # a stride over channels with a window of one channel changes nothing, as in TF
    y = max_pool_depthwise(x, k, s) if k[3] != 1 else max_pool(x, k, s, padding)
    return _back(y, data_format)


def _nhwc_list(v, data_format):
    v = list(v)
    return v if data_format == "NHWC" else [v[0], v[2], v[3], v[1]]


def run_max_pool_grad(nhwc_grad, orig_input, orig_output, grad, ksize, strides, padding, data_format):
    """A MaxPoolGrad kernel's body around ``nhwc_grad(x, y, grad, ksize, strides, padding)`` (NHWC)."""
    k, s = _pool_dims(ksize, strides, data_format)
    _refuse_depth(k, s, "MaxPoolingGrad")
    dx = nhwc_grad(_nhwc(orig_input, data_format), _nhwc(orig_output, data_format),
                   _nhwc(grad, data_format), k, s, padding)
    return _back(dx, data_format)


@register_kernel("MaxPoolGrad", type_constraint={"T": FLOAT})
def _max_pool_grad_kernel(orig_input, orig_output, grad, ksize, strides, padding, data_format):
    return run_max_pool_grad(max_pool_grad, orig_input, orig_output, grad, ksize, strides, padding, data_format)


@register_kernel("MaxPoolGradGrad", type_constraint={"T": FLOAT})
def _max_pool_grad_grad_kernel(orig_input, orig_output, grad, ksize, strides, padding, data_format):
    k, s = _pool_dims(ksize, strides, data_format)
    _refuse_depth(k, s, "MaxPoolingGradGrad")
    out = max_pool_grad_grad(_nhwc(orig_input, data_format), _nhwc(orig_output, data_format),
                             _nhwc(grad, data_format), k, s, padding)
    return _back(out, data_format)


@register_kernel("AvgPool", type_constraint={"T": FLOAT})
def _avg_pool_kernel(value, ksize, strides, padding, data_format):
    k, s = _pool_dims(ksize, strides, data_format)
    if k[3] != 1:
        raise UnimplementedError(None, None, NON_SPATIAL)
    return _back(avg_pool(_nhwc(value, data_format), k, s, padding), data_format)


@register_kernel("AvgPoolGrad", type_constraint={"T": FLOAT})
def _avg_pool_grad_kernel(orig_input_shape, grad, ksize, strides, padding, data_format):
    k, s = _pool_dims(ksize, strides, data_format)
    if k[3] != 1:
        raise UnimplementedError(None, None, NON_SPATIAL)
    shape = _nhwc_list([int(v) for v in np.asarray(orig_input_shape).reshape(-1)], data_format)
    return _back(avg_pool_grad(shape, _nhwc(grad, data_format), k, s, padding), data_format)


@register_kernel("MaxPoolWithArgmax", type_constraint={"T": FLOAT, "Targmax": [int32, int64]})
def _max_pool_with_argmax_kernel(input, ksize, strides, padding, Targmax, include_batch_in_index):
    _pool_dims(ksize, strides, "NHWC")
    return max_pool_with_argmax(input, ksize, strides, padding, include_batch_in_index, Targmax.as_numpy_dtype)


@register_kernel("MaxPoolGradWithArgmax", type_constraint={"T": FLOAT, "Targmax": [int32, int64]})
def _max_pool_grad_with_argmax_kernel(input, grad, argmax, include_batch_in_index):
    return max_pool_grad_with_argmax(input, grad, argmax, include_batch_in_index)


@register_kernel("MaxPoolGradGradWithArgmax", type_constraint={"T": FLOAT, "Targmax": [int32, int64]})
def _max_pool_grad_grad_with_argmax_kernel(input, grad, argmax, include_batch_in_index):
    return max_pool_grad_grad_with_argmax(input, grad, argmax, include_batch_in_index)
