"""Conv2DBackpropInput in the speed layer: GEMM + col2im by blocks, or a forward conv of ``dy``.

The reference (``aicslib/kernels/conv_grad_input_ops.py``) makes one GEMM
``dY @ W^T`` and a col2im scatter-add over the whole batch. Here the same runs
by blocks of images on the work sharder's threads, and for stride 1 the
gradient is the forward convolution of ``dy`` with the rotated filter, so the
speed layer's forward algorithms (Winograd, blocked im2col) can run it.
"""
import numpy as np

from ..kernels.conv_2d import as_floats, backprop_input_operands, backprop_input_padding, conv_geometry
from ..kernels.conv_grad_input_ops import conv2d_backprop_input_direct
from ..kernels.conv_ops import requested_algorithm
from . import work_sharder
from .conv_forward import conv2d_im2col
from .conv_policy import choose_conv2d_algorithm, winograd_tile_size
from .conv_strided import conv2d_backprop_input_phases
from .conv_winograd import conv2d_winograd, conv2d_winograd_f4
from .winograd_transforms import winograd4_filter_transform, winograd_filter_transform
from .work_sharder import run_blocks, scratch, sharded_matmul, split_blocks

__all__ = ["conv2d_backprop_input", "conv2d_backprop_input_gemm", "IM2COL_PIXELS_PER_WEIGHT"]


def conv2d_backprop_input_gemm(dy, w, input_shape, strides=(1, 1), padding="VALID", dilations=(1, 1),
                               block_bytes=None):
    """The reference's GEMM ``dY @ W^T`` then col2im
    (:func:`~aicslib.kernels.conv_grad_input_ops.conv2d_backprop_input_gemm`), by blocks of
    images on the threads, each block's gradient of the im2col matrix in a reused scratch buffer."""
    dy, w, g = backprop_input_operands(dy, w, input_shape, strides, padding, dilations)
    N, H, W, C, K, kh, kw, Ho, Wo = (g[k] for k in ("N", "H", "W", "C", "K", "kh", "kw", "Ho", "Wo"))
    sh, sw, dh, dw = g["sh"], g["sw"], g["dh"], g["dw"]
    w2t = w.reshape(kh * kw * C, K).T                   # (K, kh*kw*C): a transposed view, BLAS reads it as is
    if kh == kw == 1 and sh == sw == 1 and not any(g[p] for p in ("pt", "pb", "pl", "pr")):
        return sharded_matmul(dy.reshape(-1, K), w2t, np.empty((N * H * W, C), dy.dtype)).reshape(N, H, W, C)
    pt, pl = g["pt"], g["pl"]
    Hp, Wp = H + pt + g["pb"], W + pl + g["pr"]
    dx = np.empty((N, H, W, C), dtype=dy.dtype)

    def block(b):
        n0, n1, _, _ = b
        dcols = scratch("col2im", ((n1 - n0) * Ho * Wo, kh * kw * C), dy.dtype)
        sharded_matmul(dy[n0:n1].reshape(-1, K), w2t, dcols)                # GEMM
        dcols = dcols.reshape(n1 - n0, Ho, Wo, kh, kw, C)
        dxp = scratch("col2im_dx", (n1 - n0, Hp, Wp, C), dy.dtype)            # padded input gradient
        dxp[...] = 0
        for i in range(kh):                                          # col2im
            for j in range(kw):
                dst = dxp[:, i * dh: i * dh + (Ho - 1) * sh + 1: sh,
                          j * dw: j * dw + (Wo - 1) * sw + 1: sw]
                np.add(dst, dcols[:, :, :, i, j], out=dst)
        dx[n0:n1] = dxp[:, pt:pt + H, pl:pl + W]

    if N * Ho * Wo:
        run_blocks(block, split_blocks(N, 1, Ho * Wo * kh * kw * C * 4, block_bytes, Ho * Wo))
    else:
        dx[...] = 0
    return dx


#: With the C SGEMM, a stride-1 input gradient that Winograd does not take runs as a forward
#: im2col conv of ``dy`` (patch copies) rather than GEMM + col2im (scatter-adds, a slower pass
#: over the same data) when the input has at least ``C * K / IM2COL_PIXELS_PER_WEIGHT`` pixels;
#: below, copying the rotated filter costs more (benchmarks/README.md).
IM2COL_PIXELS_PER_WEIGHT = 64

#: A strided input gradient (dilation 1) runs by phases (``conv_strided.py``: one stride-1
#: im2col conv per phase, written straight into ``dx``) from this many elements of ``dx`` up,
#: when the filter has no more output than input channels (K <= C: the phases' GEMMs are
#: C wide, GEMM + col2im's 9C wide); otherwise GEMM + col2im: below the size the phases'
#: separate calls cost more than its scatter-adds, and with K > C its one wide GEMM wins
#: (benchmarks/README.md, "Strided Conv2DBackpropInput").
PHASES_MIN_ELEMENTS = 1 << 17


def conv2d_backprop_input(dy, w, input_shape, strides=(1, 1), padding="VALID", dilations=(1, 1),
                          algorithm="auto"):
    """Gradient of ``conv2d(x, w)`` with respect to ``x``, given ``dy``.

    ``algorithm``: ``"gemm"`` (GEMM + col2im, :func:`conv2d_backprop_input_gemm`,
    always valid), ``"direct"`` (loops), ``"phases"`` (dilation 1: one stride-1 conv per
    phase of the stride, :func:`~.conv_strided.conv2d_backprop_input_phases`), or, for stride 1 only, ``"im2col"`` /
    ``"winograd"``: the gradient written as a forward convolution of ``dy``
    with the rotated filter. ``"auto"``: stride 1 -> the forward rule of
    :func:`~.conv_policy.choose_conv2d_algorithm` on the rotated conv (Winograd for deep 3x3,
    F(4x4, 3x3) where :func:`~.conv_policy.winograd_tile_size` says so; an explicit
    ``"winograd"`` is F(2x2, 3x3)), else with the C SGEMM im2col on inputs of at
    least ``C * K / IM2COL_PIXELS_PER_WEIGHT`` pixels; stride > 1 -> by phases when ``dx`` has at
    least ``PHASES_MIN_ELEMENTS`` elements, ``K <= C`` and the dilation is 1; otherwise GEMM + col2im.
    """
    requested = algorithm if algorithm not in (None, "auto") else None
    dy, w = as_floats(dy, w)
    g = conv_geometry(tuple(input_shape), w.shape, strides, padding, dilations)
    algo = (requested or requested_algorithm(None)).lower()
    if algo == "direct":
        return conv2d_backprop_input_direct(dy, w, input_shape, strides, padding, dilations)
    pads = backprop_input_padding(input_shape, g) if g["sh"] == g["sw"] == 1 else None
    rot_shape = (g["kh"], g["kw"], g["K"], g["C"])
    dilated = (g["dh"], g["dw"]) != (1, 1)
    if algo == "auto":
        algo = "gemm"
        if (pads is None and not dilated and g["K"] <= g["C"]
                and g["N"] * g["H"] * g["W"] * g["C"] >= PHASES_MIN_ELEMENTS):
            algo = "phases"
        elif pads is not None:
            forward_rule = choose_conv2d_algorithm(rot_shape, (1, 1), (g["dh"], g["dw"]), dy.shape)
            if forward_rule == "winograd":
                algo = "winograd"
            elif (work_sharder.native_gemm_library() is not None
                  and g["N"] * g["H"] * g["W"] * IM2COL_PIXELS_PER_WEIGHT >= g["C"] * g["K"]):
                algo = "im2col"
    if algo in ("im2col", "winograd") and pads is None:
        if requested:
            raise ValueError(f"backprop-input algorithm {algo!r} needs stride 1, got {strides}")
        algo = "gemm"
    if algo == "winograd" and (g["kh"], g["kw"], g["dh"], g["dw"]) != (3, 3, 1, 1):
        if requested:
            raise ValueError("backprop-input algorithm 'winograd' needs a 3x3 filter with dilation 1")
        algo = "gemm"
    if algo == "phases":
        if not dilated:
            return conv2d_backprop_input_phases(dy, w, input_shape, strides, padding, dilations)
        if requested:
            raise ValueError(f"backprop-input algorithm 'phases' needs dilation 1, got {dilations}")
        algo = "gemm"
    if algo == "gemm":
        return conv2d_backprop_input_gemm(dy, w, input_shape, strides, padding, dilations)
    if algo == "winograd":
        # U of the rotated filter, (16, C, K); its transpose (16, K, C) is a free view
        # that the GEMMs read as is, so the channel swap costs nothing.
        if not requested and winograd_tile_size(rot_shape, input_shape) == 4:
            U = winograd4_filter_transform(w, rotate180=True)          # F(4x4, 3x3): (36, C, K)
            return conv2d_winograd_f4(dy, None, (1, 1), pads, (1, 1), filter_transform=U.transpose(0, 2, 1))
        U = winograd_filter_transform(w, rotate180=True)
        return conv2d_winograd(dy, None, (1, 1), pads, (1, 1), filter_transform=U.transpose(0, 2, 1))
    w_rot = np.ascontiguousarray(w[::-1, ::-1].transpose(0, 1, 3, 2))
    return conv2d_im2col(dy, w_rot, (1, 1), pads, (g["dh"], g["dw"]))

