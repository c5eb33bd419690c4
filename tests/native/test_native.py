"""aicslib.native: the C SGEMM through ctypes, SWIG and pybind11, its cache, its fallback,
and MatMul on the NATIVE device (exercise 5.8).

The bindings are compiled once per test session (``bindings`` fixture) into the cache
the notebooks use too, so a second run only loads them.
"""
import concurrent.futures
import ctypes
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aicslib as aics
from aicslib import native
from aicslib.native import build, ctypes_binding


def brute_force_matmul(a, b, transpose_a, transpose_b):
    """op(a) @ op(b) by three Python loops in float64: independent of every binding and of BLAS."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if transpose_a:
        a = a.T
    if transpose_b:
        b = b.T
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            total = 0.0
            for p in range(k):
                total += a[i, p] * b[p, j]
            out[i, j] = total
    return out


def stored(rng, rows, cols, transposed):
    """A float32 matrix that op() turns into rows x cols (stored cols x rows when transposed)."""
    shape = (cols, rows) if transposed else (rows, cols)
    return rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def bindings():
    """The bindings that load here; a missing tool skips with the message naming the extra."""
    native.reset()
    loaded, missing = [], {}
    for name in native.BINDINGS:
        try:
            native.load(name)
            loaded.append(name)
        except (native.BindingUnavailable, native.CompilerNotFoundError) as e:
            missing[name] = str(e)
    return loaded, missing


@pytest.fixture(params=native.BINDINGS)
def binding(request, bindings):
    loaded, missing = bindings
    if request.param not in loaded:
        pytest.skip(missing[request.param])
    return request.param


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_each_binding_matches_brute_force(binding, transpose_a, transpose_b):
    rng = np.random.default_rng(0)
    a = stored(rng, 5, 7, transpose_a)
    b = stored(rng, 7, 3, transpose_b)
    got = native.sgemm(a, b, transpose_a, transpose_b, binding=binding)
    assert got.dtype == np.float32 and got.shape == (5, 3)
    np.testing.assert_allclose(got, brute_force_matmul(a, b, transpose_a, transpose_b), rtol=1e-5, atol=1e-5)


def test_blocks_larger_than_one_panel(binding):
    """k > KC (256) and n > 2 NC (256): the packed panels, their edges, the accumulation over
    several k panels, the four-row micro-kernel and the leftover rows (m = 7 = 4 + 3).
    Reference: the broadcast sum of products in float64 (no BLAS)."""
    rng = np.random.default_rng(1)
    for transpose_a, transpose_b in [(False, False), (True, True)]:
        a = stored(rng, 7, 300, transpose_a)
        b = stored(rng, 300, 530, transpose_b)
        op_a = (a.T if transpose_a else a).astype(np.float64)
        op_b = (b.T if transpose_b else b).astype(np.float64)
        want = (op_a[:, :, None] * op_b[None, :, :]).sum(axis=1)
        got = native.sgemm(a, b, transpose_a, transpose_b, binding=binding)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(0, 6), n=st.integers(0, 6), k=st.integers(0, 6),
       transpose_a=st.booleans(), transpose_b=st.booleans(), seed=st.integers(0, 2**16))
def test_all_bindings_and_numpy_agree_over_shapes(bindings, m, n, k, transpose_a, transpose_b, seed):
    rng = np.random.default_rng(seed)
    a = stored(rng, m, k, transpose_a)
    b = stored(rng, k, n, transpose_b)
    want = brute_force_matmul(a, b, transpose_a, transpose_b)
    for name in [*bindings[0], "numpy"]:
        got = native.sgemm(a, b, transpose_a, transpose_b, binding=name)
        assert got.shape == (m, n), name
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("bad, kind, words", [
    (lambda a: a.astype(np.float64), TypeError, ["'a'", "float32", "float64"]),
    (lambda a: np.asfortranarray(a), ValueError, ["'a'", "C-contiguous"]),
    (lambda a: a[:, ::2], ValueError, ["'a'", "C-contiguous"]),
    (lambda a: a.ravel(), ValueError, ["'a'", "2-D"]),
    (lambda a: a.tolist(), TypeError, ["'a'", "numpy.ndarray", "list"]),
])
def test_bad_inputs_name_the_argument(binding, bad, kind, words):
    a = np.ones((4, 6), np.float32)
    b = np.ones((6, 2), np.float32)
    with pytest.raises(kind) as info:
        native.sgemm(bad(a), b, binding=binding)
    for word in words:
        assert word in str(info.value)


def test_inner_dimension_mismatch_names_both_shapes(binding):
    a = np.ones((4, 6), np.float32)
    with pytest.raises(ValueError, match=r"op\(a\) is 4x6.*op\(b\) is 5x2"):
        native.sgemm(a, np.ones((5, 2), np.float32), binding=binding)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        native.sgemm(a, np.ones((2, 5), np.float32), transpose_b=True, binding=binding)


def test_unknown_binding():
    with pytest.raises(ValueError, match="Unknown binding 'cffi'"):
        native.load("cffi")


def test_raw_swig_and_pybind11_calls_refuse_wrong_buffers(bindings):
    """The generated wrappers check what they are given: SWIG's typemap refuses float64 and
    non-contiguous buffers; pybind11 refuses sizes that do not fit the arrays."""
    loaded, missing = bindings
    a = np.ones((2, 3), np.float32)
    b = np.ones((3, 2), np.float32)
    c = np.empty((2, 2), np.float32)
    if "swig" in loaded:
        swig = native.load("swig")
        assert swig.aics_sgemm(0, 0, 2, 2, 3, a, b, c) == 0
        np.testing.assert_array_equal(c, np.full((2, 2), 3.0))
        with pytest.raises(TypeError, match="float32"):
            swig.aics_sgemm(0, 0, 2, 2, 3, a.astype(np.float64), b, c)
        with pytest.raises(TypeError, match="argument 8"):
            swig.aics_sgemm(0, 0, 2, 2, 3, a, b, np.empty((4, 4), np.float32)[:, ::2])
    if "pybind11" in loaded:
        pyb = native.load("pybind11")
        c[:] = 0
        assert pyb.aics_sgemm(0, 0, 2, 2, 3, a, b, c) == 0
        np.testing.assert_array_equal(c, np.full((2, 2), 3.0))
        with pytest.raises(ValueError, match="do not fit"):
            pyb.aics_sgemm(0, 0, 20, 2, 3, a, b, c)
        with pytest.raises(TypeError):   # noconvert: a float64 output would be silently copied
            pyb.aics_sgemm(0, 0, 2, 2, 3, a, b, c.astype(np.float64))
    if not loaded:
        pytest.skip(str(missing))


@pytest.fixture
def forget_bindings():
    native.reset()
    yield
    native.reset()


def test_no_compiler_falls_back_to_numpy_with_one_message(monkeypatch, tmp_path, forget_bindings):
    monkeypatch.setenv("AICS_NATIVE_CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("AICS_NATIVE_CACHE", str(tmp_path / "cache"))
    native.reset()
    rng = np.random.default_rng(2)
    a = stored(rng, 3, 4, False)
    b = stored(rng, 4, 2, True)
    with pytest.warns(RuntimeWarning, match="no-such-cc.*computing with NumPy"):
        got = native.sgemm(a, b, transpose_b=True)
    np.testing.assert_allclose(got, brute_force_matmul(a, b, False, True), rtol=1e-5, atol=1e-5)
    assert "AICS_NATIVE_CC" in native.fallback_reason()
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # said once, not on every call
        with aics.device("/device:NATIVE:0"):
            again = aics.matmul(a, b, transpose_b=True).numpy()
    np.testing.assert_allclose(again, got, rtol=1e-6)
    for name in ("swig", "pybind11"):
        with pytest.raises(native.BindingUnavailable, match="compiler"):
            native.load(name)
    with pytest.raises(native.CompilerNotFoundError, match="names no executable"):
        native.exercise_library()
    assert not (tmp_path / "cache").exists()    # nothing half-built was left behind


def test_missing_swig_names_the_bindings_extra(monkeypatch, tmp_path, forget_bindings):
    monkeypatch.setenv("AICS_NATIVE_CC", build.find_compiler("c"))   # the compiler stays found
    monkeypatch.setattr(build, "interpreter_bin_dir", lambda: str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(native.BindingUnavailable, match=r"SWIG is not installed.*pip install -e '\.\[bindings\]'"):
        native.load("swig")


def test_missing_pybind11_names_the_bindings_extra(monkeypatch, forget_bindings):
    monkeypatch.setitem(__import__("sys").modules, "pybind11", None)   # makes `import pybind11` fail
    with pytest.raises(native.BindingUnavailable, match=r"pybind11 is not installed.*\.\[bindings\]"):
        native.load("pybind11")


def test_cache_is_reused_and_keyed_by_sources_and_flags(monkeypatch, tmp_path):
    monkeypatch.setenv("AICS_NATIVE_CACHE", str(tmp_path))
    first = ctypes_binding.compile_library()
    assert first.startswith(str(tmp_path)) and os.path.isfile(first)
    stamp = os.stat(first).st_mtime_ns
    assert ctypes_binding.compile_library() == first and os.stat(first).st_mtime_ns == stamp
    src = build.source_path("aics_gemm.c")
    cc = build.find_compiler("c")
    key = build.build_key([src], [cc], ["-O3"])
    assert key == build.build_key([src], [cc], ["-O3"])
    assert key != build.build_key([src], [cc], ["-O2"])
    edited = tmp_path / "aics_gemm.c"
    edited.write_text(open(src).read() + "\n/* edited */\n")
    assert key != build.build_key([str(edited)], [cc], ["-O3"])


def test_concurrent_first_builds_all_get_one_complete_library(monkeypatch, tmp_path):
    monkeypatch.setenv("AICS_NATIVE_CACHE", str(tmp_path))
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        paths = list(pool.map(lambda _: ctypes_binding.compile_library(), range(3)))
    assert len(set(paths)) == 1
    assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(os.path.dirname(paths[0]))]
    lib = ctypes_binding.load_library(paths[0])
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ctypes_binding.sgemm(lib, a, a, transpose_b=True),
                                  brute_force_matmul(a, a, False, True))


def test_sources_found_from_any_working_directory(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for name in ("aics_gemm.c", "aics_gemm.h", "aics_gemm.i", "aics_gemm_pybind11.cpp"):
        assert os.path.isfile(build.source_path(name))
    with pytest.raises(FileNotFoundError, match="not installed"):
        build.source_path("nope.c")


def test_exercise_library_needs_its_declarations(bindings):
    if "ctypes" not in bindings[0]:
        pytest.skip(bindings[1]["ctypes"])
    lib = native.exercise_library()
    x = np.array([1.5, -2.0, 4.0], np.float32)
    y = np.array([2.0, 0.5, 0.25], np.float32)
    lib.aics_sdot.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    lib.aics_sdot.restype = ctypes.c_float
    lib.aics_sdot_calls.restype = ctypes.c_int64
    before = lib.aics_sdot_calls()
    assert lib.aics_sdot(3, x.ctypes.data, y.ctypes.data) == sum(float(p) * float(q) for p, q in zip(x, y))
    assert lib.aics_sdot_calls() == before + 1
    fresh = native.exercise_library()        # a fresh CDLL: nothing declared on it yet
    assert fresh.aics_sdot.argtypes is None and fresh.aics_sdot.restype is ctypes.c_int


# --- the NATIVE device: kernel registry, placement, and the Python -> C boundary -----------------

def test_native_kernel_is_registered_for_float32_matmul():
    kd = aics.kernel_registry.find("MatMul", "NATIVE", {"T": aics.float32})
    assert kd is not None and kd.location[0].endswith(os.path.join("kernels", "native_matmul_op.py"))
    assert aics.kernel_registry.find("MatMul", "NATIVE", {"T": aics.float64}) is None
    assert "NATIVE" in aics.kernel_registry.devices_for("MatMul")


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul_on_native_device_eager(transpose_a, transpose_b):
    rng = np.random.default_rng(3)
    a = stored(rng, 4, 5, transpose_a)
    b = stored(rng, 5, 3, transpose_b)
    with aics.device("/device:NATIVE:0"):
        got = aics.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    assert got.device.endswith("NATIVE:0")
    np.testing.assert_allclose(got.numpy(), brute_force_matmul(a, b, transpose_a, transpose_b),
                               rtol=1e-5, atol=1e-5)


def test_matmul_on_native_device_in_a_graph():
    rng = np.random.default_rng(4)
    a = stored(rng, 3, 4, False)
    b = stored(rng, 4, 2, False)
    with aics.Graph().as_default():
        with aics.device("/native:0"):
            product = aics.matmul(aics.constant(a), aics.constant(b))
        assert product.op.device == "/device:NATIVE:0"
        with aics.Session() as sess:
            got = sess.run(product)
    np.testing.assert_allclose(got, brute_force_matmul(a, b, False, False), rtol=1e-5, atol=1e-5)


def test_native_device_reports_incompatible_shapes_like_tf():
    with aics.device("/device:NATIVE:0"):
        with pytest.raises(aics.errors.InvalidArgumentError, match=r"Matrix size-incompatible: In\[0\]: \[2, 3\]"):
            aics.matmul(np.ones((2, 3), np.float32), np.ones((4, 2), np.float32))


def test_native_call_path_shows_the_python_to_c_boundary(bindings):
    if "ctypes" not in bindings[0]:
        pytest.skip(bindings[1]["ctypes"])
    a = np.ones((2, 3), np.float32)
    b = np.ones((3, 2), np.float32)

    def on(device):
        def run():
            with aics.device(device):
                aics.matmul(a, b)
        return run

    path = aics.introspect.native_call_path(on("/device:NATIVE:0"))
    files = [p for p, _, _, _ in path]
    assert path[0][2] == "matmul" and files[0].endswith(os.path.join("ops", "math_ops.py"))
    assert any(f.endswith("native_matmul_op.py") for f in files)
    assert [lang for *_, lang in path] == ["Python"] * (len(path) - 1) + ["C"]
    assert path[-2][:1] == (os.path.join("aicslib", "native", "ctypes_binding.py"),)
    c_file, c_line, c_name, _ = path[-1]
    assert c_name == "aics_sgemm" and c_file.endswith(os.path.join("native", "src", "aics_gemm.c"))
    c_source = open(os.path.join(os.path.dirname(aics.__file__), "native", "src", "aics_gemm.c")).read()
    assert c_source.splitlines()[c_line - 1].startswith("int aics_sgemm(")
    assert aics.introspect.native_call_path(on("/device:CPU:0")) == []   # NumPy kernel: no C
