"""The fused output stage in C (aicslib/accel/src/aics_output_stage.c): bit-identical to the
NumPy steps of the unfused kernels (BiasAdd, the inference batch norm's three steps, Relu as
np.maximum, Relu6 as np.clip) on random blocks with NaN, -0.0 and infinities, on strided
rows, and through apply_output_stage with and without the library.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aicslib.accel import c_output_stage
from aicslib.accel import fused_output_stage as fe

from native_library import library_fixture

SPECIALS = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 6.0, -6.0, 1e-38, -1e-45, 3e38],
                    np.float32)


lib = library_fixture(c_output_stage, "C output stage")


def numpy_steps(y, stage, activation, a, s=None, b=None):
    """What the unfused kernels compute, one NumPy call per step (nn_ops.py, fused_batch_norm_op.py)."""
    y = y.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        if stage == "BiasAdd":
            y = np.add(y, a)
        else:
            y = np.add(np.multiply(np.subtract(y, a), s), b)
        if activation == "Relu":
            y = np.maximum(y, np.float32(0))
        elif activation == "Relu6":
            y = np.clip(y, np.float32(0), np.float32(6))
    return y


def block(rng, m, c):
    y = (rng.standard_normal((m, c)) * 4).astype(np.float32)
    flat = y.reshape(-1)
    k = min(flat.size, SPECIALS.size)
    flat[rng.choice(flat.size, k, replace=False)] = SPECIALS[:k]
    return y


def same_bits(x, y):
    return x.shape == y.shape and np.array_equal(x.view(np.uint32), y.view(np.uint32))


@settings(max_examples=60, deadline=None)
@given(m=st.integers(0, 40), c=st.integers(0, 70), stage=st.sampled_from(["BiasAdd", "FusedBatchNorm"]),
       activation=st.sampled_from([None, "Relu", "Relu6"]), seed=st.integers(0, 2 ** 16))
def test_one_pass_is_bit_identical_to_the_numpy_steps(lib, m, c, stage, activation, seed):
    rng = np.random.default_rng(seed)
    y = block(rng, m, c)
    a, s, b = [rng.standard_normal(c).astype(np.float32) for _ in range(3)]
    expected = numpy_steps(y, stage, activation, a, s, b)
    got = c_output_stage.apply(lib, y.copy(), stage, activation, a,
                                     *((s, b) if stage == "FusedBatchNorm" else ()))
    assert same_bits(got, expected)


def test_strided_rows_leave_the_gaps_alone(lib):
    rng = np.random.default_rng(1)
    full = block(rng, 12, 50)
    rows = full[1:11:3, 5:37]                       # rows 150 floats apart, 32 channels
    before = full.copy()
    bias = rng.standard_normal(32).astype(np.float32)
    expected = numpy_steps(rows, "BiasAdd", "Relu", bias)
    c_output_stage.apply(lib, rows, "BiasAdd", "Relu", bias)
    assert same_bits(np.ascontiguousarray(rows), expected)
    mask = np.ones(full.shape, bool)
    mask[1:11:3, 5:37] = False
    assert same_bits(full[mask], before[mask])


def test_handles_only_what_the_c_code_does():
    y = np.zeros((4, 3), np.float32)
    assert c_output_stage.handles(y, "BiasAdd", "Relu6")
    assert not c_output_stage.handles(y, "BiasAdd", "Elu")
    assert not c_output_stage.handles(y.astype(np.float64), "BiasAdd", None)
    assert not c_output_stage.handles(np.zeros((3, 4), np.float32).T, "BiasAdd", None)


@pytest.mark.parametrize("with_library", [True, False])
@pytest.mark.parametrize("fused_ops", [["BiasAdd"], ["BiasAdd", "Relu"], ["FusedBatchNorm", "Relu6"],
                                       ["FusedBatchNorm", "Relu"], ["BiasAdd", "Elu"]])
def test_apply_output_stage_gives_the_same_bits_either_way(lib, monkeypatch, with_library, fused_ops):
    """Big enough (past NATIVE_SPLIT_ELEMENTS) that the C stage is split over the threads."""
    if not with_library:
        monkeypatch.setattr(c_output_stage, "library", lambda: None)
    rng = np.random.default_rng(2)
    c = 48
    y = block(rng, fe.NATIVE_SPLIT_ELEMENTS // c + 3, c)
    scale, offset = rng.uniform(0.5, 2, c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    mean, variance = rng.standard_normal(c).astype(np.float32), rng.uniform(0.1, 3, c).astype(np.float32)
    eps = 1e-3
    if fused_ops[0] == "BiasAdd":
        args, vectors = [offset], (offset,)
    else:
        args, vectors = [scale, offset, mean, variance], (mean, fe.batch_norm_scaling(scale, variance, eps), offset)
    activation = fused_ops[1] if len(fused_ops) > 1 else None
    if activation == "Elu":
        with np.errstate(invalid="ignore", over="ignore"):
            z = np.add(y, offset)
            expected = np.where(z > 0, z, np.expm1(np.minimum(z, 0))).astype(np.float32)
    else:
        expected = numpy_steps(y, fused_ops[0], activation, *vectors)
    with np.errstate(invalid="ignore", over="ignore"):
        got = fe.apply_output_stage(y.copy(), fused_ops, args, eps)
    assert same_bits(got, expected)
