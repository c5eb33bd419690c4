"""Which Conv2D algorithm the speed layer runs, and which Winograd tile: the measured rules.

TF leaves this choice to its libraries (Eigen's contraction, oneDNN's or cuDNN's
algorithm search); here it is a written rule, so that it can be read and
changed. Every threshold below was measured with ``benchmarks/bench_conv.py``;
the measurements are in ``benchmarks/README.md`` ("Conv2D algorithm
thresholds"). Two sets: with the C Winograd transforms (they are built here:
``native_winograd_rule()``), and with NumPy's, whose many passes over memory
make Winograd pay off only on deeper layers.
"""
from ..kernels.conv_ops import WINOGRAD_MIN_CHANNELS, winograd_applicable
from . import c_winograd, work_sharder

__all__ = [
    "choose_conv2d_algorithm", "winograd_tile_size", "native_winograd_rule",
    "WINOGRAD_MIN_CHANNELS", "WINOGRAD_MIN_PIXELS", "NATIVE_GEMM_WINOGRAD_SCALE",
    "NATIVE_WINOGRAD_MIN_CHANNELS", "NATIVE_WINOGRAD_MIN_TILES", "NATIVE_WINOGRAD4_MIN_TILES",
    "WINOGRAD4_MIN_CHANNELS", "WINOGRAD4_PIXELS_PER_WEIGHT",
]

#: NumPy transforms: Winograd is chosen (3x3, stride 1, dilation 1) when C_in and C_out are
#: at least the reference rule's ``WINOGRAD_MIN_CHANNELS`` (64), and when the output has at
#: least this many pixels (N*Ho*Wo): the filter transform is paid once per call whatever the batch.
WINOGRAD_MIN_PIXELS = 384
#: Both thresholds are this many times higher when the GEMMs run on aicslib's C SGEMM
#: (``AICS_GEMM``, ``work_sharder.gemm``): its multiply-adds are about twice as fast as the
#: BLAS the two above were measured with, so the transforms weigh twice as much.
NATIVE_GEMM_WINOGRAD_SCALE = 2

#: C transforms: Winograd is chosen from this many channels (C_in and C_out) ...
NATIVE_WINOGRAD_MIN_CHANNELS = 16
#: ... when the batch has at least this many F(2x2) tiles (the rows of its GEMMs: fewer make
#: thin GEMMs, and the filter transform, paid once per call, outweighs what they save) ...
NATIVE_WINOGRAD_MIN_TILES = 160
#: ... and F(4x4, 3x3) when it has at least this many F(4x4) tiles.
NATIVE_WINOGRAD4_MIN_TILES = 96

#: NumPy transforms: F(4x4, 3x3) replaces F(2x2, 3x3) when C_in and C_out are at least this
#: (below, its bigger transforms eat what its GEMMs save) ...
WINOGRAD4_MIN_CHANNELS = 64
#: ... and when the output has at least ``C_in * C_out / WINOGRAD4_PIXELS_PER_WEIGHT`` pixels:
#: its filter transform (36 values per (c, k) instead of 16) is paid per call.
WINOGRAD4_PIXELS_PER_WEIGHT = 64


def native_winograd_rule():
    """Whether the rules are the ones measured with the C transforms (they are built here)."""
    return c_winograd.library() is not None


def choose_conv2d_algorithm(w_shape, strides=(1, 1), dilations=(1, 1), x_shape=None):
    """``"winograd"`` or ``"im2col"`` for a conv with this filter (and input, when known).

    With the C transforms: 3x3 filter, stride 1, dilation 1, ``C_in`` and ``C_out`` at least
    ``NATIVE_WINOGRAD_MIN_CHANNELS`` and at least ``NATIVE_WINOGRAD_MIN_TILES`` 2x2 output
    tiles in the batch -> ``"winograd"``. With NumPy's: the same filter, ``C_in`` and ``C_out``
    at least ``WINOGRAD_MIN_CHANNELS`` and at least ``WINOGRAD_MIN_PIXELS`` output pixels, both
    ``NATIVE_GEMM_WINOGRAD_SCALE`` times higher when the GEMMs run on the C SGEMM. Everything
    else -> ``"im2col"`` (a 1x1 stride-1 conv is then a plain GEMM). ``"direct"`` is never
    chosen: it is the teaching loop.
    """
    if native_winograd_rule():
        if not winograd_applicable(w_shape, strides, dilations) or min(w_shape[2:]) < NATIVE_WINOGRAD_MIN_CHANNELS:
            return "im2col"
        if x_shape is not None and x_shape[0] * -(-x_shape[1] // 2) * -(-x_shape[2] // 2) < NATIVE_WINOGRAD_MIN_TILES:
            return "im2col"
        return "winograd"
    scale = NATIVE_GEMM_WINOGRAD_SCALE if work_sharder.native_gemm_library() is not None else 1
    if (not winograd_applicable(w_shape, strides, dilations)
            or min(w_shape[2:]) < WINOGRAD_MIN_CHANNELS * scale):
        return "im2col"
    if x_shape is not None and x_shape[0] * x_shape[1] * x_shape[2] < WINOGRAD_MIN_PIXELS * scale:
        return "im2col"
    return "winograd"


def winograd_tile_size(w_shape, out_shape):
    """The output tile of a Winograd conv the auto rule runs: 4 (F(4x4, 3x3)) or 2.

    With the C transforms, 4 whenever its GEMMs have at least ``NATIVE_WINOGRAD4_MIN_TILES``
    rows; with NumPy's, 4 when ``C_in`` and ``C_out`` are at least ``WINOGRAD4_MIN_CHANNELS``
    and the output has at least ``C_in * C_out / WINOGRAD4_PIXELS_PER_WEIGHT`` pixels (few tiles
    make thin GEMMs and the filter transform dominates). Either way an output size that F(4x4)
    would pad by more than 10% over F(2x2) (14x14: 16x16) keeps 2.
    """
    C, K = int(w_shape[2]), int(w_shape[3])
    N, Ho, Wo = (int(v) for v in out_shape[:3])
    if native_winograd_rule():
        if N * -(-Ho // 4) * -(-Wo // 4) < NATIVE_WINOGRAD4_MIN_TILES:
            return 2
    elif min(C, K) < WINOGRAD4_MIN_CHANNELS or N * Ho * Wo * WINOGRAD4_PIXELS_PER_WEIGHT < C * K:
        return 2
    padded2 = (2 * -(-Ho // 2)) * (2 * -(-Wo // 2))
    padded4 = (4 * -(-Ho // 4)) * (4 * -(-Wo // 4))
    return 4 if padded4 <= 1.1 * padded2 else 2
