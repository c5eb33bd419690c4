"""The simulated MLU core: its rules, its cost model counted by hand, and its reference kernels
against NumPy; a core kernel put in place of MatMul on the MLU device in every mode."""
import numpy as np
import pytest

import aicslib as aics
from aicslib import mlu


def test_nram_budget_is_enforced_with_a_message_that_names_the_buffer():
    core = mlu.Core(nram_bytes=4096)
    core.nram((512,), name="first")                      # 2048 bytes
    with pytest.raises(mlu.NRAMOverflow, match=r"'second'.*4096 bytes requested, 2048 of the core's 4096"):
        core.nram((1024,), name="second")


def test_scope_frees_what_it_allocated_and_peak_is_kept():
    core = mlu.Core(nram_bytes=4096)
    with core.scope():
        core.nram((1024,))
    core.nram((1024,))                                   # fits again after the scope
    assert core.peak_bytes == 4096


def test_operands_must_be_on_chip_and_dma_directions_hold():
    core = mlu.Core()
    a, host = core.nram((4,)), np.ones(4, np.float32)
    with pytest.raises(mlu.MLUError, match="NRAM buffer"):
        core.add(a, a, host)
    with pytest.raises(mlu.MLUError, match="already on chip"):
        core.load(a, a)
    with pytest.raises(mlu.MLUError, match="destination is on chip"):
        core.store(a, a)
    with pytest.raises(mlu.MLUError, match="shapes differ"):
        core.load(a, np.ones(5, np.float32))


def test_cycles_follow_the_cost_model():
    c = mlu.COST
    core = mlu.Core()
    x = np.arange(128, dtype=np.float32)
    buf = core.nram((128,))
    core.load(buf, x)                                    # 512 bytes
    core.relu(buf, buf)                                  # 128 elements
    m = core.nram((8, 16)), core.nram((16, 4)), core.nram((8, 4))
    core.matmul(m[2], m[0], m[1])                        # 8 * 16 * 4 multiply-adds
    expected = (c["dma_startup"] + 512 / c["dma_bytes_per_cycle"]
                + c["vector_startup"] + 128 / c["vector_lanes"]
                + c["matmul_startup"] + 8 * 16 * 4 / c["macs_per_cycle"])
    assert core.cycles == pytest.approx(expected)
    assert (core.dma_bytes, core.dma_transfers) == (512, 1)


@pytest.mark.parametrize("shape", [(1, 1, 1), (64, 64, 64), (129, 257, 65), (200, 33, 301)])
@pytest.mark.parametrize("kernel", [mlu.reference_matmul, mlu.naive_matmul])
def test_matmul_kernels_against_numpy(kernel, shape):
    m, k, n = shape
    rng = np.random.default_rng(sum(shape))
    a, b = rng.normal(size=(m, k)).astype(np.float32), rng.normal(size=(k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    core = mlu.Core()
    kernel(core, a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4 * np.sqrt(k))
    assert core.peak_bytes <= core.nram_bytes


def test_the_reference_tiling_moves_far_less_data_than_the_naive_one():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(256, 256)).astype(np.float32), rng.normal(size=(256, 256)).astype(np.float32)
    cores = {}
    for kernel in (mlu.reference_matmul, mlu.naive_matmul):
        cores[kernel] = mlu.Core()
        kernel(cores[kernel], a, b, np.zeros((256, 256), np.float32))
    assert cores[mlu.reference_matmul].dma_bytes * 3 < cores[mlu.naive_matmul].dma_bytes
    assert cores[mlu.reference_matmul].cycles * 3 < cores[mlu.naive_matmul].cycles


def test_reference_add_over_many_chunks():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=100_003).astype(np.float32), rng.normal(size=100_003).astype(np.float32)
    out = np.zeros_like(x)
    core = mlu.Core()
    mlu.reference_add(core, x, y, out)
    np.testing.assert_array_equal(out, x + y)
    assert core.dma_transfers == 3 * -(-x.size // ((core.nram_bytes - 192) // 8 // 64 * 64))


def test_a_core_kernel_runs_matmul_on_the_mlu_device_in_every_mode():
    runs = []
    kernel = mlu.matmul_kernel(mlu.reference_matmul, record=runs)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    with aics.experimental.use_kernel("MatMul", kernel, device="MLU"):
        with aics.device("/device:MLU:0"):
            eager = aics.matmul(a, b).numpy()

        @aics.function
        def traced_fn(x, y):
            with aics.device("/device:MLU:0"):
                return aics.matmul(x, y, transpose_b=True)
        traced = traced_fn(a, b.T).numpy()
        g = aics.Graph()
        with g.as_default(), aics.device("/device:MLU:0"):
            t = aics.matmul(aics.constant(a), aics.constant(b))
        with aics.compat.v1.Session(graph=g) as sess:
            graph_mode = sess.run(t)
    for got in (eager, traced, graph_mode):
        np.testing.assert_array_equal(got, a @ b)
    assert len(runs) == 3 and all(r["peak_nram_bytes"] > 0 for r in runs)


def test_the_mlu_devices_float32_matmul_runs_on_the_simulated_core():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(70, 130)).astype(np.float32), rng.normal(size=(130, 40)).astype(np.float32)
    where = aics.introspect.summary("MatMul")
    with aics.device("/device:MLU:0"):
        got = aics.matmul(a, b).numpy()
        with pytest.raises(aics.errors.InvalidArgumentError, match="Matrix size-incompatible"):
            aics.matmul(a, a)
    expected = np.zeros((70, 40), np.float32)
    mlu.reference_matmul(mlu.Core(), a, b, expected)
    np.testing.assert_array_equal(got, expected)          # the tiled kernel's own float32 sums
    assert "mlu_matmul_op.py" in where, where
