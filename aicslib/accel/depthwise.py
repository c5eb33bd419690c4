"""Depthwise convolution in the speed layer: C kernels, or NumPy tap loops by blocks on threads.

The reference (``aicslib/kernels/depthwise_conv_op.py``) does one broadcast
multiply-add per filter tap over the whole batch. Here:

* ``"native"``: the C loops of ``src/aics_depthwise.c`` (:mod:`.c_depthwise`),
  which finish each output pixel in one pass with the channels innermost, as
  TF's CPU kernel does; the rows of the result are split over the work
  sharder's threads. NumPy's tap loop makes ``kh*kw`` passes over memory per
  conv (benchmarks/README.md, "Depthwise convolution").
* ``"numpy"``: the tap loops by cache-sized blocks of rows on the threads, each
  tap's row a contiguous run (strides split into phases): the fallback where
  the C library was not built.
* ``"auto"`` (default, ``algorithm=`` of the three kernels or
  ``AICS_DEPTHWISE_ALGO`` through aicslib.flags): native where built, else
  numpy without an error. Passing ``block_bytes`` (a NumPy-path tuning knob)
  selects numpy.

A depth multiplier ``M > 1`` is run as ``M = 1`` on ``C*M`` repeated channels
(:func:`flat_channels`). Layouts and arguments as in the reference.
"""
import itertools

import numpy as np

from .. import flags
from ..framework.dtypes import bfloat16, float16, float32, float64
from ..kernels.conv_2d import (as_floats, backprop_filter_operands, backprop_input_operands, backprop_input_padding,
                               conv_geometry, run_backprop_filter, run_backprop_input, run_forward)
from . import c_depthwise
from .registration import register_fast_kernel
from .work_sharder import NUM_THREADS, executor, in_worker, padded_slab, run_blocks, scratch, split_blocks

__all__ = [
    "ALGORITHMS", "depthwise_conv2d", "depthwise_conv2d_backprop_input", "depthwise_conv2d_backprop_filter",
    "native_library", "flat_channels",
]

#: The ``algorithm=`` values of the three kernels (see the module docstring).
ALGORITHMS = ("auto", "native", "numpy")

FLOAT = {"T": [float16, bfloat16, float32, float64]}


# ----------------------------------------------------------------------------
# NumPy tap loops by blocks: filter (kh, kw, C, M), output channel c*M + m
# ----------------------------------------------------------------------------

#: Bytes of output (or input-gradient) rows one block of the tap loop works on:
#: the block, its scratch product and the input rows it reads stay in cache
#: while ``kh*kw`` passes go over them, and the blocks are few enough that the
#: Python overhead of ``2*kh*kw`` NumPy calls per block stays small
#: (benchmarks/README.md, "Depthwise convolution").
DEPTHWISE_BLOCK_BYTES = 1 << 20


def flat_channels(x, w):
    """A depth multiplier ``M > 1`` as ``M = 1`` on ``C*M`` channels.

    Output channel ``c*M + m`` reads input channel ``c`` with filter
    ``w[:, :, c, m]``: repeating every input channel ``M`` times gives an input
    whose channel ``c*M + m`` is that channel, and the ``(kh, kw, C, M)``
    filter reshaped to ``(kh, kw, C*M)`` lines up with it. Every kernel below
    then works on one filter value per channel and tap.
    """
    kh, kw, C, M = w.shape
    if M > 1 and x is not None:
        x = np.repeat(x, M, axis=3)
    return x, w.reshape(kh, kw, C * M)


def _row_taps(src, kh, kw, nr, Wo, sh, sw, dh, dw, slot):
    """The ``kh*kw`` tap views of a block's padded input rows, each ``(nb, nr, Wo*C)``.

    Tap ``(i, j)`` of output pixel ``(oh, ow)`` reads ``src[oh*sh + i*dh, ow*sw + j*dw]``.
    Along H a stride is a strided view (it only skips whole rows). Along W,
    for ``sw > 1``, the columns are first split into ``sw`` phases (column
    ``p + sw*k`` -> phase ``p``, position ``k``): in its phase every tap then
    reads ``Wo`` *consecutive* pixels, so a row of a tap is one contiguous run
    of ``Wo*C`` floats and each NumPy pass below runs one long inner loop
    instead of one per pixel.
    """
    nb, _, _, C = src.shape
    if sw == 1:
        phases = {0: src}
    else:
        phases = {}
        for p in sorted({(j * dw) % sw for j in range(kw)}):
            view = src[:, :, p::sw]
            phases[p] = scratch(f"{slot}{p}", view.shape, src.dtype)
            np.copyto(phases[p], view)
    taps = {}
    for i in range(kh):
        rows = slice(i * dh, i * dh + (nr - 1) * sh + 1, sh)
        for j in range(kw):
            c0 = (j * dw) // sw
            taps[i, j] = phases[(j * dw) % sw][:, rows, c0:c0 + Wo].reshape(nb, nr, Wo * C)
    return taps


def _block_taps(x, b, g, kh, kw):
    """``(taps, tmp)`` of block ``b = (n0, n1, r0, r1)`` of output rows: :func:`_row_taps` of the
    padded input rows it reads (in scratch), and a scratch array of one tap's shape."""
    n0, n1, r0, r1 = b
    sh, sw, dh, dw, Wo = g["sh"], g["sw"], g["dh"], g["dw"], g["Wo"]
    slab = padded_slab(x, n0, n1, r0 * sh - g["pt"], (r1 - r0 - 1) * sh + (kh - 1) * dh + 1,
                       -g["pl"], (Wo - 1) * sw + (kw - 1) * dw + 1, "dw_pad")
    taps = _row_taps(slab, kh, kw, r1 - r0, Wo, sh, sw, dh, dw, "dw_phase")
    return taps, scratch("dw_tmp", (n1 - n0, r1 - r0, Wo * x.shape[3]), x.dtype)


def _tap_blocks(N, Ho, row_bytes, block_bytes):
    return split_blocks(N, Ho, row_bytes, block_bytes or DEPTHWISE_BLOCK_BYTES)


def _depthwise_forward_flat(x, w3, g, block_bytes=None):
    """Depthwise conv with one filter per channel: ``x`` (N, H, W, C), ``w3`` (kh, kw, C).

    Per block of output rows (cache sized), per tap, one multiply-add of the
    tap's view by the tap's filter row tiled ``Wo`` times (so that the
    broadcast runs along whole contiguous rows), on ``NUM_THREADS`` threads.
    """
    kh, kw, C = w3.shape
    N, Ho, Wo = g["N"], g["Ho"], g["Wo"]
    y = np.empty((N, Ho, Wo, C), dtype=x.dtype)
    if N * Ho * Wo * C == 0:
        return y
    wt = np.tile(w3, (1, 1, Wo))                                 # (kh, kw, Wo*C)

    def block(b):
        n0, n1, r0, r1 = b
        taps, tmp = _block_taps(x, b, g, kh, kw)
        acc = y[n0:n1, r0:r1].reshape(tmp.shape)
        for t, (i, j) in enumerate(taps):
            if t == 0:
                np.multiply(taps[i, j], wt[i, j], out=acc)
            else:
                np.multiply(taps[i, j], wt[i, j], out=tmp)
                np.add(acc, tmp, out=acc)

    run_blocks(block, _tap_blocks(N, Ho, Wo * C * x.itemsize, block_bytes))
    return y


# ----------------------------------------------------------------------------
# The C kernels (aicslib/accel/src/aics_depthwise.c): one filter per channel
# ----------------------------------------------------------------------------

#: Multiply-adds below which a call runs on one thread (handing rows to the
#: pool costs tens of microseconds).
NATIVE_MIN_SPLIT_MACS = 1 << 18
#: Multiply-adds from which the rows are cut into NATIVE_BLOCKS_PER_THREAD
#: ranges per thread (see :func:`_native_rows`).
NATIVE_FINE_SPLIT_MACS = 1 << 22
NATIVE_BLOCKS_PER_THREAD = 4
#: The C backprop-input lists a row's taps in a fixed array (MAX_TAPS_1D in the source).
NATIVE_MAX_KH = 64


def native_library(algorithm="auto", block_bytes=None):
    """The loaded C library when a call with these arguments runs in C, else None (NumPy).

    ``algorithm`` "auto" defers to ``AICS_DEPTHWISE_ALGO``; "native" asked for
    explicitly (argument or variable) but impossible here is an error naming the reason.
    """
    choice = algorithm if algorithm is not None else "auto"
    if choice not in ALGORITHMS:
        raise ValueError(f"depthwise conv: algorithm must be one of {', '.join(ALGORITHMS)}, "
                         f"got {algorithm!r}")
    if choice == "auto":
        choice = flags.DEPTHWISE_ALGO
        if choice not in ALGORITHMS:
            raise ValueError(f"AICS_DEPTHWISE_ALGO must be one of {', '.join(ALGORITHMS)}, "
                             f"got {choice!r}")
    if choice == "numpy" or (choice == "auto" and block_bytes is not None):
        return None
    lib = c_depthwise.library()
    if lib is None and choice == "native":
        raise RuntimeError(f"depthwise conv: the native algorithm was asked for but the C kernel "
                           f"was not built: {c_depthwise.fallback_reason()}")
    return lib


def _native_rows(fn, rows, macs_per_row):
    """``fn(r0, r1)`` over ``[0, rows)`` cut into contiguous ranges, run on the threads.

    Returns the results in row order. The calling thread works too: it and
    ``NUM_THREADS - 1`` pool threads take the next range from a shared counter
    until none is left, and a helper that has not started by then is cancelled.
    On a machine shared with other processes a woken pool thread may wait
    milliseconds for a core; the caller, already running, then does the work
    instead of waiting for it (benchmarks/README.md, "Depthwise convolution").
    Small work stays on the caller's thread.
    """
    macs = rows * macs_per_row
    parts = 1
    if NUM_THREADS > 1 and not in_worker() and macs >= NATIVE_MIN_SPLIT_MACS:
        parts = NUM_THREADS * (NATIVE_BLOCKS_PER_THREAD if macs >= NATIVE_FINE_SPLIT_MACS else 1)
    parts = max(1, min(parts, rows))
    bounds = [rows * k // parts for k in range(parts + 1)]
    if parts == 1:
        return [fn(0, rows)]
    results = [None] * parts
    next_range = itertools.count()           # next() is atomic under the GIL

    def drain():
        k = next(next_range)
        while k < parts:
            results[k] = fn(bounds[k], bounds[k + 1])
            k = next(next_range)

    helpers = [executor().submit(drain) for _ in range(NUM_THREADS - 1)]
    try:
        drain()
    finally:
        for h in helpers:
            if not h.cancel():
                h.result()                   # it took a range: wait for that one
    return results


def _native_geometry(g, channels, **changes):
    """The C geometry array of ``g`` with ``channels`` (``C*M`` after :func:`flat_channels`)."""
    return c_depthwise.geometry_array({**g, "C": channels, **changes})


def _native_forward(lib, x, w3, g):
    """Forward in C: ``x`` (N, H, W, C) and ``w3`` (kh, kw, C), C-contiguous, same dtype."""
    kh, kw, C = w3.shape
    y = np.empty((g["N"], g["Ho"], g["Wo"], C), dtype=x.dtype)
    fn = c_depthwise.function(lib, "forward", x.dtype)
    geo = _native_geometry(g, C)
    _native_rows(lambda r0, r1: c_depthwise.call(fn, geo, x, w3, y, r0, r1),
                 g["N"] * g["Ho"], g["Wo"] * C * kh * kw)
    return y


def _native_backprop_input(lib, dy, w3, H, W, g):
    """Input gradient in C. Stride 1: the forward of ``dy`` with the filter rotated by 180
    degrees and the "full" padding ``(k-1)*d - pad`` (negative for an explicit padding wider
    than the filter: the C forward only reads the taps that land inside ``dy``). Larger
    strides: the C gather loop, each input pixel summing the output pixels it fed."""
    kh, kw, C = w3.shape
    N, Ho, Wo, dh, dw = g["N"], g["Ho"], g["Wo"], g["dh"], g["dw"]
    dx = np.empty((N, H, W, C), dtype=dy.dtype)
    if g["sh"] == g["sw"] == 1:
        rot = np.ascontiguousarray(w3[::-1, ::-1])
        fn = c_depthwise.function(lib, "forward", dy.dtype)
        geo = _native_geometry(g, C, H=Ho, W=Wo, pt=(kh - 1) * dh - g["pt"],
                               pl=(kw - 1) * dw - g["pl"], Ho=H, Wo=W)
        _native_rows(lambda r0, r1: c_depthwise.call(fn, geo, dy, rot, dx, r0, r1),
                     N * H, W * C * kh * kw)
        return dx
    fn = c_depthwise.function(lib, "backprop_input", dy.dtype)
    geo = _native_geometry(g, C, H=H, W=W)

    def rows(r0, r1):
        columns = np.empty(max(1, W * kw), dtype=np.int64)      # the C function's tap table
        c_depthwise.call(fn, geo, dy, w3, dx, r0, r1, scratch=columns)

    macs = -(-kh // g["sh"]) * -(-kw // g["sw"]) * W * C
    _native_rows(rows, N * H, macs)
    return dx


def _native_backprop_filter(lib, x, dy, kh, kw, g):
    """Filter gradient in C: one partial sum per thread (its rows), added up at the end."""
    C = x.shape[3]
    fn = c_depthwise.function(lib, "backprop_filter", x.dtype)
    geo = _native_geometry(g, C)

    def rows(r0, r1):
        part = np.zeros((kh, kw, C), dtype=x.dtype)
        return c_depthwise.call(fn, geo, x, dy, part, r0, r1)

    parts = _native_rows(rows, g["N"] * g["Ho"], g["Wo"] * C * kh * kw)
    total = parts[0]
    for p in parts[1:]:
        total += p
    return total


def depthwise_conv2d(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), block_bytes=None,
                     algorithm="auto"):
    """Depthwise convolution (``tf.nn.depthwise_conv2d_native``), vectorised.

    Each input channel has its own ``M`` filters, so there is no channel sum
    and no GEMM. The C kernel (``algorithm="native"``, the default where it
    builds) finishes each output pixel in one pass over its taps; the NumPy
    kernel loops over the ``kh*kw`` taps and does one broadcast multiply-add of
    a shifted view of the input per tap, block by block (see
    :func:`_depthwise_forward_flat`; ``M > 1`` through :func:`flat_channels`).
    """
    x, w = as_floats(x, w)
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    lib = native_library(algorithm, block_bytes)
    xr, w3 = flat_channels(x, w)
    if lib is not None and g["N"] * g["Ho"] * g["Wo"] * w3.shape[2] > 0:
        return _native_forward(lib, xr, np.ascontiguousarray(w3), g)
    return _depthwise_forward_flat(xr, w3, g, block_bytes)


def _depthwise_backprop_input_phases(dy, w3, H, W, g, block_bytes=None):
    """Input gradient with one filter per channel, any stride, by phases.

    Tap ``(i, j)`` sends ``dy[oh, ow] * w3[i, j]`` to padded input pixel
    ``(oh*sh + i*dh, ow*sw + j*dw)``. Split the padded gradient into its
    ``sh*sw`` phases (rows ``ph + sh*a``, columns ``pw + sw*b``): phase
    ``(ph, pw)`` only receives the taps with ``i*dh % sh == ph`` and
    ``j*dw % sw == pw``, each as ``dy`` *shifted* by ``(i*dh // sh, j*dw // sw)``.
    So every phase is a small stride-1 tap loop over a zero-padded ``dy`` (long
    contiguous rows, cache-sized blocks, like the forward), written once into
    its strided place: no scatter-add over overlapping strided views.
    """
    kh, kw, C = w3.shape
    N, Ho, Wo, sh, sw, dh, dw = g["N"], g["Ho"], g["Wo"], g["sh"], g["sw"], g["dh"], g["dw"]
    pt, pl = g["pt"], g["pl"]
    Hp, Wp = H + pt + g["pb"], W + pl + g["pr"]
    Qh, Qw = ((kh - 1) * dh) // sh, ((kw - 1) * dw) // sw          # the largest shifts
    Ha, Wb = -(-Hp // sh), -(-Wp // sw)                            # rows / columns of phase 0
    dyp = np.zeros((N, Ha + Qh, Wb + Qw, C), dtype=dy.dtype)       # dy[r, c] at dyp[r + Qh, c + Qw]
    nh, nw = min(Ho, Ha), min(Wo, Wb)                               # rows past Ha never reach dx
    dyp[:, Qh:Qh + nh, Qw:Qw + nw] = dy[:, :nh, :nw]
    dxp = np.empty((N, Hp, Wp, C), dtype=dy.dtype)
    for ph in range(sh):
        for pw in range(sw):
            rows, cols = -(-(Hp - ph) // sh), -(-(Wp - pw) // sw)  # this phase's size
            dst = dxp[:, ph::sh, pw::sw]
            taps = [(i, j) for i in range(kh) for j in range(kw)
                    if (i * dh) % sh == ph and (j * dw) % sw == pw]
            if not taps or rows * cols == 0:
                dst[...] = 0
                continue
            wt = {t: np.tile(w3[t], cols) for t in taps}

            def block(b, ph=ph, pw=pw, rows=rows, cols=cols, dst=dst, taps=taps, wt=wt):
                n0, n1, r0, r1 = b
                nb, nr = n1 - n0, r1 - r0
                acc = scratch("dw_acc", (nb, nr, cols * C), dy.dtype)
                tmp = scratch("dw_tmp", acc.shape, dy.dtype)
                for k, (i, j) in enumerate(taps):
                    a0, b0 = Qh - (i * dh) // sh + r0, Qw - (j * dw) // sw
                    src = dyp[n0:n1, a0:a0 + nr, b0:b0 + cols].reshape(nb, nr, cols * C)
                    if k == 0:
                        np.multiply(src, wt[i, j], out=acc)
                    else:
                        np.multiply(src, wt[i, j], out=tmp)
                        np.add(acc, tmp, out=acc)
                dst[n0:n1, r0:r1] = acc.reshape(nb, nr, cols, C)

            run_blocks(block, _tap_blocks(N, rows, cols * C * dy.itemsize, block_bytes))
    return np.ascontiguousarray(dxp[:, pt:pt + H, pl:pl + W])


def depthwise_conv2d_backprop_input(dy, w, input_shape, strides=(1, 1), padding="VALID",
                                    dilations=(1, 1), block_bytes=None, algorithm="auto"):
    """Input gradient of :func:`depthwise_conv2d`:
    ``dx[.., ih, iw, c] += sum_m dy[.., oh, ow, c, m] * w[i, j, c, m]`` over taps.

    Stride 1: a forward depthwise conv of ``dy`` with the filter rotated by 180
    degrees (padding from :func:`~.conv_2d.backprop_input_padding`), so the
    blocked tap loop of the forward does it. Otherwise (or an explicit
    padding wider than the filter): the same kind of tap loop on each of the
    ``sh*sw`` phases of the gradient (:func:`_depthwise_backprop_input_phases`).
    ``M > 1``: the gradient
    of the ``C*M`` repeated channels, summed over each channel's ``M`` copies.
    ``algorithm="native"`` (the default where it is built) runs the same two
    cases in C (:func:`_native_backprop_input`).
    """
    dy, w, g = backprop_input_operands(dy, w, input_shape, strides, padding, dilations, depthwise=True)
    N, H, W, C = g["N"], g["H"], g["W"], g["C"]
    kh, kw, _, M = w.shape
    _, w3 = flat_channels(None, w)
    lib = native_library(algorithm, block_bytes)
    pads = backprop_input_padding((N, H, W, C), g) if g["sh"] == g["sw"] == 1 else None
    if N * H * W * C * M == 0:
        dx = np.zeros((N, H, W, C * M), dtype=dy.dtype)
    elif lib is not None and kh <= NATIVE_MAX_KH:
        dx = _native_backprop_input(lib, dy, np.ascontiguousarray(w3), H, W, g)
    elif pads is not None:
        rot = w3[::-1, ::-1]
        g_rot = conv_geometry(dy.shape, rot.shape + (1,), (1, 1), pads, (g["dh"], g["dw"]))
        dx = _depthwise_forward_flat(dy, rot, g_rot, block_bytes)
    else:
        dx = _depthwise_backprop_input_phases(dy, w3, H, W, g, block_bytes)
    return dx if M == 1 else dx.reshape(N, H, W, C, M).sum(axis=4)


def depthwise_conv2d_backprop_filter(x, dy, filter_shape, strides=(1, 1), padding="VALID",
                                     dilations=(1, 1), block_bytes=None, algorithm="auto"):
    """Filter gradient of :func:`depthwise_conv2d`: per tap,
    ``dw[i, j, c, m] = sum_{n, oh, ow} xp[n, ih, iw, c] * dy[n, oh, ow, c, m]``.

    Per block of output rows and per tap, one product of the tap's view with
    ``dy`` and a sum over the block's pixels (``ones @ (pixels, C)``); the
    blocks' partial sums are added at the end. ``algorithm="native"`` (the
    default where it is built): the same sums in C, one partial sum per thread.
    """
    x, dy, g = backprop_filter_operands(x, dy, filter_shape, strides, padding, dilations, depthwise=True)
    N, C, M, kh, kw, Ho, Wo = (g[k] for k in ("N", "C", "K", "kh", "kw", "Ho", "Wo"))
    if N * Ho * Wo * C * M == 0:
        return np.zeros((kh, kw, C, M), dtype=x.dtype)
    xr, _ = flat_channels(x, np.empty((kh, kw, C, M), x.dtype))
    CM = C * M
    lib = native_library(algorithm, block_bytes)
    if lib is not None:
        return _native_backprop_filter(lib, xr, dy, kh, kw, g).reshape(kh, kw, C, M)

    def block(b):
        n0, n1, r0, r1 = b
        taps, tmp = _block_taps(xr, b, g, kh, kw)
        d = dy[n0:n1, r0:r1].reshape(tmp.shape)
        ones = np.ones(d.shape[0] * d.shape[1] * Wo, dtype=x.dtype)
        part = np.empty((kh, kw, CM), dtype=x.dtype)
        for (i, j), src in taps.items():
            np.multiply(src, d, out=tmp)
            # the sum over the block's pixels as a vector-matrix product: BLAS
            # reads the (pixels, C) rows once, where a NumPy axis-0 sum over
            # short rows makes many passes
            np.dot(ones, tmp.reshape(-1, CM), out=part[i, j])
        return part

    parts = run_blocks(block, _tap_blocks(N, Ho, Wo * CM * x.itemsize, block_bytes))
    dw3 = parts[0]
    for p in parts[1:]:
        dw3 += p
    return dw3.reshape(kh, kw, C, M)


# ----------------------------------------------------------------------------
# Kernel registrations, preferred to depthwise_conv_op.py's
# ----------------------------------------------------------------------------

@register_fast_kernel("DepthwiseConv2dNative", FLOAT)
def depthwise_kernel(input, filter, strides, padding, explicit_paddings, data_format, dilations):
    return run_forward(depthwise_conv2d, "DepthwiseConv2dNative", input, filter, strides, padding,
                       explicit_paddings, data_format, dilations)


@register_fast_kernel("DepthwiseConv2dNativeBackpropInput", FLOAT)
def depthwise_backprop_input_kernel(input_sizes, filter, out_backprop, strides, padding,
                                    explicit_paddings, data_format, dilations):
    return run_backprop_input(depthwise_conv2d_backprop_input, "DepthwiseConv2dNativeBackpropInput", input_sizes,
                              filter, out_backprop, strides, padding, explicit_paddings, data_format, dilations)


@register_fast_kernel("DepthwiseConv2dNativeBackpropFilter", FLOAT)
def depthwise_backprop_filter_kernel(input, filter_sizes, out_backprop, strides, padding,
                                     explicit_paddings, data_format, dilations):
    return run_backprop_filter(depthwise_conv2d_backprop_filter, "DepthwiseConv2dNativeBackpropFilter", input,
                               filter_sizes, out_backprop, strides, padding, explicit_paddings, data_format,
                               dilations)
