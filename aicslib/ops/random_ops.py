"""Random ops (TF's core/ops/random_ops.cc, python/ops/random_ops.py) and seeds.

Seeds follow TF (python/framework/random_seed.py): an op's randomness is
fixed by the pair (graph-level seed, op seed). With a graph seed and no op
seed, the op seed is derived from the graph's op count (eager: drawn from
``random.Random(global_seed)``, as TF's context does), so a program is
reproducible; with an op seed only, the graph seed defaults to 87654321; with
neither, results differ every run. The kernels draw with TF's Philox generator,
so the same seeds give TF's numbers (kernels/philox_random.py).
"""
import random as _pyrandom

import numpy as np

from ..framework import context, dtypes
from ..framework.common_shapes import shape_from_constant_input
from ..framework.op_def import register_op
from ..framework.execute import apply_op, reset_random_streams
from ..framework.ops import get_default_graph

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1



def _random_float_op(builder):
    """The signature the three float samplers share (shape -> samples of ``dtype``)."""
    builder.input("shape: T").output("output: dtype").attr("seed: int = 0") \
        .attr("seed2: int = 0").attr("dtype: {half, bfloat16, float, double}") \
        .attr("T: {int32, int64}").set_is_stateful().set_shape_fn(shape_from_constant_input(0))


_random_float_op(register_op("RandomStandardNormal"))
_random_float_op(register_op("RandomUniform"))
_random_float_op(register_op("TruncatedNormal"))
register_op("RandomUniformInt").input("shape: T").input("minval: Tout").input("maxval: Tout") \
    .output("output: Tout").attr("seed: int = 0").attr("seed2: int = 0").attr("Tout: {int32, int64}") \
    .attr("T: {int32, int64}").set_is_stateful().set_shape_fn(shape_from_constant_input(0))
register_op("RandomShuffle").input("value: T").output("output: T").attr("seed: int = 0") \
    .attr("seed2: int = 0").attr("T: {half, bfloat16, float, double, int32, int64, uint8, bool}") \
    .set_is_stateful().set_shape_fn(lambda ctx: ctx.input_shape(0))

# The eager global seed and the generator of op seeds drawn from it (TF's context._rng:
# random.Random(global_seed).randint(0, 2**31 - 1) per op without its own seed).
_eager_seed = {"global": None, "rng": _pyrandom.Random()}


def set_random_seed(seed):
    """Sets the graph-level seed (the default graph's, or the eager global seed)."""
    if context.executing_eagerly():
        _eager_seed["global"] = None if seed is None else int(seed)
        _eager_seed["rng"] = _pyrandom.Random(_eager_seed["global"])
        reset_random_streams()
    else:
        get_default_graph().seed = None if seed is None else int(seed)


set_seed = set_random_seed


def _truncate(seed):
    return int(seed) % _MAXINT32


def get_seed(op_seed):
    """The (seed, seed2) pair an op uses, as tf.compat.v1.get_seed."""
    if context.executing_eagerly():
        global_seed = _eager_seed["global"]
        if global_seed is not None and op_seed is None:
            op_seed = _eager_seed["rng"].randint(0, _MAXINT32)
    else:
        g = get_default_graph()
        global_seed = g.seed
        if global_seed is not None and op_seed is None:
            op_seed = len(g.get_operations())
    if global_seed is not None:
        seeds = (_truncate(global_seed), _truncate(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _truncate(op_seed))
    else:
        seeds = (None, None)
    if seeds == (0, 0):
        seeds = (0, _MAXINT32)  # (0, 0) would mean "nondeterministic" to the kernel
    return seeds


def _seed_attrs(seed):
    s1, s2 = get_seed(seed)
    return {"seed": s1 or 0, "seed2": s2 or 0}


def _shape(shape):
    if hasattr(shape, "dtype") and not isinstance(shape, np.ndarray):
        return shape
    return np.asarray(shape, dtype=np.int32).reshape(-1)


def _param(value, dtype):
    """mean/stddev as TF takes them: a Python number or array, or a tensor (a graph op's output)."""
    from ..framework.ops import convert_to_tensor, is_tensor
    if is_tensor(value):
        return convert_to_tensor(value, dtype=dtype)
    return np.asarray(value, dtype.as_numpy_dtype)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    from ..framework.ops import name_scope
    with name_scope(name, "random_normal"):
        rnd = apply_op("RandomStandardNormal", [_shape(shape)], {"dtype": dtype, **_seed_attrs(seed)},
                       name="RandomStandardNormal")
        return rnd * _param(stddev, dtype) + _param(mean, dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values, re-drawn when more than 2 standard deviations from the mean."""
    dtype = dtypes.as_dtype(dtype)
    from ..framework.ops import name_scope
    with name_scope(name, "truncated_normal"):
        rnd = apply_op("TruncatedNormal", [_shape(shape)], {"dtype": dtype, **_seed_attrs(seed)},
                       name="TruncatedNormal")
        return rnd * _param(stddev, dtype) + _param(mean, dtype)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform values in [minval, maxval) (maxval defaults to 1 for floats)."""
    dtype = dtypes.as_dtype(dtype)
    from ..framework.ops import name_scope
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype random_uniform")
        return apply_op("RandomUniformInt", [_shape(shape), np.asarray(minval, dtype.as_numpy_dtype),
                                             np.asarray(maxval, dtype.as_numpy_dtype)],
                        _seed_attrs(seed), name=name or "random_uniform")
    if maxval is None:
        maxval = 1.0
    with name_scope(name, "random_uniform"):
        rnd = apply_op("RandomUniform", [_shape(shape)], {"dtype": dtype, **_seed_attrs(seed)},
                       name="RandomUniform")
        lo = np.asarray(minval, dtype.as_numpy_dtype)
        return rnd * (np.asarray(maxval, dtype.as_numpy_dtype) - lo) + lo


def random_shuffle(value, seed=None, name=None):
    return apply_op("RandomShuffle", [value], _seed_attrs(seed), name=name)
