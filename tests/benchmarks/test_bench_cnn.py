"""benchmarks/bench_cnn.py runs, and its three implementations start from the same loss as a
NumPy forward pass of the same weights (conv as a sum of 9 shifted products, float64)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_cnn


def numpy_loss(weights, x, y):
    def conv_relu(h, w, b):
        hp = np.pad(h, ((0, 0), (1, 1), (1, 1), (0, 0)))
        H, W = h.shape[1:3]
        out = sum(hp[:, i:i + H, j:j + W] @ w[i, j] for i in range(3) for j in range(3)) + b
        return np.maximum(out, 0)

    def pool(h):
        n, H, W, c = h.shape
        return h.reshape(n, H // 2, 2, W // 2, 2, c).max(axis=(2, 4))
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    h = pool(conv_relu(x.astype(np.float64), w["w1"], w["b1"]))
    h = pool(conv_relu(h, w["w2"], w["b2"]))
    logits = h.reshape(len(x), -1) @ w["w3"] + w["b3"]
    logits -= logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(y)), y].mean()


def test_bench_cnn_smoke_and_first_losses_agree(capsys):
    results = bench_cnn.main(["--steps", "1", "--warmup", "0", "--batch", "8", "--per-op"])
    out = capsys.readouterr().out
    assert "aicslib Session" in out and "slowest kernels" in out
    rng = np.random.default_rng(1)                     # the batch main() draws
    x = rng.uniform(0, 1, (8, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, 8).astype(np.int64)
    expected = numpy_loss(bench_cnn.initial_weights(), x, y)
    for name, loss in results["first_loss"].items():
        assert abs(loss - expected) < 1e-5, (name, loss, expected)
    assert all(ms > 0 for ms in results["ms"].values())
