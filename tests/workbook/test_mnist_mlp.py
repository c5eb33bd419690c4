"""workbook.mnist_mlp: the MLP chapters 04, 17 and 18 share (data, initialisation, NumPy forward)."""
import glob
import os

import numpy as np
import pytest

from workbook import mnist_mlp
from workbook.references import pruning

NOTEBOOKS = os.path.join(os.path.dirname(__file__), "..", "..", "notebooks")


def test_init_params_is_glorot_uniform_float32_and_seeded():
    p = mnist_mlp.init_params(3)
    assert list(p) == ["W1", "b1", "W2", "b2", "W3", "b3"]
    for i, (fan_in, fan_out) in enumerate(zip(mnist_mlp.SIZES[:-1], mnist_mlp.SIZES[1:]), start=1):
        w, b = p[f"W{i}"], p[f"b{i}"]
        assert w.shape == (fan_in, fan_out) and w.dtype == np.float32
        assert b.shape == (fan_out,) and b.dtype == np.float32 and not b.any()
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        assert np.abs(w).max() <= limit
        # uniform on [-limit, limit]: variance limit^2 / 3, the Glorot variance 2 / (fan_in + fan_out)
        assert np.var(w) == pytest.approx(2.0 / (fan_in + fan_out), rel=0.1)
    again = mnist_mlp.init_params(3)
    assert all(np.array_equal(p[k], again[k]) for k in p)
    assert not np.array_equal(p["W1"], mnist_mlp.init_params(4)["W1"])


def test_init_params_other_sizes_and_a_clear_error():
    p = mnist_mlp.init_params(0, sizes=(5, 7, 2))
    assert {k: v.shape for k, v in p.items()} == {"W1": (5, 7), "b1": (7,), "W2": (7, 2), "b2": (2,)}
    with pytest.raises(ValueError, match="sizes"):
        mnist_mlp.init_params(0, sizes=(5,))


def test_forward_is_relu_layers_and_keeps_each_layer_input():
    rng = np.random.default_rng(0)
    p = {k: v + rng.standard_normal(v.shape).astype(np.float32) * 0.1 for k, v in mnist_mlp.init_params(1).items()}
    x = rng.random((4, 784), dtype=np.float32)
    logits, cache = mnist_mlp.forward(p, x)
    h1 = np.maximum(x @ p["W1"] + p["b1"], 0)
    h2 = np.maximum(h1 @ p["W2"] + p["b2"], 0)
    np.testing.assert_allclose(logits, h2 @ p["W3"] + p["b3"], rtol=1e-6, atol=1e-6)
    assert len(cache) == 3 and cache[0] is x
    np.testing.assert_allclose(cache[1], h1, rtol=1e-6)
    np.testing.assert_allclose(cache[2], h2, rtol=1e-6)
    assert mnist_mlp.accuracy(p, x, logits.argmax(axis=1)) == 1.0


def test_preprocess_and_load():
    images = np.array([[[0, 255], [128, 1]]], np.uint8)
    out = mnist_mlp.preprocess(images)
    assert out.dtype == np.float32 and out.shape == (1, 4)
    np.testing.assert_array_equal(out, np.float32([[0, 255, 128, 1]]) / np.float32(255))
    x_train, y_train, x_test, y_test = mnist_mlp.load(train_n=50, test_n=20)
    assert x_train.shape == (50, 784) and x_test.shape == (20, 784)
    assert y_train.dtype == np.int64 and set(np.unique(y_train)) <= set(range(10))
    assert 0.0 <= x_train.min() and x_train.max() <= 1.0


def test_one_initialisation_for_the_mlp_chapters():
    """Chapter 16's grading reference starts from the shared weights (cast when asked), and no
    notebook keeps a copy of the initialisation of its own."""
    shared, ref = mnist_mlp.init_params(5), pruning.init_params(5)
    assert list(ref) == list(shared) and all(np.array_equal(ref[k], shared[k]) for k in shared)
    ref64 = pruning.init_params(5, (6, 4, 3), dtype=np.float64)
    for k, v in mnist_mlp.init_params(5, (6, 4, 3)).items():
        assert ref64[k].dtype == np.float64 and np.array_equal(ref64[k], v)
    sources = sorted(glob.glob(os.path.join(NOTEBOOKS, "*.py")))
    assert sources, NOTEBOOKS
    copies = [os.path.basename(f) for f in sources if "def init_params" in open(f, encoding="utf-8").read()]
    assert not copies, f"{copies} define their own init_params: use workbook.mnist_mlp.init_params"
