"""aics.nn ops: forward values against brute force / NumPy formulas, TF semantics
(shapes, padding, tie rules, error messages), in every execution mode (the ``run_op``
fixture, tests/op_modes.py: eager, Session, aics.function).

Every gradient is also checked numerically by tests/ops/test_gradient_registry.py
(recipes in aicslib/ops/nn_grad.py); here the conv gradients are compared with
the loop references and with each other across modes.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
import aicslib.compat.v1 as tf1
from aicslib.framework.kernel_shape_util import get_windowed_output_size
from aicslib.kernels import conv_grad_filter_ops as cgf
from aicslib.kernels import conv_grad_input_ops as cgi
from aicslib.kernels import conv_ops as co
from aicslib.kernels import conv_layout as cl

from accel_switch import accel_on_off  # noqa: F401

# every op here runs on the reference kernels and on the speed layer's
pytestmark = pytest.mark.usefixtures("accel_on_off")

rng = np.random.default_rng(0)


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def val(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def close(a, b, rtol=1e-4):
    a, b = np.asarray(val(a), np.float64), np.asarray(val(b), np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(np.abs(b).max(initial=0.0), 1e-6)
    assert np.abs(a - b).max(initial=0.0) <= rtol * scale, np.abs(a - b).max()


def brute_conv(x, w, strides, pads, dil=(1, 1)):
    """7 loops, explicit pads ((t, b), (l, r))."""
    N, H, W, C = x.shape
    kh, kw, _, K = w.shape
    (pt, pb), (pl, pr) = pads
    Ho = (H + pt + pb - (kh - 1) * dil[0] - 1) // strides[0] + 1
    Wo = (W + pl + pr - (kw - 1) * dil[1] - 1) // strides[1] + 1
    y = np.zeros((N, Ho, Wo, K))
    for n in range(N):
        for oh in range(Ho):
            for ow in range(Wo):
                for i in range(kh):
                    for j in range(kw):
                        ih, iw = oh * strides[0] + i * dil[0] - pt, ow * strides[1] + j * dil[1] - pl
                        if 0 <= ih < H and 0 <= iw < W:
                            for c in range(C):
                                y[n, oh, ow] += x[n, ih, iw, c] * w[i, j, c].astype(np.float64)
    return y


# ----------------------------------------------------------------------------
# conv2d
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("strides,padding,dilations,s,pads,d", [
    (1, "SAME", None, (1, 1), ((1, 1), (1, 1)), (1, 1)),
    ([2], "SAME", None, (2, 2), ((0, 1), (1, 1)), (1, 1)),   # H=6: total 1, the odd pixel at the bottom
    ([2, 1], "VALID", [1, 2], (2, 1), ((0, 0), (0, 0)), (1, 2)),
    ([1, 1, 2, 1], [[0, 0], [2, 0], [1, 3], [0, 0]], 1, (1, 2), ((2, 0), (1, 3)), (1, 1)),
    (1, "SAME", [1, 2, 1, 1], (1, 1), ((2, 2), (1, 1)), (2, 1)),
])
def test_conv2d_matches_brute_force(run_op, strides, padding, dilations, s, pads, d):
    x, w = rand(2, 6, 7, 3), rand(3, 3, 3, 4, seed=1)
    y = run_op(lambda x, w: aics.nn.conv2d(x, w, strides, padding, dilations=dilations), x, w,
               static_shapes=True)
    close(y, brute_conv(x, w, s, pads, d))
    assert y.dtype == np.float32


def test_conv2d_output_shapes_as_tf():
    x = np.zeros((1, 7, 6, 2), np.float32)
    w = np.zeros((3, 3, 2, 5), np.float32)
    assert aics.nn.conv2d(x, w, 2, "SAME").shape == (1, 4, 3, 5)
    assert aics.nn.conv2d(x, w, 2, "VALID").shape == (1, 3, 2, 5)
    assert aics.nn.conv2d(x, w, 1, "VALID", dilations=2).shape == (1, 3, 2, 5)


def test_conv2d_nchw_agrees_with_nhwc(run_op):
    x, w = rand(2, 7, 6, 3), rand(3, 2, 3, 4, seed=1)
    ref, y, y2 = run_op(lambda x, xc, w: [
        aics.nn.conv2d(x, w, [2, 1], "SAME"),
        aics.nn.conv2d(xc, w, [2, 1], "SAME", data_format="NCHW"),
        # explicit padding is given in data_format order
        aics.nn.conv2d(xc, w, 1, [[0, 0], [0, 0], [1, 2], [0, 1]], data_format="NCHW")],
        x, cl.nhwc_to_nchw(x), w, static_shapes=True)
    assert y.shape == (2, 4, 4, 6)
    close(cl.nchw_to_nhwc(y), ref)
    close(cl.nchw_to_nhwc(y2), brute_conv(x, w, (1, 1), ((1, 2), (0, 1))))


def test_conv2d_errors_name_both_shapes():
    x, w = np.zeros((1, 5, 5, 3), np.float32), np.zeros((3, 3, 4, 2), np.float32)
    with pytest.raises(aics.errors.InvalidArgumentError, match=r"5, 5, 3.*3, 3, 4, 2"):
        aics.nn.conv2d(x, w, 1, "SAME")
    with pytest.raises(aics.errors.InvalidArgumentError, match=r"5, 5, 3.*3, 3, 4, 2"):
        aics.nn.conv2d(x, w, 1, "FULL")
    with aics.Graph().as_default():
        xp = aics.placeholder(aics.float32, [None, 5, 5, 3], name="x")
        with pytest.raises(aics.errors.InvalidArgumentError, match=r"5, 5, 3.*3, 3, 4, 2"):
            aics.nn.conv2d(xp, w, 1, "SAME")
        with pytest.raises(aics.errors.InvalidArgumentError, match="padding"):
            aics.nn.conv2d(xp, np.zeros((3, 3, 3, 2), np.float32), 1, "same-ish")


def test_conv2d_graph_mode_and_gradients_match_eager():
    x, w = rand(2, 6, 6, 3), rand(3, 3, 3, 2, seed=1)
    dy = rand(2, 3, 3, 2, seed=2)
    xt, wt = aics.constant(x.astype(np.float64)), aics.constant(w.astype(np.float64))
    with aics.GradientTape() as tape:
        tape.watch(xt)
        tape.watch(wt)
        y = aics.nn.conv2d(xt, wt, 2, "SAME")
        loss = aics.reduce_sum(y * dy.astype(np.float64))
    gx, gw = tape.gradient(loss, [xt, wt])
    close(gx, cgi.conv2d_backprop_input_direct(dy, w, x.shape, (2, 2), "SAME"))
    close(gw, cgf.conv2d_backprop_filter_direct(x, dy, w.shape, (2, 2), "SAME"))
    with aics.Graph().as_default():
        xp = aics.placeholder(aics.float32, [None, 6, 6, 3])
        wv = aics.constant(w)
        yg = aics.nn.conv2d(xp, wv, 2, "SAME")
        assert yg.shape.as_list() == [None, 3, 3, 2]
        g = aics.gradients(aics.reduce_sum(yg * dy), [xp, wv])
        with aics.Session() as sess:
            yv, gxv, gwv = sess.run([yg] + g, feed_dict={xp: x})
    close(yv, aics.nn.conv2d(x, w, 2, "SAME"))
    close(gxv, gx)
    close(gwv, gw)


def test_conv2d_backprop_ops_public_api():
    x, w = rand(2, 5, 5, 3), rand(3, 3, 3, 4, seed=1)
    dy = rand(2, 5, 5, 4, seed=2)
    dx = aics.nn.conv2d_backprop_input([2, 5, 5, 3], w, dy, 1, "SAME")
    dw = aics.nn.conv2d_backprop_filter(x, [3, 3, 3, 4], dy, 1, "SAME")
    close(dx, cgi.conv2d_backprop_input_direct(dy, w, x.shape, (1, 1), "SAME"))
    close(dw, cgf.conv2d_backprop_filter_direct(x, dy, w.shape, (1, 1), "SAME"))


def test_conv2d_second_order_gradient_runs():
    x, w = rand(1, 4, 4, 2).astype(np.float64), rand(3, 3, 2, 2, seed=1).astype(np.float64)
    xt, wt = aics.constant(x), aics.constant(w)
    with aics.GradientTape() as outer:
        outer.watch(wt)
        with aics.GradientTape() as inner:
            inner.watch(xt)
            loss = aics.reduce_sum(aics.nn.conv2d(xt, wt, 1, "SAME") ** 2)
        gx = inner.gradient(loss, xt)
        s = aics.reduce_sum(gx)
    gw = outer.gradient(s, wt)
    # d/dw sum_x d(sum y^2)/dx, numerically
    def f(wv):
        y = co.conv2d_direct(x, wv, (1, 1), "SAME").astype(np.float64)
        return cgi.conv2d_backprop_input_direct(2 * y, wv, x.shape, (1, 1), "SAME").sum()
    num = np.zeros_like(w)
    for idx in np.ndindex(w.shape):
        e = np.zeros_like(w)
        e[idx] = 1e-4
        num[idx] = (f(w + e) - f(w - e)) / 2e-4
    close(gw, num, rtol=1e-3)


def test_conv2d_float16_keeps_dtype():
    x, w = rand(1, 5, 5, 2).astype(np.float16), rand(3, 3, 2, 2, seed=1).astype(np.float16)
    y = aics.nn.conv2d(x, w, 1, "SAME")
    assert y.dtype == aics.float16
    close(val(y), brute_conv(x.astype(np.float32), w.astype(np.float32), (1, 1), ((1, 1), (1, 1))), rtol=2e-2)


# ----------------------------------------------------------------------------
# depthwise / separable / bias_add
# ----------------------------------------------------------------------------

def test_depthwise_and_separable_conv2d(run_op):
    x = rand(2, 6, 6, 3)
    dw = rand(3, 3, 3, 2, seed=1)
    pw = rand(1, 1, 6, 4, seed=2)
    y, s = run_op(lambda x, dw, pw: [aics.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], "SAME"),
                                     aics.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "SAME")],
                  x, dw, pw, static_shapes=True)
    assert y.shape == (2, 6, 6, 6)
    full = np.zeros((3, 3, 3, 6), np.float32)
    for c in range(3):
        full[:, :, c, 2 * c:2 * c + 2] = dw[:, :, c]
    close(y, brute_conv(x, full, (1, 1), ((1, 1), (1, 1))))
    close(s, np.einsum("nhwc,ck->nhwk", y, pw[0, 0]))


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_bias_add(run_op, data_format):
    x, b = rand(2, 3, 4, 5), rand(5 if data_format == "NHWC" else 3, seed=1)
    y = run_op(lambda x, b: aics.nn.bias_add(x, b, data_format=data_format), x, b, static_shapes=True)
    expected = x + (b if data_format == "NHWC" else b[None, :, None, None])
    close(y, expected)
    with pytest.raises(aics.errors.InvalidArgumentError):
        run_op(lambda x, b: aics.nn.bias_add(x, b, data_format=data_format), x, rand(7))


# ----------------------------------------------------------------------------
# activations, softmax, losses
# ----------------------------------------------------------------------------

def test_activations(run_op):
    x = np.array([-3.0, -0.5, 0.0, 0.5, 7.0], np.float32)
    got = run_op(lambda t: [aics.nn.relu(t), aics.nn.relu6(t), aics.nn.elu(t), aics.nn.leaky_relu(t, alpha=0.1),
                            aics.nn.leaky_relu(t), aics.nn.sigmoid(t), aics.nn.tanh(t)], x)
    expected = [np.maximum(x, 0), np.clip(x, 0, 6), np.where(x > 0, x, np.expm1(x)), np.where(x > 0, x, 0.1 * x),
                np.where(x > 0, x, 0.2 * x), 1 / (1 + np.exp(-x)), np.tanh(x)]
    for g, e in zip(got, expected):
        close(g, e)
        assert g.dtype == np.float32


def test_softmax_is_stable_and_takes_an_axis(run_op):
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]], np.float32)
    z = rand(2, 3, 4)
    y, ls, sz = run_op(lambda x, z: [aics.nn.softmax(x), aics.nn.log_softmax(x), aics.nn.softmax(z, axis=1)],
                       x, z, static_shapes=True)
    assert np.all(np.isfinite(y))
    e = np.exp(x - x.max(1, keepdims=True))
    close(y, e / e.sum(1, keepdims=True))
    assert np.all(np.isfinite(ls))
    close(ls, (x - x.max(1, keepdims=True)) - np.log(e.sum(1, keepdims=True)))
    close(sz, np.exp(z) / np.exp(z).sum(1, keepdims=True))


def test_sparse_cross_entropy_follows_tfs_generators():
    """TF's SparseXentEigenImpl (sparse_xent_op.h), row by row in float32, within an ulp (the sum
    may add in another order): z = logits - max, loss = log(sum exp z) - z[label],
    backprop = exp(z) / sum exp z - 1{label}."""
    from aicslib.framework.kernel_registry import kernel_registry
    kernel = kernel_registry.find("SparseSoftmaxCrossEntropyWithLogits", "CPU",
                                  {"T": aics.float32, "Tlabels": aics.int32}).impl
    rng = np.random.default_rng(4)
    logits = (rng.standard_normal((6, 7)) * 8).astype(np.float32)
    logits[1, 3], logits[2, 0] = -np.inf, 80.0
    labels = rng.integers(0, 7, 6).astype(np.int32)
    loss, backprop = kernel(logits, labels)
    for b in range(6):
        z = logits[b] - logits[b].max()
        e = np.exp(z)
        total = np.float32(0)
        for v in e:                       # any order of this sum: compared with 1 ulp below
            total = np.float32(total + v)
        assert abs(loss[b] - (np.log(total) - z[labels[b]])) <= np.spacing(abs(loss[b])) * 2
        want = e / e.sum(dtype=np.float32)
        want[labels[b]] -= np.float32(1)
        np.testing.assert_array_max_ulp(backprop[b], want, maxulp=1)


def test_cross_entropies(run_op):
    logits = np.array([[2.0, -1.0, 0.5], [1000.0, -1000.0, 0.0]], np.float32)
    labels = np.array([[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]], np.float32)
    ls = logits - logits.max(1, keepdims=True)
    logp = ls - np.log(np.exp(ls).sum(1, keepdims=True))
    loss, sparse = run_op(lambda labels, ids, logits: [
        aics.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits),
        aics.nn.sparse_softmax_cross_entropy_with_logits(labels=ids, logits=logits)],
        labels, np.array([2, 1]), logits, static_shapes=True)
    assert np.all(np.isfinite(loss))
    close(loss, -(labels * logp).sum(1))
    close(sparse, -logp[[0, 1], [2, 1]])
    with pytest.raises(aics.errors.InvalidArgumentError, match="valid range"):
        run_op(lambda ids, logits: aics.nn.sparse_softmax_cross_entropy_with_logits(labels=ids, logits=logits),
               np.array([3, 0]), logits)
    # rank 3 logits
    l3 = rand(2, 2, 3)
    z3 = np.abs(rand(2, 2, 3, seed=1))
    z3 /= z3.sum(-1, keepdims=True)
    ref = -(z3 * (l3 - np.log(np.exp(l3).sum(-1, keepdims=True)))).sum(-1)
    close(aics.nn.softmax_cross_entropy_with_logits(z3, l3), ref)
    x = np.array([-1000.0, -2.0, 0.0, 3.0, 1000.0], np.float32)
    z = np.array([0.0, 1.0, 0.5, 0.0, 1.0], np.float32)
    sig = val(aics.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x))
    assert np.all(np.isfinite(sig))
    close(sig, np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))))
    w = val(aics.nn.weighted_cross_entropy_with_logits(z, x, 3.0))
    xs = x.astype(np.float64)
    ref_w = (1 - z) * xs + (1 + 2 * z) * (np.log1p(np.exp(-np.abs(xs))) + np.maximum(-xs, 0))
    close(w, ref_w)
    close(aics.nn.l2_loss(logits[:1]), (logits[:1] ** 2).sum() / 2)


def test_xent_gradient_is_softmax_minus_labels():
    logits = rand(3, 4).astype(np.float64)
    labels = np.eye(4)[[1, 0, 3]]
    lt = aics.constant(logits)
    with aics.GradientTape() as tape:
        tape.watch(lt)
        loss = aics.reduce_sum(aics.nn.softmax_cross_entropy_with_logits(labels, lt))
    e = np.exp(logits - logits.max(1, keepdims=True))
    close(tape.gradient(loss, lt), e / e.sum(1, keepdims=True) - labels)


def test_moments_and_batch_normalization(run_op):
    x = rand(4, 3, 5)
    offset, scale = rand(5, seed=1), rand(5, seed=2)

    def build(x, offset, scale):
        mean, var = aics.nn.moments(x, axes=[0, 1])
        m2, _ = aics.nn.moments(x, axes=[2], keepdims=True)
        return [mean, var, m2, aics.nn.batch_normalization(x, mean, var, offset, scale, 1e-3),
                aics.nn.batch_normalization(x, mean, var, None, None, 1e-3)]
    mean, var, m2, y, y_plain = run_op(build, x, offset, scale, static_shapes=True)
    close(mean, x.mean((0, 1)))
    close(var, x.var((0, 1)))
    assert m2.shape == (4, 3, 1)
    close(y, (x - x.mean((0, 1))) / np.sqrt(x.var((0, 1)) + 1e-3) * scale + offset)
    close(y_plain, (x - x.mean((0, 1))) / np.sqrt(x.var((0, 1)) + 1e-3))


def test_dropout_tf2_semantics():
    x = np.ones((200, 50), np.float32)
    y = val(aics.nn.dropout(x, rate=0.25, seed=3))
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    np.testing.assert_array_equal(val(aics.nn.dropout(x, rate=0.0)), x)
    aics.random.set_seed(5)
    a = val(aics.nn.dropout(x, 0.5, seed=1))
    aics.random.set_seed(5)
    b = val(aics.nn.dropout(x, 0.5, seed=1))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        aics.nn.dropout(x, rate=1.0)
    # the gradient is the same mask and scale
    xt = aics.constant(rand(10, 10).astype(np.float64))
    with aics.GradientTape() as tape:
        tape.watch(xt)
        y = aics.nn.dropout(xt, 0.5, seed=2)
        s = aics.reduce_sum(y)
    g = val(tape.gradient(s, xt))
    np.testing.assert_allclose(g, (val(y) != 0) * 2.0)


# ----------------------------------------------------------------------------
# pooling
# ----------------------------------------------------------------------------

def brute_pool(x, k, s, padding, op):
    N, H, W, C = x.shape
    Ho, pt, _ = get_windowed_output_size(H, k[0], s[0], 1, padding)
    Wo, pl, _ = get_windowed_output_size(W, k[1], s[1], 1, padding)
    y = np.zeros((N, Ho, Wo, C))
    for oh in range(Ho):
        for ow in range(Wo):
            r0, c0 = oh * s[0] - pt, ow * s[1] - pl
            win = x[:, max(r0, 0):r0 + k[0], max(c0, 0):c0 + k[1]]
            y[:, oh, ow] = op(win.reshape(N, -1, C), axis=1)
    return y


@pytest.mark.parametrize("k,s,padding", [(2, 2, "VALID"), (3, 2, "SAME"), ([3, 2], [1, 2], "SAME"), (3, 1, "VALID")])
def test_max_and_avg_pool(run_op, k, s, padding):
    x = rand(2, 7, 6, 3)
    kk = (k, k) if isinstance(k, int) else tuple(k)
    ss = (s, s) if isinstance(s, int) else tuple(s)
    mx, av, y = run_op(lambda x, xc: [aics.nn.max_pool(x, k, s, padding), aics.nn.avg_pool(x, k, s, padding),
                                      aics.nn.max_pool(xc, k, s, padding, data_format="NCHW")],
                       x, cl.nhwc_to_nchw(x), static_shapes=True)
    close(mx, brute_pool(x, kk, ss, padding, np.max))
    close(av, brute_pool(x, kk, ss, padding, np.mean))
    close(cl.nchw_to_nhwc(y), brute_pool(x, kk, ss, padding, np.max))


def test_max_pool_gradient_tie_rule_and_overlap():
    # all equal: in each window only the first (row-major) element gets the gradient
    x = aics.constant(np.zeros((1, 3, 3, 1)))
    with aics.GradientTape() as tape:
        tape.watch(x)
        y = aics.nn.max_pool(x, 2, 1, "VALID")        # 4 overlapping 2x2 windows
        s = aics.reduce_sum(y * np.array([1.0, 10.0, 100.0, 1000.0]).reshape(1, 2, 2, 1))
    g = val(tape.gradient(s, x))[0, :, :, 0]
    np.testing.assert_array_equal(g, [[1, 10, 0], [100, 1000, 0], [0, 0, 0]])
    # a shared maximum accumulates the gradients of every window that picked it
    xv = np.zeros((1, 3, 3, 1))
    xv[0, 1, 1, 0] = 5.0
    x = aics.constant(xv)
    with aics.GradientTape() as tape:
        tape.watch(x)
        s = aics.reduce_sum(aics.nn.max_pool(x, 2, 1, "VALID"))
    g = val(tape.gradient(s, x))[0, :, :, 0]
    np.testing.assert_array_equal(g, [[0, 0, 0], [0, 4, 0], [0, 0, 0]])


def test_max_pool_with_argmax_indices(run_op):
    x = rand(2, 4, 5, 3)
    y, idx, idx_b = run_op(lambda x: [*aics.nn.max_pool_with_argmax(x, 2, 2, "SAME"),
                                      aics.nn.max_pool_with_argmax(x, 2, 2, "SAME", include_batch_in_index=True)[1]],
                           x, static_shapes=True)
    close(y, brute_pool(x, (2, 2), (2, 2), "SAME", np.max))
    assert idx.dtype == np.int64
    flat = x.reshape(2, -1)
    for n in range(2):
        np.testing.assert_array_equal(flat[n][idx[n]], y[n])
    np.testing.assert_array_equal(x.reshape(-1)[idx_b], y)
    h, w_, c = 1, 3, 2
    assert (h * 5 + w_) * 3 + c == 26                 # TF's formula, (y * width + x) * channels + c


def test_avg_pool_same_divides_by_valid_pixels(run_op):
    x = np.ones((1, 3, 3, 1), np.float32)
    np.testing.assert_allclose(run_op(lambda x: aics.nn.avg_pool(x, 3, 1, "SAME"), x), np.ones((1, 3, 3, 1)),
                               rtol=1e-6)
    with pytest.raises(aics.errors.InvalidArgumentError):
        run_op(lambda x: aics.nn.max_pool(x, 2, 2, "EXPLICIT"), x)


@pytest.mark.parametrize("op", ["conv2d", "depthwise_conv2d"])
def test_nchw_gradients_agree_with_nhwc(op):
    x = rand(2, 6, 5, 3).astype(np.float64)
    w = rand(3, 3, 3, 2, seed=1).astype(np.float64)
    fn = getattr(aics.nn, op)

    def grads(xv, fmt):
        xt, wt = aics.constant(xv), aics.constant(w)
        with aics.GradientTape() as tape:
            tape.watch([xt, wt])
            y = fn(xt, wt, [1, 1, 2, 1] if fmt == "NHWC" else [1, 1, 1, 2], "SAME", data_format=fmt)
            s = aics.reduce_sum(y * y)
        return [val(g) for g in tape.gradient(s, [xt, wt])]

    gx, gw = grads(x, "NHWC")
    gx2, gw2 = grads(cl.nhwc_to_nchw(x), "NCHW")
    close(cl.nchw_to_nhwc(gx2), gx, rtol=1e-10)
    close(gw2, gw, rtol=1e-10)


def test_softmax_cross_entropy_casts_float64_labels_like_tensorflow(graph_mode):
    # TF: "labels and logits must be of the same type" -> labels are cast to the logits' dtype.
    labels = tf1.constant(np.eye(3)[[0, 2]])  # float64, as np.eye one-hot labels in tf1.data
    logits = tf1.constant([[2.0, 1.0, 0.0], [0.5, 0.5, 3.0]])
    loss = tf1.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with tf1.Session() as s:
        got = s.run(loss)
    z = np.array([[2.0, 1.0, 0.0], [0.5, 0.5, 3.0]])
    ref = -np.log(np.exp(z[[0, 1], [0, 2]]) / np.exp(z).sum(1))
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    assert got.dtype == np.float32


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-80, 80, allow_nan=False), min_size=1, max_size=8))
def test_softplus_values_and_gradient(xs):
    x = aics.constant(np.array(xs, np.float32))
    with aics.GradientTape() as tape:
        tape.watch(x)
        y = aics.nn.softplus(x)
    g = tape.gradient(y, x).numpy()
    xv = np.array(xs, np.float64)
    np.testing.assert_allclose(y.numpy(), np.logaddexp(0.0, xv), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, 1.0 / (1.0 + np.exp(-xv)), rtol=1e-4, atol=1e-6)
