"""The output stage of fused contractions, block by block and in C: the speed layer's fused kernels.

The reference (``aicslib/kernels/fused_eigen_output_kernels.py``) applies a
fused Conv2D's or MatMul's bias (or inference batch norm) and activation to
the whole output, one NumPy call per step. Here :class:`OutputStage` is
checked and prepared once per kernel call and applied to blocks of
``BLOCK_ELEMENTS`` (a size that stays in the L2 cache between the steps) as
soon as they are computed, on the thread that computed them; for float32 the
steps run as one C loop over each block (``src/aics_output_stage.c``, the same
operations in the same order, so the same bits) where it is built. Each step
is the same NumPy operation as the unfused kernel's, so fused and unfused
results are bit-identical either way.

The fused kernels registered at the end (``_FusedConv2D``,
``_FusedDepthwiseConv2dNative``, ``_FusedMatMul``) are preferred to the
reference's (``conv_ops_fused_impl.py``, ``matmul_op_fused.py``); an NHWC
``_FusedConv2D`` hands its stage to the speed layer's ``conv2d`` as an
``epilogue`` (TF's output kernel), which applies it per block, or inside the C
Winograd output transform.
"""
import numpy as np

from ..framework.dtypes import float32, float64
from ..kernels import fused_eigen_output_kernels as reference
from ..kernels.conv_2d import conv_args_from_attrs
from ..kernels.conv_ops_fused_impl import fused_conv
from ..kernels.fused_eigen_output_kernels import batch_norm_scaling, check_output_stage
from ..kernels.matmul_op_fused import fused_matmul
from . import c_output_stage, work_sharder
from .conv_forward import conv2d
from .registration import register_fast_kernel

#: Elements per block of the output stage: 64K float32 = 256 KiB.
BLOCK_ELEMENTS = 1 << 16

_ZEROS = {}  # (shape, dtype) -> read-only zeros: a block's or tile's shape repeats, so a handful


def _zeros_like(y):
    key = (y.shape, y.dtype.str)
    z = _ZEROS.get(key)
    if z is None:
        if len(_ZEROS) > 64:
            _ZEROS.clear()
        z = _ZEROS[key] = np.zeros(y.shape, y.dtype)
        z.flags.writeable = False
    return z


def relu(y, out=None, zeros_up_to=BLOCK_ELEMENTS):
    """``np.maximum(y, 0)`` (into ``out``), against a cached array of zeros when ``y`` has at most
    ``zeros_up_to`` elements. Against an array np.maximum takes NumPy's SIMD loop, against a scalar
    0 a much slower one (benchmarks/README.md, "Fused output stages"); the results are
    bit-identical, NaN and -0.0 included (tests/grappler/test_elementwise_fusion.py). Also the fused
    elementwise kernel's Relu (fused_elementwise.py)."""
    if y.size > zeros_up_to:
        return np.maximum(y, y.dtype.type(0), out=out)
    return np.maximum(y, _zeros_like(y), out=out)


_TILED = {}  # (vector bytes, dtype, rows) -> read-only (rows, C) copies of a per-channel vector


def _tiled(v, rows):
    """``v`` repeated over ``rows`` rows: NumPy's contiguous loops run faster on a (rows, C)
    operand than when broadcasting a (C,) vector over a short inner axis (benchmarks/README.md,
    "Fused output stages"). Same values, so the same results. Cached: the vectors are a graph's
    constants."""
    key = (v.tobytes(), v.dtype.str, rows)
    t = _TILED.get(key)
    if t is None:
        if len(_TILED) > 256:
            _TILED.clear()
        t = _TILED[key] = np.tile(v, (rows, 1))
        t.flags.writeable = False
    return t


def apply_activation(y, activation):
    """The reference's activation on ``y`` in place, Relu through :func:`relu`."""
    if activation == "Relu":
        return relu(y, out=y)
    return reference.apply_activation(y, activation)


class OutputStage:
    """A fused op's output stage, checked and prepared once: ``stage(y)`` applies it to ``y``.

    The checks, the batch norm's per-channel scaling and the choice between the C loop and
    NumPy's steps happen here, once per kernel call, so that a fused Conv2D applying it to
    each block of its output pays only the work itself per block.
    """

    def __init__(self, fused_ops, args, epsilon, channels, dtype, node="fused op"):
        kind, activation = check_output_stage(fused_ops, args, channels, node)
        self.kind, self.activation, self.channels = kind, activation, channels
        if self.kind == "BiasAdd":
            self.vectors = [args[0]]
        else:
            scale, offset, mean, variance = args
            # once, as the unfused kernel does
            self.vectors = [mean, batch_norm_scaling(scale, variance, epsilon), offset]
        self.lib = None
        if (np.dtype(dtype) == np.float32 and all(v.dtype == np.float32 for v in self.vectors)
                and activation in c_output_stage.ACTIVATIONS):
            self.lib = c_output_stage.library()
            if self.lib is not None:
                self.vectors = [np.ascontiguousarray(v) for v in self.vectors]

    @property
    def c_arguments(self):
        """The stage as aicslib's C code takes it (``c_output_stage.c_arguments``), or None
        where this stage computes with NumPy (no C library, float64, Elu)."""
        if self.lib is None:
            return None
        return c_output_stage.c_arguments(self.kind, self.activation, *self.vectors)

    def __call__(self, y):
        """The stage on ``y`` (NHWC / [M, N]) in place when it can be; returns the result."""
        if not y.flags.writeable:
            y = np.array(y)
        if not y.flags.c_contiguous:
            y = np.ascontiguousarray(y)
        c = self.channels
        rows = y.reshape(-1, c) if y.ndim else y.reshape(1, 1)
        if self.lib is not None and c_output_stage.handles(rows, self.kind, self.activation):
            _native_stage(self.lib, rows, self.kind, self.activation, self.vectors)
            return y
        step = max(1, BLOCK_ELEMENTS // max(c, 1))
        step = max(1, min(step, rows.shape[0]))   # an empty output still has a valid (empty) block
        tiled = [_tiled(v, step) for v in self.vectors]
        for r0 in range(0, rows.shape[0], step):
            blk = rows[r0:r0 + step]
            n = blk.shape[0]
            if self.kind == "BiasAdd":
                np.add(blk, tiled[0][:n], out=blk)
            else:  # batch_norm_inference's three steps, in place
                mean, s, offset = tiled
                np.subtract(blk, mean[:n], out=blk)
                np.multiply(blk, s[:n], out=blk)
                np.add(blk, offset[:n], out=blk)
            if self.activation is not None:
                apply_activation(blk, self.activation)
        return y


def apply_output_stage(y, fused_ops, args, epsilon, node="fused op"):
    """Bias or batch norm, then the activation, on the contraction's output ``y`` (NHWC / [M, N])."""
    return OutputStage(fused_ops, args, epsilon, y.shape[-1] if y.ndim else 1, y.dtype, node)(y)


#: Outputs of more than this many elements have their C output stage split over the threads
#: (a fused Conv2D calls it per block, already on the threads; MatMul and depthwise on the
#: whole): below, handing work to the pool costs as much as it saves (benchmarks/README.md).
NATIVE_SPLIT_ELEMENTS = 1 << 21


def _native_stage(lib, rows, stage, activation, vectors):
    """The C output stage on ``rows`` in place, in row ranges on the threads when big."""
    m, c = rows.shape
    if m * c <= NATIVE_SPLIT_ELEMENTS or work_sharder.in_worker() or work_sharder.NUM_THREADS <= 1:
        c_output_stage.apply(lib, rows, stage, activation, *vectors)
        return
    step = -(-m // (2 * work_sharder.NUM_THREADS))
    work_sharder.run_blocks(
        lambda r: c_output_stage.apply(lib, rows[r[0]:r[1]], stage, activation, *vectors),
        [(r0, min(r0 + step, m), 0, 0) for r0 in range(0, m, step)])


# ----------------------------------------------------------------------------
# Kernel registrations, preferred to conv_ops_fused_impl.py's and matmul_op_fused.py's
# ----------------------------------------------------------------------------

FUSED_TYPES = {"T": [float32, float64]}


@register_fast_kernel("_FusedConv2D", FUSED_TYPES)
def fused_conv2d_kernel(ctx, input, filter, args):
    a = ctx.attrs
    if a.get("data_format", "NHWC") != "NHWC" or input.ndim != 4:
        return fused_conv("Conv2D", ctx, input, filter, args, apply_output_stage)
    # checked and prepared once, up front; then applied to each block of the output
    stage = OutputStage(list(a["fused_ops"]), args, a["epsilon"], filter.shape[-1], input.dtype,
                        f"{ctx.op_type} '{ctx.node_name}'")
    s, p, d = conv_args_from_attrs(a["strides"], a["padding"], a.get("explicit_paddings", []), "NHWC",
                                   a.get("dilations", [1, 1, 1, 1]), "Conv2D")

    def epilogue(blk):
        out = stage(blk)
        if out is not blk:                  # it worked on a copy (a block that is not contiguous)
            np.copyto(blk, out.reshape(blk.shape))
    # the same stage for C code that writes the output (Winograd's output transform applies it
    # to each tile's pixels as they are written): see conv_forward.conv2d
    epilogue.c_output_stage = stage.c_arguments
    y = conv2d(input, filter, s, p, d, epilogue=epilogue)
    return y if y.dtype == input.dtype else y.astype(input.dtype)


@register_fast_kernel("_FusedDepthwiseConv2dNative", FUSED_TYPES)
def fused_depthwise_conv2d_kernel(ctx, input, filter, args):
    # the registered depthwise kernel (the speed layer's, while it is on), then this stage
    return fused_conv("DepthwiseConv2dNative", ctx, input, filter, args, apply_output_stage)


@register_fast_kernel("_FusedMatMul", FUSED_TYPES)
def fused_matmul_kernel(ctx, a, b, args):
    return fused_matmul(ctx, a, b, args, apply_output_stage)
