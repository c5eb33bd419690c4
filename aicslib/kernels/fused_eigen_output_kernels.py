"""The output stage of fused contractions (TF's ``core/kernels/fused_eigen_output_kernels.h``).

A fused Conv2D or MatMul computes the contraction, then applies the bias (or
an inference batch norm) and the activation to its output *in place*, block
by block (``BLOCK_ELEMENTS``, a size that stays in the L2 cache between the
steps), instead of three kernels each streaming the whole tensor through
memory and allocating a new one. Each step is the same NumPy operation the
unfused kernel makes (``nn_ops.py``: ``BiasAdd``, ``Relu``...;
``fused_batch_norm_op.py``), so fused and unfused results are bit-identical.
For float32 the same steps run as one C loop over each block
(``aicslib/native/src/aics_output_stage.c``, the same operations in the same
order, so the same bits) when it builds; NumPy's calls otherwise.
"""
import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import kernel_registry
from ..native import output_stage_binding
from . import work_sharder


def batch_norm_scaling(scale, variance, epsilon):
    """scale / sqrt(variance + epsilon), per channel (TF computes it once, then scales every pixel)."""
    return np.reciprocal(np.sqrt(variance + epsilon)) * scale


def batch_norm_inference(x, scale, offset, mean, variance, epsilon, out=None):
    """(x - mean) * scale / sqrt(variance + epsilon) + offset, over the last (channel) axis."""
    s = batch_norm_scaling(scale, variance, epsilon)
    out = np.subtract(x, mean, out=out)
    np.multiply(out, s, out=out)
    np.add(out, offset, out=out)
    return out


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
    0 one about 5-10x slower (measured: 3.8 vs 32 us per 64K floats, NumPy 2.4); the results are
    bit-identical, NaN and -0.0 included (tests/test_elementwise_fusion.py). Also the fused
    elementwise kernel's Relu (cwise_ops_fused.py)."""
    if y.size > zeros_up_to:
        return np.maximum(y, y.dtype.type(0), out=out)
    return np.maximum(y, _zeros_like(y), out=out)


_TILED = {}  # (vector bytes, dtype, rows) -> read-only (rows, C) copies of a per-channel vector


def _tiled(v, rows):
    """``v`` repeated over ``rows`` rows: NumPy's contiguous loops run 2-3x faster on a (rows, C)
    operand than when broadcasting a (C,) vector over a short inner axis (measured for C of
    32 to 128). Same values, so the same results. Cached: the vectors are a graph's constants."""
    key = (v.tobytes(), v.dtype.str, rows)
    t = _TILED.get(key)
    if t is None:
        if len(_TILED) > 256:
            _TILED.clear()
        t = _TILED[key] = np.tile(v, (rows, 1))
        t.flags.writeable = False
    return t


def apply_activation(y, activation):
    """Relu / Relu6 / Elu on ``y`` in place (Elu through a temporary, as its kernel)."""
    zero = y.dtype.type(0)
    if activation == "Relu":
        relu(y, out=y)
    elif activation == "Relu6":
        np.clip(y, zero, y.dtype.type(6), out=y)
    elif activation == "Elu":
        np.copyto(y, np.where(y > 0, y, np.expm1(np.minimum(y, 0))))
    else:
        raise InvalidArgumentError(None, None, f"Unsupported fused activation {activation!r}")
    return y


class OutputStage:
    """A fused op's output stage, checked and prepared once: ``stage(y)`` applies it to ``y``.

    The checks, the batch norm's per-channel scaling and the choice between the C loop and
    NumPy's steps happen here, once per kernel call, so that a fused Conv2D applying it to
    each block of its output pays only the work itself per block.
    """

    def __init__(self, fused_ops, args, epsilon, channels, dtype, node="fused op"):
        for a in args:
            if a.ndim != 1 or a.shape[0] != channels:
                raise InvalidArgumentError(None, None, f"{node}: fused argument must be a vector of "
                                           f"{channels} (the output depth), got shape {list(a.shape)}")
        if not fused_ops or fused_ops[0] not in ("BiasAdd", "FusedBatchNorm"):
            raise InvalidArgumentError(None, None, f"{node}: unsupported fused_ops {list(fused_ops)}")
        activation = fused_ops[1] if len(fused_ops) > 1 else None
        if activation not in (None, "Relu", "Relu6", "Elu"):
            raise InvalidArgumentError(None, None, f"Unsupported fused activation {activation!r}")
        self.kind, self.activation, self.channels = fused_ops[0], activation, channels
        if self.kind == "BiasAdd":
            self.vectors = [args[0]]
        else:
            scale, offset, mean, variance = args
            # once, as the unfused kernel does
            self.vectors = [mean, batch_norm_scaling(scale, variance, epsilon), offset]
        self.lib = None
        if (np.dtype(dtype) == np.float32 and all(v.dtype == np.float32 for v in self.vectors)
                and activation in output_stage_binding.ACTIVATIONS):
            self.lib = output_stage_binding.library()
            if self.lib is not None:
                self.vectors = [np.ascontiguousarray(v) for v in self.vectors]

    @property
    def c_arguments(self):
        """The stage as aicslib's C code takes it (``output_stage_binding.c_arguments``), or None
        where this stage computes with NumPy (no C library, float64, Elu)."""
        if self.lib is None:
            return None
        return output_stage_binding.c_arguments(self.kind, self.activation, *self.vectors)

    def __call__(self, y):
        """The stage on ``y`` (NHWC / [M, N]) in place when it can be; returns the result."""
        if not y.flags.writeable:
            y = np.array(y)
        if not y.flags.c_contiguous:
            y = np.ascontiguousarray(y)
        c = self.channels
        rows = y.reshape(-1, c) if y.ndim else y.reshape(1, 1)
        if self.lib is not None and output_stage_binding.handles(rows, self.kind, self.activation):
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
#: whole). One thread does 512K elements in about 50 us, and handing work to the pool costs
#: about as much again (measured: 160 us split against 60 us on one thread).
NATIVE_SPLIT_ELEMENTS = 1 << 21


def _native_stage(lib, rows, stage, activation, vectors):
    """The C output stage on ``rows`` in place, in row ranges on the threads when big."""
    m, c = rows.shape
    if m * c <= NATIVE_SPLIT_ELEMENTS or work_sharder.in_worker() or work_sharder.NUM_THREADS <= 1:
        output_stage_binding.apply(lib, rows, stage, activation, *vectors)
        return
    step = -(-m // (2 * work_sharder.NUM_THREADS))
    work_sharder.run_blocks(
        lambda r: output_stage_binding.apply(lib, rows[r[0]:r[1]], stage, activation, *vectors),
        [(r0, min(r0 + step, m), 0, 0) for r0 in range(0, m, step)])


def contraction(op_type, inputs, attrs):
    """Runs the registered CPU kernel of the unfused contraction ``op_type`` on ``inputs``.

    The fused kernels call the very kernel the unfused graph would (through the
    registry, so kernels do not import each other's internals)."""
    kd = kernel_registry.lookup(op_type, "CPU", {"T": attrs["T"]})
    return kd.impl(*inputs, **kd.kernel_attrs(attrs))
