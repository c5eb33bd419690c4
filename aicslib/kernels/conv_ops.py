"""Conv2D forward in NumPy: direct loops, im2col + GEMM, Winograd F(2x2, 3x3), and a rule.

Exercise 5.7 asks how TensorFlow computes ``Conv2D`` on a CPU. TensorFlow's
``Conv2DOp::Compute`` (core/kernels/conv_ops.cc) checks its parameters,
computes the output shape (``GetWindowedOutputSize``), and then dispatches:
1x1 convolutions and "whole image" filters go straight to a GEMM
(``LaunchConv2DOp`` -> ``functor::MatMulConvFunctor``), deep convolutions may go
to ``LaunchDeepConvOp``, and everything else to Eigen's ``SpatialConvolution``,
which *is* an im2col ("extract image patches") followed by a tensor
contraction, i.e. a GEMM.

This module is the reference: one readable function per algorithm, on NumPy
arrays with TensorFlow's layouts: input NHWC ``(N, H, W, C)``, filter HWIO
``(kh, kw, C, K)``, output NHWC ``(N, Ho, Wo, K)``. Every function takes ``(x,
w, strides, padding, dilations)`` with ``strides``/``dilations`` as ``(sh, sw)``
and ``padding`` one of ``"SAME"``, ``"VALID"`` or explicit ``[(top, bottom),
(left, right)]``.

=========================  ============================================================
``conv2d_direct``          loops over output pixels and filter taps (the definition)
``conv2d_im2col``          im2col through ``as_strided`` + one GEMM
                           ``(N*Ho*Wo, kh*kw*C) @ (kh*kw*C, K)``
``conv2d_winograd``        Winograd F(2x2, 3x3): the 36 multiplies per 2x2 output
                           tile become 16 (2.25x fewer), done as 16 GEMMs
``conv2d_nchw``            NCHW/OIHW in and out, through NHWC (``conv2d_im2col_nchw``:
                           Caffe's per-image GEMM)
``conv2d``                 picks one (rule in ``choose_conv2d_algorithm``)
=========================  ============================================================

Forcing an algorithm: pass ``algorithm="direct" | "im2col" | "winograd"`` to
:func:`conv2d`, or set the environment variable ``AICS_CONV_ALGO`` (read by
``aicslib.flags``; call ``aicslib.flags.reload()`` after changing it in a
running process).

Elsewhere: the backprops in conv_grad_input_ops.py / conv_grad_filter_ops.py,
depthwise convolution in depthwise_conv_op.py, the geometry they share in
conv_2d.py.

The ``Conv2D`` kernel registration is at the end of this file, as
``REGISTER_KERNEL_BUILDER`` is at the end of TF's conv_ops.cc. It is the
reference every other Conv2D kernel is tested against: the speed layer
(``aicslib/accel``: the same algorithms by blocks on threads, Winograd
F(4x4, 3x3), C kernels, a rule measured on them) registers a preferred Conv2D
kernel beside it, and ``AICS_ACCEL=0`` takes that one away.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import flags
from ..framework.dtypes import bfloat16, float16, float32, float64
from ..framework.kernel_registry import register_kernel
from .conv_2d import as_floats, conv_geometry, hw_pair, im2col_view, pad_nhwc, run_forward
from .conv_layout import nchw_to_nhwc, nhwc_to_nchw, oihw_to_hwio

__all__ = [
    "conv2d", "conv2d_direct", "conv2d_im2col", "conv2d_winograd", "conv2d_nchw", "conv2d_im2col_nchw",
    "choose_conv2d_algorithm", "requested_algorithm", "resolve_algorithm", "winograd_applicable", "conv2d_flops",
    "ALGORITHMS",
    "WINOGRAD_BT", "WINOGRAD_G", "WINOGRAD_AT", "WINOGRAD_MIN_CHANNELS",
]

ALGORITHMS = ("direct", "im2col", "winograd")

_F32 = np.float32
_FLOAT = {"T": [float16, bfloat16, float32, float64]}


def conv2d_flops(x_shape, w_shape, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    """Multiply-adds x 2 of the direct convolution (the usual GFLOP/s convention)."""
    g = conv_geometry(x_shape, w_shape, strides, padding, dilations)
    return 2 * g["N"] * g["Ho"] * g["Wo"] * g["K"] * g["C"] * g["kh"] * g["kw"]


# ----------------------------------------------------------------------------
# Forward: direct loops
# ----------------------------------------------------------------------------

def conv2d_direct(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """The definition, as loops: for every output pixel, for every filter tap,
    multiply the input pixel's C channels by the tap's (C, K) matrix.

    ``y[n, oh, ow, k] = sum_{i, j, c} xp[n, oh*sh + i*dh, ow*sw + j*dw, c] * w[i, j, c, k]``

    The batch and channel sums are vectorised (``@``) so that the teaching
    example runs in seconds; the pixel and tap loops are explicit.
    """
    x, w = as_floats(x, w)
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    xp = pad_nhwc(x, g["pt"], g["pb"], g["pl"], g["pr"])
    y = np.zeros((g["N"], g["Ho"], g["Wo"], g["K"]), dtype=x.dtype)
    for oh in range(g["Ho"]):
        for ow in range(g["Wo"]):
            for i in range(g["kh"]):
                for j in range(g["kw"]):
                    ih = oh * g["sh"] + i * g["dh"]
                    iw = ow * g["sw"] + j * g["dw"]
                    y[:, oh, ow, :] += xp[:, ih, iw, :] @ w[i, j]
    return y


# ----------------------------------------------------------------------------
# Forward: im2col + GEMM
# ----------------------------------------------------------------------------

def conv2d_im2col(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """im2col + GEMM: ``Y(N*Ho*Wo, K) = cols(N*Ho*Wo, kh*kw*C) @ W(kh*kw*C, K)``.

    ``im2col_view`` gives the patch matrix as a strided view of the padded
    input (row ``(n, oh, ow)`` is the receptive field of that output pixel,
    columns in ``(i, j, c)`` order); the reshape copies it into one contiguous
    matrix, and one GEMM with the HWIO filter reshaped to ``(kh*kw*C, K)``
    (the same ``(i, j, c)`` order) computes every output pixel, already in NHWC.
    """
    x, w = as_floats(x, w)
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    N, C, K, kh, kw, Ho, Wo = g["N"], g["C"], g["K"], g["kh"], g["kw"], g["Ho"], g["Wo"]
    xp = pad_nhwc(x, g["pt"], g["pb"], g["pl"], g["pr"])
    cols = im2col_view(xp, kh, kw, Ho, Wo, (g["sh"], g["sw"]), (g["dh"], g["dw"])).reshape(N * Ho * Wo, kh * kw * C)
    return (cols @ w.reshape(kh * kw * C, K)).reshape(N, Ho, Wo, K)


def conv2d_im2col_nchw(x_nchw, w_oihw, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Caffe's convolution: NCHW input, OIHW filter, per image
    ``Y(K, Ho*Wo) = W(K, C*kh*kw) @ cols(C*kh*kw, Ho*Wo)``.

    Here the im2col matrix is transposed relative to the NHWC version: one
    *column* per output pixel, and the GEMM's result is already the image's
    NCHW output.
    """
    x, w = as_floats(x_nchw, w_oihw)
    N, C, H, W = x.shape
    K, _, kh, kw = w.shape
    g = conv_geometry((N, H, W, C), (kh, kw, w.shape[1], K), strides, padding, dilations)
    Ho, Wo, sh, sw, dh, dw = g["Ho"], g["Wo"], g["sh"], g["sw"], g["dh"], g["dw"]
    xp = np.pad(x, ((0, 0), (0, 0), (g["pt"], g["pb"]), (g["pl"], g["pr"])))
    w2 = w.reshape(K, C * kh * kw)
    y = np.empty((N, K, Ho, Wo), dtype=x.dtype)
    s_n, s_c, s_h, s_w = xp.strides
    for n in range(N):
        cols = as_strided(xp[n], shape=(C, kh, kw, Ho, Wo),
                          strides=(s_c, s_h * dh, s_w * dw, s_h * sh, s_w * sw), writeable=False)
        np.matmul(w2, cols.reshape(C * kh * kw, Ho * Wo), out=y[n].reshape(K, Ho * Wo))
    return y


# ----------------------------------------------------------------------------
# Forward: Winograd F(2x2, 3x3)
# ----------------------------------------------------------------------------
# A 1-D F(2, 3) computes two outputs of a 3-tap correlation from 4 inputs with
# 4 multiplies instead of 6:   y = A^T [ (G g) * (B^T d) ]
# The 2-D version nests it:     Y = A^T [ (G g G^T) * (B^T d B) ] A
# on 4x4 input tiles d (stride 2, overlapping by 2) giving 2x2 output tiles Y:
# 16 multiplies instead of 36. Summed over the C input channels, the
# element-wise product becomes, for each of the 16 positions (a, b) of the tile,
# a GEMM  M[a,b](tiles, K) = V[a,b](tiles, C) @ U[a,b](C, K).

WINOGRAD_BT = np.array([[1, 0, -1, 0],
                        [0, 1, 1, 0],
                        [0, -1, 1, 0],
                        [0, 1, 0, -1]], dtype=_F32)      #: input transform B^T (4x4)
WINOGRAD_G = np.array([[1, 0, 0],
                       [0.5, 0.5, 0.5],
                       [0.5, -0.5, 0.5],
                       [0, 0, 1]], dtype=_F32)           #: filter transform G (4x3)
WINOGRAD_AT = np.array([[1, 1, 1, 0],
                        [0, 1, -1, -1]], dtype=_F32)     #: output transform A^T (2x4)


def winograd_applicable(w_shape, strides=(1, 1), dilations=(1, 1)):
    """F(2x2, 3x3) needs a 3x3 filter, stride 1 and dilation 1."""
    return (tuple(w_shape[:2]) == (3, 3) and hw_pair(strides, "strides") == (1, 1)
            and hw_pair(dilations, "dilations") == (1, 1))


def conv2d_winograd(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Winograd F(2x2, 3x3) convolution (3x3 filter, stride 1, dilation 1), all tiles at once.

    1. Filter transform ``U = G g G^T``                   -> (4, 4, C, K)
    2. Input transform  ``V = B^T d B`` per 4x4 tile d     -> (4, 4, tiles, C)
    3. 16 GEMMs         ``M[a, b] = V[a, b] @ U[a, b]``    -> (4, 4, tiles, K)
    4. Output transform ``Y = A^T M A`` per tile           -> 2x2 outputs per tile

    Tile ``(r, q)`` reads padded input rows ``2r .. 2r+3`` and columns ``2q .. 2q+3``
    (a strided view: tiles overlap by 2). Odd output sizes are padded up to whole
    2x2 tiles and cropped.
    """
    x, w = as_floats(x, w)
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    if not winograd_applicable(w.shape, strides, dilations):
        raise ValueError(f"conv2d_winograd supports 3x3 filters with stride 1 and dilation 1 only, "
                         f"got filter {w.shape[:2]}, strides {strides}, dilations {dilations}")
    N, H, W, C, K, Ho, Wo = g["N"], g["H"], g["W"], g["C"], g["K"], g["Ho"], g["Wo"]
    th, tw = -(-Ho // 2), -(-Wo // 2)                       # tiles per column / row
    xp = np.zeros((N, 2 * th + 2, 2 * tw + 2, C), dtype=x.dtype)
    xp[:, g["pt"]:g["pt"] + H, g["pl"]:g["pl"] + W] = x
    s = xp.strides
    d = as_strided(xp, (N, th, tw, 4, 4, C), (s[0], 2 * s[1], 2 * s[2], s[1], s[2], s[3]), writeable=False)
    BT, G, AT = (m.astype(x.dtype) for m in (WINOGRAD_BT, WINOGRAD_G, WINOGRAD_AT))
    U = np.einsum("ai,ijck,bj->abck", G, w, G, optimize=True)
    V = np.einsum("ai,nrqijc,bj->abnrqc", BT, d, BT, optimize=True)
    M = np.matmul(V.reshape(16, N * th * tw, C), U.reshape(16, C, K))
    Y = np.einsum("ia,abpk,jb->pijk", AT, M.reshape(4, 4, N * th * tw, K), AT, optimize=True)
    y = Y.reshape(N, th, tw, 2, 2, K).transpose(0, 1, 3, 2, 4, 5).reshape(N, 2 * th, 2 * tw, K)
    return np.ascontiguousarray(y[:, :Ho, :Wo])


# ----------------------------------------------------------------------------
# Dispatch
# ----------------------------------------------------------------------------

#: The rule's Winograd threshold: with fewer input or output channels its
#: transforms cost more than the multiplies it saves.
WINOGRAD_MIN_CHANNELS = 64


def choose_conv2d_algorithm(w_shape, strides=(1, 1), dilations=(1, 1), x_shape=None):
    """The reference's rule for ``conv2d(..., algorithm="auto")``.

    * 3x3 filter, stride 1, dilation 1, ``C_in`` and ``C_out`` at least
      ``WINOGRAD_MIN_CHANNELS`` -> ``"winograd"`` (2.25x fewer multiplies);
    * everything else -> ``"im2col"``.

    ``"direct"`` is never chosen automatically: it is the teaching loop. The
    speed layer's kernel picks by a rule measured on its own algorithms
    (``aicslib/accel/conv_policy.py``), which also looks at ``x_shape``.
    """
    if winograd_applicable(w_shape, strides, dilations) and min(w_shape[2:]) >= WINOGRAD_MIN_CHANNELS:
        return "winograd"
    return "im2col"


def requested_algorithm(algorithm):
    """``algorithm``, or ``AICS_CONV_ALGO``'s (``aicslib.flags.CONV_ALGO``) when it is None or "auto"."""
    if algorithm is None or algorithm == "auto":
        algorithm = getattr(flags, "CONV_ALGO", "auto") or "auto"
    algorithm = str(algorithm).lower()
    if algorithm != "auto" and algorithm not in ALGORITHMS:
        raise ValueError(f"unknown conv2d algorithm {algorithm!r}; expected one of "
                         f"{('auto',) + ALGORITHMS}")
    return algorithm


def resolve_algorithm(algorithm, w_shape, strides, dilations, x_shape, rule=None):
    """``(algorithm to run, whether it was passed explicitly)``: ``algorithm``, else
    ``AICS_CONV_ALGO``, else ``rule(w_shape, strides, dilations, x_shape)`` (default:
    :func:`choose_conv2d_algorithm`). A Winograd forced by
    the environment on a conv it cannot do becomes im2col (an explicit one is left to raise)."""
    explicit = algorithm not in (None, "auto")
    algo = requested_algorithm(algorithm)
    if algo == "auto":
        algo = (rule or choose_conv2d_algorithm)(w_shape, strides, dilations, x_shape)
    if algo == "winograd" and not explicit and not winograd_applicable(w_shape, strides, dilations):
        algo = "im2col"
    return algo, explicit


def conv2d(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), algorithm="auto"):
    """2-D convolution (NHWC input, HWIO filter) with a choice of algorithm.

    ``algorithm``: ``"auto"`` (default: ``aicslib.flags.CONV_ALGO``, i.e. the
    environment variable ``AICS_CONV_ALGO``, and if that is ``auto`` too, the
    rule of :func:`choose_conv2d_algorithm`), ``"direct"``, ``"im2col"`` or
    ``"winograd"``. A forced ``"winograd"`` on a conv it cannot do (not 3x3,
    stride 1, dilation 1) falls back to im2col when it came from the
    environment, and raises when it was passed explicitly.
    """
    x, w = as_floats(x, w)
    algo, _ = resolve_algorithm(algorithm, w.shape, strides, dilations, x.shape)
    fn = {"direct": conv2d_direct, "im2col": conv2d_im2col, "winograd": conv2d_winograd}[algo]
    return fn(x, w, strides, padding, dilations)


def conv2d_nchw(x_nchw, w_oihw, strides=(1, 1), padding="VALID", dilations=(1, 1), algorithm="auto"):
    """Convolution of an NCHW input with an OIHW filter, returning NCHW.

    Converts to NHWC/HWIO, runs :func:`conv2d`, converts back (what TF does
    when a CPU kernel only supports NHWC: the layout optimizer inserts
    transposes around it).
    """
    y = conv2d(nchw_to_nhwc(np.asarray(x_nchw)), oihw_to_hwio(np.asarray(w_oihw)),
               strides, padding, dilations, algorithm)
    return nhwc_to_nchw(y)



# ----------------------------------------------------------------------------
# Kernel registration (TF: REGISTER_KERNEL_BUILDER(Name("Conv2D").Device(DEVICE_CPU)...)
# in core/kernels/conv_ops.cc)
# ----------------------------------------------------------------------------

@register_kernel("Conv2D", type_constraint=_FLOAT)
def _conv2d_kernel(input, filter, strides, padding, explicit_paddings, data_format, dilations):
    # TF's attrs checked and turned into the NHWC function's arguments, NCHW transposed around it
    return run_forward(conv2d, "Conv2D", input, filter, strides, padding, explicit_paddings, data_format,
                       dilations)
