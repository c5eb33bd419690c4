"""The hand-written NumPy MLP (benchmarks/mnist_numpy_mlp.py): gradients and updates."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import mnist_numpy_mlp as mlp


def _loss(params, x, y):
    logits, _ = mlp.forward(params, x)
    return mlp.softmax_cross_entropy(logits, y)[0]


def test_backward_matches_finite_differences():
    rng = np.random.default_rng(0)
    sizes = (6, 5, 4, 3)
    params = mlp.init_params(1, sizes=sizes, dtype=np.float64)
    for k in params:
        if k.startswith("b"):
            params[k] = rng.normal(size=params[k].shape) * 0.1
    x = rng.normal(size=(7, 6))
    y = rng.integers(0, 3, size=7)
    loss, grads = mlp.loss_and_grads(params, x, y)
    assert loss == pytest.approx(_loss(params, x, y))
    eps = 1e-6
    for k, p in params.items():
        num = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            old = p[idx]
            p[idx] = old + eps
            up = _loss(params, x, y)
            p[idx] = old - eps
            down = _loss(params, x, y)
            p[idx] = old
            num[idx] = (up - down) / (2 * eps)
        np.testing.assert_allclose(grads[k], num, rtol=1e-5, atol=1e-8, err_msg=k)


def test_softmax_cross_entropy_reference():
    logits = np.array([[1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0]], np.float32)
    y = np.array([2, 0])
    loss, d = mlp.softmax_cross_entropy(logits, y)
    p0 = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    assert loss == pytest.approx((-np.log(p0[2]) + 0.0) / 2, rel=1e-5)
    np.testing.assert_allclose(d[0], (p0 - [0, 0, 1]) / 2, rtol=1e-5)
    np.testing.assert_allclose(d[1], [0, 0, 0], atol=1e-6)   # stable for large logits


def test_momentum_step_matches_tf_rule():
    p = {"w": np.array([1.0, 2.0], np.float32)}
    v = mlp.init_velocity(p)
    g = {"w": np.array([0.5, -1.0], np.float32)}
    mlp.sgd_momentum_step(p, g, v, lr=0.1, momentum=0.9)
    mlp.sgd_momentum_step(p, g, v, lr=0.1, momentum=0.9)
    # accum: g, then 0.9 g + g = 1.9 g; var -= 0.1 * (g + 1.9 g) = 0.29 g
    np.testing.assert_allclose(p["w"], [1.0 - 0.29 * 0.5, 2.0 + 0.29], rtol=1e-6)
    np.testing.assert_allclose(v["w"], [1.9 * 0.5, -1.9], rtol=1e-6)
    pn = {"w": np.array([1.0], np.float32)}
    vn = mlp.init_velocity(pn)
    mlp.sgd_momentum_step(pn, {"w": np.array([1.0], np.float32)}, vn, 0.1, 0.9,
                          use_nesterov=True)
    np.testing.assert_allclose(pn["w"], [1.0 - 0.1 * (1.0 + 0.9 * 1.0)], rtol=1e-6)


def test_short_training_learns():
    from aicslib.datasets import mnist
    (x, y), (xt, yt) = mnist.load_data()
    x, xt = mlp.preprocess(x[:6000]), mlp.preprocess(xt[:2000])
    y, yt = y[:6000].astype(np.int64), yt[:2000].astype(np.int64)
    params = mlp.init_params(0)
    assert all(p.dtype == np.float32 for p in params.values())
    vel = mlp.init_velocity(params)
    rng = np.random.default_rng(0)
    losses = [mlp.train_epoch(params, vel, x, y, 0.1, rng=rng) for _ in range(2)]
    assert losses[1] < losses[0] < 1.0
    assert mlp.accuracy(params, xt, yt) > 0.88
    assert all(p.dtype == np.float32 for p in params.values())


def test_aicslib_models_track_numpy_step_by_step():
    """Graph and eager aicslib MLPs, from the same weights, follow the NumPy MLP exactly."""
    import aicslib as aics
    import mnist_aicslib_mlp as amlp
    from aicslib.datasets import mnist
    (x, y), _ = mnist.load_data()
    x, y = mlp.preprocess(x[:384]), y[:384].astype(np.int64)
    init = mlp.init_params(0)
    p = {k: v.copy() for k, v in init.items()}
    vel = mlp.init_velocity(p)
    batches = [(x[i * 128:(i + 1) * 128], y[i * 128:(i + 1) * 128]) for i in range(3)]
    np_losses = []
    for xb, yb in batches:
        loss_np, grads = mlp.loss_and_grads(p, xb, yb)
        mlp.sgd_momentum_step(p, grads, vel, 0.1, 0.9)
        np_losses.append(loss_np)
    with aics.Graph().as_default():
        m = amlp.build_graph(init)
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            g_losses = [sess.run([m["train_op"], m["loss"]], {m["x"]: xb, m["y"]: yb})[1]
                        for xb, yb in batches]
            graph_params = sess.run(m["params"])
    eager = amlp.EagerMLP(init)
    e_losses = [float(eager.train_step(xb, yb)) for xb, yb in batches]
    np.testing.assert_allclose(g_losses, np_losses, rtol=1e-5)
    np.testing.assert_allclose(e_losses, np_losses, rtol=1e-5)
    for k in p:
        np.testing.assert_allclose(graph_params[k], p[k], rtol=1e-4, atol=1e-6, err_msg=k)
        np.testing.assert_allclose(eager.params[k].numpy(), p[k], rtol=1e-4, atol=1e-6, err_msg=k)


def test_bench_mnist_smoke(capsys):
    import bench_mnist
    results = bench_mnist.main(["--steps", "2", "--warmup", "1"])
    assert results["NumPy (hand-written)"] > 0 and results["aicslib Session"] > 0
    assert "| implementation | s/epoch |" in capsys.readouterr().out
