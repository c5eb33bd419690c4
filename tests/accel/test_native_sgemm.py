"""The packed C SGEMM (aicslib/accel/src/aics_sgemm_packed.c) under the speed layer's convolutions:
products against a float64 NumPy reference on shapes that cross every tile and block edge,
transposed and strided operands, accumulation, bit-identical results when the rows or columns
are split over threads, the AICS_GEMM switch, and the fallback to BLAS where it was not built.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aicslib import flags
from aicslib.accel import c_sgemm, native_loader, work_sharder
from aicslib.accel import conv_forward as co

from native_library import library_fixture


lib = library_fixture(c_sgemm, "C SGEMM")


def reference(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def assert_gemm_close(got, a, b, base=None):
    ref = reference(a, b) + (0 if base is None else base.astype(np.float64))
    # fp32 dot products of length k: error grows like sqrt(k) * eps * |a||b|
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64) + 1.0
    tol = 4 * np.sqrt(max(a.shape[1], 1)) * np.finfo(np.float32).eps * scale
    assert got.shape == ref.shape and got.dtype == np.float32
    bad = np.abs(got - ref) > tol
    assert not bad.any(), f"{bad.sum()} elements off, worst {np.abs(got - ref).max()}"


def operand(rng, shape, transposed):
    """A float32 matrix of ``shape``, stored transposed (a strided view) when asked."""
    if transposed:
        return np.ascontiguousarray(rng.standard_normal(shape[::-1], dtype=np.float32)).T
    return rng.standard_normal(shape, dtype=np.float32)


@settings(max_examples=80, deadline=None)
@given(m=st.integers(0, 70), n=st.integers(0, 140), k=st.integers(0, 600),
       ta=st.booleans(), tb=st.booleans(), accumulate=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_products_match_float64_on_every_edge(lib, m, n, k, ta, tb, accumulate, seed):
    rng = np.random.default_rng(seed)
    a, b = operand(rng, (m, k), ta), operand(rng, (k, n), tb)
    base = rng.standard_normal((m, n), dtype=np.float32)
    out = base.copy()
    c_sgemm.sgemm(lib, a, b, out, accumulate=accumulate)
    assert_gemm_close(out, a, b, base if accumulate else None)


def test_blocks_bigger_than_the_panels(lib):
    """m, n and k each past the C file's MC / NC / KC blocking (240, 2048, 256)."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((517, 700), dtype=np.float32)
    b = rng.standard_normal((700, 2100), dtype=np.float32)
    out = np.empty((517, 2100), np.float32)
    assert_gemm_close(c_sgemm.sgemm(lib, a, b, out), a, b)


def test_strided_output_rows_and_sliced_operands(lib):
    rng = np.random.default_rng(2)
    big = rng.standard_normal((60, 90), dtype=np.float32)
    a, b = big[5:40:2, 3:50], big[10:57, 7:80:3]       # non-unit row and column strides
    out_full = np.full((25, 40), 7.0, np.float32)
    out = out_full[3:21, 2:27]                          # rows 40 floats apart
    c_sgemm.sgemm(lib, a, b, out)
    assert_gemm_close(out, a, b)
    untouched = np.ones_like(out_full, dtype=bool)
    untouched[3:21, 2:27] = False
    assert (out_full[untouched] == 7.0).all()


@pytest.mark.parametrize("shape", [(301, 77, 45), (64, 1000, 130), (13, 9, 300)])
def test_each_element_does_not_depend_on_its_block(lib, shape):
    """Row and column splits over threads give bit-identical results (as one BLAS call would)."""
    m, k, n = shape
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    whole = c_sgemm.sgemm(lib, a, b, np.empty((m, n), np.float32))
    parts = np.empty_like(whole)
    for r0, r1 in ((0, 7), (7, m // 2), (m // 2, m)):
        for c0, c1 in ((0, 5), (5, n)):
            c_sgemm.sgemm(lib, a[r0:r1], b[:, c0:c1], parts[r0:r1, c0:c1])
    np.testing.assert_array_equal(parts, whole)


def test_micro_tile_is_a_vector_tile(lib):
    mr, nr = c_sgemm.micro_tile()
    assert mr >= 4 and nr >= 8 and nr % 8 == 0


def test_usable_refuses_what_the_c_code_cannot_take():
    a = np.ones((4, 3), np.float32)
    b = np.ones((3, 5), np.float32)
    assert c_sgemm.usable(a, b, np.empty((4, 5), np.float32))
    assert not c_sgemm.usable(a.astype(np.float64), b, np.empty((4, 5), np.float32))
    assert not c_sgemm.usable(a, b, np.empty((5, 4), np.float32).T)   # columns not unit stride
    buf = np.ones((4, 5), np.float32)
    assert not c_sgemm.usable(buf[:, :3], b, buf[:, :5])              # out overlaps a


@settings(max_examples=30, deadline=None)
@given(count=st.integers(1, 5), m=st.integers(1, 40), n=st.integers(1, 70), k=st.integers(1, 90),
       ta=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_a_batched_call_gives_each_product_bit_for_bit(lib, count, m, n, k, ta, seed):
    """One C call for a stack: each product the same bits as its own sgemm call, against float64."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((count, m, k), dtype=np.float32)
    if ta:                                               # stacks of transposed matrices
        a = np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1)
    b = rng.standard_normal((count, k, n), dtype=np.float32)[:, :, ::-1]     # negative column stride
    out = np.full((count, m, n), np.nan, np.float32)
    assert c_sgemm.usable_batched(a, b, out)
    c_sgemm.sgemm_batched(lib, a, b, out)
    for i in range(count):
        one = c_sgemm.sgemm(lib, a[i], b[i], np.empty((m, n), np.float32))
        np.testing.assert_array_equal(out[i], one)
        assert_gemm_close(out[i], a[i], b[i])


def test_work_sharder_batched_gemm_makes_one_c_call(lib, monkeypatch):
    monkeypatch.setattr(flags, "GEMM", "native")
    calls = []
    real = c_sgemm.sgemm_batched
    monkeypatch.setattr(c_sgemm, "sgemm_batched", lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((16, 30, 20), dtype=np.float32), rng.standard_normal((16, 20, 10), dtype=np.float32)
    out = work_sharder.batched_gemm(a, b, np.empty((16, 30, 10), np.float32))
    assert calls == [1]
    for i in range(16):
        assert_gemm_close(out[i], a[i], b[i])
    buf = np.ones((2, 4, 4), np.float32)
    assert not c_sgemm.usable_batched(buf[:, :, :2], buf[:, :2, :2], buf[:, :, 2:])   # overlap


@pytest.mark.parametrize("choice", ["native", "blas"])
def test_work_sharder_gemm_follows_aics_gemm(lib, monkeypatch, choice):
    calls = []
    real = c_sgemm.sgemm
    monkeypatch.setattr(c_sgemm, "sgemm", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(flags, "GEMM", choice)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((40, 30), dtype=np.float32), rng.standard_normal((30, 20), dtype=np.float32)
    out = work_sharder.gemm(a, b, np.empty((40, 20), np.float32))
    assert_gemm_close(out, a, b)
    assert len(calls) == (1 if choice == "native" else 0)
    calls.clear()
    work_sharder.gemm(a.astype(np.float64), b.astype(np.float64), np.empty((40, 20)))
    assert calls == []                                   # float64 always goes to BLAS


def test_gemm_with_overlapping_output_takes_blas(lib, monkeypatch):
    monkeypatch.setattr(flags, "GEMM", "native")
    buf = np.arange(36, dtype=np.float32).reshape(6, 6) / 10
    expected = reference(buf[:, :3], buf[:3, :3])
    out = work_sharder.gemm(buf[:, :3], buf[:3, :3], buf[:, 3:])   # out shares buf with a and b
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_a_bad_aics_gemm_value_is_named(monkeypatch):
    monkeypatch.setattr(flags, "GEMM", "mkl")
    with pytest.raises(ValueError, match="AICS_GEMM must be one of auto, native, blas, got 'mkl'"):
        work_sharder.gemm(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), np.empty((2, 2), np.float32))


def test_where_it_was_not_built_blas_computes_and_native_is_an_error(lib, monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 9, 9, 16), dtype=np.float32)
    w = rng.standard_normal((3, 3, 16, 24), dtype=np.float32)
    y_native = co.conv2d(x, w, (1, 1), "SAME", algorithm="im2col")
    with native_loader.without_library(c_sgemm.LIBRARY, "no compiler at install"):
        assert work_sharder.native_gemm_library() is None
        assert c_sgemm.fallback_reason() == "no compiler at install"
        np.testing.assert_allclose(co.conv2d(x, w, (1, 1), "SAME", algorithm="im2col"), y_native,
                                   rtol=1e-4, atol=1e-4)
        monkeypatch.setattr(flags, "GEMM", "native")
        with pytest.raises(RuntimeError, match="AICS_GEMM=native.*no compiler at install"):
            co.conv2d(x, w, (1, 1), "SAME", algorithm="im2col")
    assert c_sgemm.library() is lib
