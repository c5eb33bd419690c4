"""The output stage of fused contractions (TF's ``core/kernels/fused_eigen_output_kernels.h``).

A fused Conv2D or MatMul (made by Grappler's remapper) computes the
contraction, then applies the bias (or an inference batch norm) and the
activation to its output in place. Each step is the same NumPy operation the
unfused kernel makes (``nn_ops.py``: ``BiasAdd``, ``Elu``; ``framework/cwise_table.py``: ``Relu``, ``Relu6``;
``fused_batch_norm_op.py``), so fused and unfused results are bit-identical.
The speed layer (``aicslib/accel/fused_output_stage.py``) applies the same
steps block by block while each block is in cache, in C where it is built.
"""
import numpy as np

from ..framework.cwise_table import BY_OP
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import kernel_registry

#: What ``fused_ops`` may hold: a stage, then optionally an activation.
STAGES = ("BiasAdd", "FusedBatchNorm")
ACTIVATIONS = (None, "Relu", "Relu6", "Elu")


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


def apply_activation(y, activation):
    """Relu / Relu6 / Elu on ``y`` in place (Elu through a temporary, as its kernel)."""
    if activation in ("Relu", "Relu6"):
        BY_OP[activation].fn(y, out=y)   # the unfused kernel's own function
    elif activation == "Elu":
        np.copyto(y, np.where(y > 0, y, np.expm1(np.minimum(y, 0))))
    else:
        raise InvalidArgumentError(None, None, f"Unsupported fused activation {activation!r}")
    return y


def check_output_stage(fused_ops, args, channels, node="fused op"):
    """``(stage, activation)`` of ``fused_ops`` after TF's checks of it and of its vectors ``args``."""
    for a in args:
        if a.ndim != 1 or a.shape[0] != channels:
            raise InvalidArgumentError(None, None, f"{node}: fused argument must be a vector of "
                                       f"{channels} (the output depth), got shape {list(a.shape)}")
    if not fused_ops or fused_ops[0] not in STAGES:
        raise InvalidArgumentError(None, None, f"{node}: unsupported fused_ops {list(fused_ops)}")
    activation = fused_ops[1] if len(fused_ops) > 1 else None
    if activation not in ACTIVATIONS:
        raise InvalidArgumentError(None, None, f"Unsupported fused activation {activation!r}")
    return fused_ops[0], activation


def apply_output_stage(y, fused_ops, args, epsilon, node="fused op"):
    """Bias or batch norm, then the activation, on the contraction's output ``y`` (NHWC / [M, N]),
    in place where ``y`` is writable; returns the result."""
    stage, activation = check_output_stage(fused_ops, args, y.shape[-1] if y.ndim else 1, node)
    if not y.flags.writeable:
        y = np.array(y)
    if stage == "BiasAdd":
        np.add(y, args[0], out=y)
    else:
        scale, offset, mean, variance = args
        batch_norm_inference(y, scale, offset, mean, variance, epsilon, out=y)
    if activation is not None:
        apply_activation(y, activation)
    return y


def contraction(op_type, inputs, attrs):
    """Runs the registered CPU kernel of the unfused contraction ``op_type`` on ``inputs``.

    The fused kernels call the very kernel the unfused graph would (through the
    registry, so kernels do not import each other's internals)."""
    kd = kernel_registry.lookup(op_type, "CPU", {"T": attrs["T"]})
    return kd.impl(*inputs, **kd.kernel_attrs(attrs))
