"""The speed layer apart (aicslib/accel): its kernels preferred to the reference kernels while
AICS_ACCEL is on and none of them when it is off; every instruction-set version of its C
kernels (baseline, AVX2, AVX-512: those this CPU runs) giving bit-identical results; and
aicslib without the C libraries (no compiler at install): the build does not fail, import
works, says so once, and computes what the reference computes.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import aicslib as aics
from aicslib import accel, flags
from aicslib.accel import (c_output_stage, c_sgemm, conv_backprop_filter, conv_winograd, depthwise,
                           native_libraries, native_loader, pooling)
from aicslib.framework.dtypes import float32
from aicslib.framework.kernel_registry import kernel_registry
from aicslib.kernels import pooling_ops

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(REPO, "aicslib")

#: The ops the speed layer has a kernel for (float32).
FAST_OPS = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
            "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter", "MaxPoolGrad",
            "MatMul", "_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul", "_FusedElementwise")


def _where(kd):
    return os.path.relpath(kd.location[0], REPO).replace(os.sep, "/")


@pytest.mark.parametrize("op", FAST_OPS)
def test_the_speed_layer_is_preferred_while_on_and_the_reference_always_registered(op):
    with accel.use_accel(True):
        fast = kernel_registry.find(op, "CPU", {"T": float32})
    with accel.use_accel(False):
        ref = kernel_registry.find(op, "CPU", {"T": float32})
    assert _where(fast).startswith("aicslib/accel/") and fast.priority > 0
    assert _where(ref).startswith("aicslib/kernels/") and ref.priority == 0
    assert kernel_registry.kernels_for(op)[0] is ref          # the reference is registered first


def test_aics_accel_0_in_the_environment_runs_the_reference_kernels(monkeypatch):
    from aicslib.accel import conv_kernels
    calls = []
    real = conv_kernels.conv2d
    monkeypatch.setattr(conv_kernels, "conv2d", lambda *a, **k: calls.append(1) or real(*a, **k))
    x, w = np.ones((1, 5, 5, 2), np.float32), np.ones((3, 3, 2, 3), np.float32)
    aics.nn.conv2d(x, w, 1, "SAME")
    assert calls == [1]
    monkeypatch.setenv("AICS_ACCEL", "0")
    flags.reload()                                 # the registry forgets its cached choices
    try:
        y = aics.nn.conv2d(x, w, 1, "SAME").numpy()
        assert calls == [1]
        np.testing.assert_array_equal(y[0, 2, 2], [18.0, 18.0, 18.0])
    finally:
        monkeypatch.delenv("AICS_ACCEL")
        flags.reload()
    aics.nn.conv2d(x, w, 1, "SAME")
    assert calls == [1, 1]


# ----------------------------------------------------------------------------
# Every instruction-set version gives the same bits
# ----------------------------------------------------------------------------

ISAS = native_loader.supported_isas()


def on_each_isa(compute):
    """{isa: compute()} with every C library running that version."""
    out = {}
    try:
        for isa in ISAS:
            native_loader.set_isa(isa)
            out[isa] = compute()
    finally:
        native_loader.set_isa(flags.ACCEL_ISA)
    return out


def assert_same_bits(results):
    first = results["baseline"]
    for isa, got in results.items():
        for a, b in zip(first if isinstance(first, tuple) else (first,), got if isinstance(got, tuple) else (got,)):
            bits = {4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
            assert a.shape == b.shape and np.array_equal(a.view(bits), b.view(bits)), f"{isa} differs from baseline"


needs_c = pytest.mark.skipif(not ISAS, reason="the C libraries are not built")


@needs_c
def test_this_cpu_runs_at_least_the_baseline_and_a_bad_name_is_refused():
    assert ISAS[0] == "baseline" and set(ISAS) <= set(native_libraries.ISAS)
    with pytest.raises(ValueError, match="instruction set must be one of auto, baseline, avx2, avx512"):
        native_loader.set_isa("sse9")


@needs_c
@pytest.mark.parametrize("m,n,k,transposed", [(37, 45, 300, False), (13, 70, 257, True), (100, 33, 16, False)])
def test_sgemm_versions_are_bit_identical(m, n, k, transposed):
    rng = np.random.default_rng(m)
    a = rng.standard_normal((k, m) if transposed else (m, k), dtype=np.float32)
    a = a.T if transposed else a
    b = rng.standard_normal((k, n), dtype=np.float32)
    base = rng.standard_normal((m, n), dtype=np.float32)

    def product():
        lib = c_sgemm.library()
        out = c_sgemm.sgemm(lib, a, b, np.empty((m, n), np.float32))
        acc = c_sgemm.sgemm(lib, a, b, base.copy(), accumulate=True)
        stack = np.stack([a, a[::-1]])
        batched = c_sgemm.sgemm_batched(lib, stack, np.stack([b, b]), np.empty((2, m, n), np.float32))
        return out, acc, batched

    results = on_each_isa(product)
    assert_same_bits(results)
    np.testing.assert_allclose(results["baseline"][0], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@needs_c
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kh,strides,dilations", [(3, (1, 1), (1, 1)), (3, (2, 2), (1, 1)), (5, (1, 1), (2, 2))])
def test_depthwise_versions_are_bit_identical(dtype, kh, strides, dilations):
    rng = np.random.default_rng(kh)
    x = rng.standard_normal((2, 11, 13, 37)).astype(dtype)          # 37 channels: chunks, tails, singles
    w = rng.standard_normal((kh, kh, 37, 1)).astype(dtype)
    y = depthwise.depthwise_conv2d(x, w, strides, "SAME", dilations)
    dy = rng.standard_normal(y.shape).astype(dtype)

    def passes():
        return (depthwise.depthwise_conv2d(x, w, strides, "SAME", dilations, algorithm="native"),
                depthwise.depthwise_conv2d_backprop_input(dy, w, x.shape, strides, "SAME", dilations,
                                                          algorithm="native"),
                depthwise.depthwise_conv2d_backprop_filter(x, dy, w.shape, strides, "SAME", dilations,
                                                           algorithm="native"))

    assert_same_bits(on_each_isa(passes))


@needs_c
@pytest.mark.parametrize("tile", [2, 4])
def test_winograd_versions_are_bit_identical(tile):
    rng = np.random.default_rng(tile)
    x = rng.standard_normal((2, 14, 10, 24), dtype=np.float32)
    w = rng.standard_normal((3, 3, 24, 20), dtype=np.float32)
    dy = rng.standard_normal((2, 14, 10, 20), dtype=np.float32)
    conv = conv_winograd.conv2d_winograd if tile == 2 else conv_winograd.conv2d_winograd_f4

    def transforms_and_gemms():
        return (conv(x, w, (1, 1), "SAME"),
                conv_backprop_filter.conv2d_backprop_filter_winograd(x, dy, w.shape, (1, 1), "SAME", tile=tile))

    assert_same_bits(on_each_isa(transforms_and_gemms))


@needs_c
@pytest.mark.parametrize("stage,activation", [("BiasAdd", "Relu"), ("FusedBatchNorm", "Relu6"), ("BiasAdd", None)])
def test_output_stage_and_max_pool_grad_versions_are_bit_identical(stage, activation):
    rng = np.random.default_rng(9)
    y = rng.standard_normal((50, 37)).astype(np.float32)
    y[0, :4] = [np.nan, -0.0, np.inf, -np.inf]
    vecs = [rng.standard_normal(37).astype(np.float32) for _ in range(3)]
    x = rng.standard_normal((2, 9, 9, 40)).astype(np.float32)
    pooled = pooling_ops.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    g = rng.standard_normal(pooled.shape).astype(np.float32)

    def stages():
        rows = c_output_stage.apply(c_output_stage.library(), y.copy(), stage, activation, *vecs)
        return rows, pooling.max_pool_grad(x, pooled, g, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")

    assert_same_bits(on_each_isa(stages))


@needs_c
def test_aics_accel_isa_picks_the_version_in_a_new_process():
    code = ("from aicslib.accel import native_libraries as t, native_loader as n\n"
            "print(sorted({n.active_isa(lib.name) for lib in t.LIBRARIES}))")
    env = {**os.environ, "PYTHONPATH": REPO, "AICS_ACCEL_ISA": "baseline"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['baseline']"
    env["AICS_ACCEL_ISA"] = "sse9"
    done = subprocess.run([sys.executable, "-c", "import aicslib"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0 and "AICS_ACCEL_ISA='sse9'" in done.stderr


# ----------------------------------------------------------------------------
# Without the C libraries
# ----------------------------------------------------------------------------

WITHOUT_C = r"""
import numpy as np
import aicslib as aics
from aicslib import accel
from aicslib.accel import native_libraries, native_loader

assert native_loader.missing_libraries() == [lib.name for lib in native_libraries.LIBRARIES]
rng = np.random.default_rng(0)
x = rng.standard_normal((2, 12, 12, 16)).astype(np.float32)
w = rng.standard_normal((3, 3, 16, 16)).astype(np.float32)
wd = rng.standard_normal((3, 3, 16, 1)).astype(np.float32)
a, b = rng.standard_normal((40, 30)).astype(np.float32), rng.standard_normal((30, 20)).astype(np.float32)


def ops():
    with aics.GradientTape() as tape:
        xv = aics.constant(x)
        tape.watch(xv)
        y = aics.nn.max_pool(aics.nn.relu(aics.nn.conv2d(xv, w, 1, "SAME")), 3, 2, "SAME")
        z = aics.nn.depthwise_conv2d(xv, wd, [1, 2, 2, 1], "SAME")
        loss = aics.reduce_sum(y * y) + aics.reduce_sum(z * z)
    return [y.numpy(), z.numpy(), tape.gradient(loss, xv).numpy(), aics.matmul(a, b).numpy()]


fast = ops()
with accel.use_accel(False):
    reference = ops()
for got, want in zip(fast, reference):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * float(np.abs(want).max()))
import importlib
importlib.reload(accel)                       # a second import says nothing more
print("computed without C")
"""


def test_without_the_c_libraries_import_says_so_once_and_results_equal_the_reference(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "aicslib",
                    ignore=shutil.ignore_patterns(native_libraries.LIBRARY_DIR, "__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AICS_ACCEL")}
    env.update(PYTHONPATH=str(tmp_path), AICS_MIN_LOG_LEVEL="0")
    done = subprocess.run([sys.executable, "-c", WITHOUT_C], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert "computed without C" in done.stdout
    assert done.stderr.count("the fast C kernels are not built") == 1, done.stderr
    assert "pip install -e ." in done.stderr and "build_ext --inplace" in done.stderr


def test_the_build_does_not_fail_without_a_compiler(tmp_path):
    env = {**os.environ, "CC": str(tmp_path / "no-such-cc")}
    done = subprocess.run([sys.executable, "setup.py", "build_ext", "--build-lib", str(tmp_path / "lib"),
                           "--build-temp", str(tmp_path / "tmp")], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    built = [f for _, _, files in os.walk(tmp_path / "lib") for f in files]
    assert built == []
    for lib in native_libraries.LIBRARIES:
        assert f"aicslib.accel.lib.{lib.name} not built" in done.stderr
