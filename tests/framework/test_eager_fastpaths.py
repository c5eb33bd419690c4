"""The eager training step's fast paths give the same numbers as the rules they shortcut.

* ``Optimizer.apply_gradients`` eagerly: hyperparameters converted once per step
  (a learning-rate Variable read once, per dtype), no name scopes, global_step
  incremented after the updates: checked against hand-written NumPy update rules,
  over several steps, with variables of two dtypes and a learning rate that
  changes between steps.
* Gradient functions on the MLP's path (MatMul in all four transpose forms, with an
  input the tape does not watch; AddV2 with a broadcast bias; Mean and Sum to a
  scalar, whose gradient now skips the Reshape): against central differences
  computed in NumPy, eagerly and in a graph.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib.accel import work_sharder

F32 = dict(rtol=1e-5, atol=1e-6)


def _numeric_grad(f, x, eps=1e-6):
    """d sum(f(x)) / dx by central differences in float64 (f maps a NumPy array to one)."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (np.sum(f(xp)) - np.sum(f(xm))) / (2 * eps)
    return g


# --- optimizers: eager apply_gradients against NumPy update rules ----------------------

def _two_dtype_problem(seed):
    rng = np.random.default_rng(seed)
    init = {"w32": rng.normal(size=(3, 2)).astype(np.float32),
            "b32": rng.normal(size=(2,)).astype(np.float32),
            "w64": rng.normal(size=(4,)).astype(np.float64)}
    grads = [{k: rng.normal(size=v.shape).astype(v.dtype) for k, v in init.items()}
             for _ in range(4)]
    return init, grads


def _run_eager(opt, init, grads, lr_var=None, lrs=None, global_step=None):
    variables = {k: aics.Variable(v, name=k) for k, v in init.items()}
    for step, g in enumerate(grads):
        if lr_var is not None:
            lr_var.assign(np.float32(lrs[step]))
        opt.apply_gradients([(aics.constant(g[k]), variables[k]) for k in init],
                            global_step=global_step)
    return {k: v.numpy() for k, v in variables.items()}


def test_momentum_with_variable_learning_rate_matches_numpy_rule():
    init, grads = _two_dtype_problem(0)
    lrs = [0.1, 0.05, 0.2, 0.01]          # changed between steps: read afresh each step
    lr = aics.Variable(np.float32(lrs[0]), trainable=False, name="lr")
    opt = aics.train.MomentumOptimizer(lr, 0.9)
    got = _run_eager(opt, init, grads, lr_var=lr, lrs=lrs)
    for k, w in init.items():
        w, accum = w.copy(), np.zeros_like(w)
        for step, g in enumerate(grads):
            accum = 0.9 * accum + g[k]
            w = w - w.dtype.type(np.float32(lrs[step])) * accum   # the float32 lr, cast
        np.testing.assert_allclose(got[k], w, rtol=1e-6 if w.dtype == np.float32 else 1e-12)
        assert got[k].dtype == init[k].dtype


def test_nesterov_momentum_matches_numpy_rule():
    init, grads = _two_dtype_problem(1)
    opt = aics.train.MomentumOptimizer(0.05, 0.8, use_nesterov=True)
    got = _run_eager(opt, init, grads)
    for k, w in init.items():
        w, accum = w.copy(), np.zeros_like(w)
        for g in grads:
            accum = 0.8 * accum + g[k]
            w = w - 0.05 * (g[k] + 0.8 * accum)
        np.testing.assert_allclose(got[k], w, rtol=1e-5)


def test_gradient_descent_with_callable_learning_rate_and_global_step():
    init, grads = _two_dtype_problem(2)
    step = aics.Variable(np.int64(0), trainable=False, name="step")
    calls = []

    def schedule():     # a schedule read through the global step, as TF's decay functions
        calls.append(1)
        return 0.1 / (1.0 + float(step.numpy()))
    opt = aics.train.GradientDescentOptimizer(schedule)
    got = _run_eager(opt, init, grads, global_step=step)
    assert int(step.numpy()) == len(grads)
    # once per step and dtype (float32 and float64), not once per variable (three)
    assert len(calls) == 2 * len(grads)
    for k, w in init.items():
        w = w.copy()
        for t, g in enumerate(grads):
            w = w - (0.1 / (1.0 + t)) * g[k]
        np.testing.assert_allclose(got[k], w, rtol=1e-5)


def test_adam_matches_numpy_rule_and_updates_beta_powers_once_per_step():
    init, grads = _two_dtype_problem(3)
    opt = aics.train.AdamOptimizer(0.01, beta1=0.8, beta2=0.95, epsilon=1e-7)
    got = _run_eager(opt, init, grads)
    for k, w in init.items():
        w, m, v = w.copy().astype(np.float64), 0.0, 0.0
        for t, g in enumerate(grads, start=1):
            g = g[k].astype(np.float64)
            lr_t = 0.01 * np.sqrt(1 - 0.95 ** t) / (1 - 0.8 ** t)
            m = 0.8 * m + 0.2 * g
            v = 0.95 * v + 0.05 * g * g
            w = w - lr_t * m / (np.sqrt(v) + 1e-7)
        np.testing.assert_allclose(got[k], w, rtol=1e-4, atol=1e-6)
    powers = opt.checkpoint_variables()
    b1p, b2p = powers["beta1_power"], powers["beta2_power"]
    np.testing.assert_allclose(b1p.numpy(), 0.8 ** (len(grads) + 1), rtol=1e-6)
    np.testing.assert_allclose(b2p.numpy(), 0.95 ** (len(grads) + 1), rtol=1e-6)


def test_eager_and_graph_apply_gradients_agree():
    init, grads = _two_dtype_problem(4)
    eager = _run_eager(aics.train.MomentumOptimizer(0.1, 0.9), init, grads)
    g = aics.Graph()
    with g.as_default():
        variables = {k: aics.Variable(v, name=k) for k, v in init.items()}
        feeds = {k: aics.placeholder(v.dtype, v.shape) for k, v in init.items()}
        gs = aics.train.get_or_create_global_step()
        train = aics.train.MomentumOptimizer(0.1, 0.9).apply_gradients(
            [(feeds[k], variables[k]) for k in init], global_step=gs)
        with aics.Session(graph=g) as sess:
            sess.run(aics.global_variables_initializer())
            for step in grads:
                sess.run(train, {feeds[k]: step[k] for k in init})
            graph = sess.run(variables)
            assert sess.run(gs) == len(grads)
    for k in init:
        np.testing.assert_allclose(eager[k], graph[k], rtol=1e-6)


def test_slot_order_is_first_update_order_across_steps():
    a, b = aics.Variable([1.0, 2.0], name="a"), aics.Variable([3.0], name="b")
    opt = aics.train.MomentumOptimizer(0.1, 0.9)
    opt.apply_gradients([(aics.constant([1.0]), b)])
    opt.apply_gradients([(aics.constant([1.0, 1.0]), a), (aics.constant([1.0]), b)])
    opt.apply_gradients([(aics.constant([1.0, 1.0]), a), (aics.constant([1.0]), b)])
    slots = opt.checkpoint_variables()
    assert sorted(slots) == ["slots/0/momentum", "slots/1/momentum"]
    assert slots["slots/0/momentum"] is opt.get_slot(b, "momentum")
    assert slots["slots/1/momentum"] is opt.get_slot(a, "momentum")


# --- gradient functions on the MLP's path ----------------------------------------------

def _tape_grads(f, *arrays, watch=None):
    xs = [aics.constant(a) for a in arrays]
    with aics.GradientTape() as tape:
        for i, x in enumerate(xs):
            if watch is None or i in watch:
                tape.watch(x)
        y = f(*xs)
    return tape.gradient(y, xs)


def _graph_grads(f, *arrays):
    g = aics.Graph()
    with g.as_default():
        xs = [aics.constant(a) for a in arrays]
        grads = aics.gradients(f(*xs), xs)
        with aics.Session(graph=g) as sess:
            return sess.run(grads)


@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_gradients_in_every_transpose_form(ta, tb):
    rng = np.random.default_rng(5)
    a = rng.normal(size=(4, 3) if ta else (3, 4))
    b = rng.normal(size=(2, 4) if tb else (4, 2))

    def f(x, y):
        return aics.matmul(x, y, transpose_a=ta, transpose_b=tb)

    def ref(x, y):
        return (x.T if ta else x) @ (y.T if tb else y)
    want_a = _numeric_grad(lambda x: ref(x, b), a)
    want_b = _numeric_grad(lambda y: ref(a, y), b)
    for ga, gb in (_tape_grads(f, a, b), _graph_grads(f, a, b)):
        np.testing.assert_allclose(np.asarray(ga), want_a, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(np.asarray(gb), want_b, rtol=1e-6, atol=1e-8)


def test_matmul_gradient_skips_only_the_input_the_tape_does_not_watch():
    rng = np.random.default_rng(6)
    x, w = rng.normal(size=(5, 3)), rng.normal(size=(3, 2))
    gx, gw = _tape_grads(lambda a, b: aics.matmul(a, b), x, w, watch={1})
    assert gx is None                      # x was never watched: no gradient, as TF
    np.testing.assert_allclose(gw.numpy(), _numeric_grad(lambda v: x @ v, w), rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 4), n=st.integers(1, 4), bias_rank=st.sampled_from(["vector", "row", "scalar"]))
def test_bias_add_gradient_sums_over_broadcast_axes(batch, n, bias_rank):
    rng = np.random.default_rng(batch * 10 + n)
    x = rng.normal(size=(batch, n))
    b = {"vector": rng.normal(size=(n,)), "row": rng.normal(size=(1, n)),
         "scalar": np.asarray(rng.normal())}[bias_rank]
    weights = rng.normal(size=(batch, n))

    def f(u, v):
        return (u + v) * weights

    def ref(u, v):
        return (u + v) * weights
    want_x = _numeric_grad(lambda u: ref(u, b), x)
    want_b = _numeric_grad(lambda v: ref(x, v), b)
    for gx, gb in (_tape_grads(f, x, b), _graph_grads(f, x, b)):
        np.testing.assert_allclose(np.asarray(gx), want_x, rtol=1e-6, atol=1e-8)
        assert np.shape(gb) == b.shape
        np.testing.assert_allclose(np.asarray(gb), want_b, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("reduce", ["mean", "sum"])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 1])
def test_reduction_gradients_to_scalar_and_along_an_axis(reduce, keepdims, axis):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 4))
    weights = rng.normal(size=np.sum(x, axis=axis, keepdims=keepdims).shape)
    op = aics.reduce_mean if reduce == "mean" else aics.reduce_sum
    ref_op = np.mean if reduce == "mean" else np.sum

    def f(u):
        return op(u, axis=axis, keepdims=keepdims) * weights
    want = _numeric_grad(lambda u: ref_op(u, axis=axis, keepdims=keepdims) * weights, x)
    for (g,) in (_tape_grads(f, x), _graph_grads(f, x)):
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-8)


def test_mlp_step_gradients_match_numerical_gradients():
    """The whole path of the benchmark's step: matmul, bias, relu, sparse xent, mean."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(4, 5))
    y = np.array([0, 2, 1, 2])
    w1, b1 = rng.normal(size=(5, 3)), rng.normal(size=(3,)) * 0.1
    w2, b2 = rng.normal(size=(3, 3)), rng.normal(size=(3,)) * 0.1
    params = [aics.Variable(v) for v in (w1, b1, w2, b2)]

    def loss_np(p):
        h = np.maximum(x @ p[0] + p[1], 0)
        z = h @ p[2] + p[3]
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return -logp[np.arange(len(y)), y].mean()

    with aics.GradientTape() as tape:
        h = aics.nn.relu(aics.matmul(x, params[0]) + params[1])
        logits = aics.matmul(h, params[2]) + params[3]
        loss = aics.reduce_mean(aics.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits))
    grads = tape.gradient(loss, params)
    values = [w1, b1, w2, b2]
    for i, g in enumerate(grads):
        def f(v, i=i):
            p = list(values)
            p[i] = v
            return loss_np(p)
        np.testing.assert_allclose(g.numpy(), _numeric_grad(f, values[i]), rtol=1e-5, atol=1e-7)


# --- big GEMMs: the MatMul kernel and the conv kernels' split GEMM (work_sharder.matmul) ------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_big_matmul_split_over_threads_matches_one_blas_call(dtype, ta, tb):
    """128x784 @ 784x300 (60 MFLOP, the MLP's first layer) and its gradient-shaped transposes,
    through the MatMul kernel and through the split path the convolutions use."""
    rng = np.random.default_rng(9)
    a = rng.normal(size=(784, 128) if ta else (128, 784)).astype(dtype)
    b = rng.normal(size=(300, 784) if tb else (784, 300)).astype(dtype)
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    got = aics.matmul(a, b, transpose_a=ta, transpose_b=tb).numpy()
    split = work_sharder.matmul(np.ascontiguousarray(a.T if ta else a), np.ascontiguousarray(b.T if tb else b))
    for out in (got, split):
        assert out.dtype == dtype and out.shape == (128, 300)
        np.testing.assert_allclose(out, want, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                   atol=1e-3 if dtype == np.float32 else 1e-10)
