"""The references notebook 12's lab is graded against (workbook/references/im2col.py and
conv_backprop.py): the size rule is TensorFlow's (aicslib's get_windowed_output_size, which
follows GetWindowedOutputSizeVerbose), the GEMM forms equal the definition's loops and aicslib's
Conv2D/Conv2DBackpropInput/Conv2DBackpropFilter ops, col2im is im2col's adjoint."""
import numpy as np
import pytest

import aicslib as aics
from aicslib.framework.kernel_shape_util import get_windowed_output_size
from workbook.references import conv_backprop as cb, im2col as ic


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_size_rule_is_tensorflows(padding):
    for stride in (1, 2, 3, 4):
        for k in (1, 2, 3, 4, 5):
            for n in range(k, 14):
                assert ic.output_size_and_padding(n, k, stride, padding) == tuple(
                    get_windowed_output_size(n, k, stride, 1, padding)), (n, k, stride, padding)


CASES = [((2, 7, 7, 3), (3, 3), 4, 1, "SAME"), ((1, 8, 8, 2), (3, 3), 3, 2, "SAME"),
         ((2, 7, 6, 2), (3, 2), 2, 2, "VALID"), ((1, 9, 8, 2), (3, 3), 2, 3, "SAME"),
         ((1, 10, 10, 2), (3, 3), 2, 3, "VALID"), ((2, 6, 5, 3), (4, 2), 2, 1, "SAME"),
         ((1, 9, 9, 2), (2, 2), 2, 3, "SAME")]


def _operands(shape, k, K, stride, padding, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    w = rng.standard_normal(k + (shape[3], K))
    Ho, Wo, _, _ = ic.geometry(shape, k[0], k[1], stride, padding)
    return x, w, rng.standard_normal((shape[0], Ho, Wo, K))


@pytest.mark.parametrize("shape, k, K, stride, padding", CASES)
def test_gemm_forms_equal_the_loops_and_aicslib(shape, k, K, stride, padding):
    x, w, dy = _operands(shape, k, K, stride, padding)
    strides = [1, stride, stride, 1]
    y = (ic.im2col(x, *k, stride, padding) @ w.reshape(-1, K)).reshape(dy.shape)
    np.testing.assert_allclose(y, cb.conv2d_brute(x, w, stride, padding), atol=1e-12)
    np.testing.assert_allclose(y, aics.nn.conv2d(x, w, strides, padding).numpy(), atol=1e-10)
    dw = cb.conv2d_backprop_filter(x, dy, w.shape, stride, padding)
    np.testing.assert_allclose(dw, cb.conv2d_backprop_filter_brute(x, dy, w.shape, stride, padding), atol=1e-12)
    np.testing.assert_allclose(dw, aics.nn.conv2d_backprop_filter(x, w.shape, dy, strides, padding).numpy(), atol=1e-10)
    dx = cb.conv2d_backprop_input(dy, w, x.shape, stride, padding)
    np.testing.assert_allclose(dx, cb.conv2d_backprop_input_brute(dy, w, x.shape, stride, padding), atol=1e-12)
    np.testing.assert_allclose(dx, aics.nn.conv2d_backprop_input(x.shape, w, dy, strides, padding).numpy(), atol=1e-10)


def test_gradients_are_the_gradients_of_the_forward():
    x, w, dy = _operands((1, 7, 6, 2), (3, 3), 2, 2, "SAME", seed=1)
    xt, wt = aics.constant(x), aics.constant(w)
    with aics.GradientTape() as tape:
        tape.watch([xt, wt])
        loss = aics.reduce_sum(aics.nn.conv2d(xt, wt, 2, "SAME") * dy)
    gx, gw = tape.gradient(loss, [xt, wt])
    np.testing.assert_allclose(cb.conv2d_backprop_input(dy, w, x.shape, 2, "SAME"), gx.numpy(), atol=1e-10)
    np.testing.assert_allclose(cb.conv2d_backprop_filter(x, dy, w.shape, 2, "SAME"), gw.numpy(), atol=1e-10)


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(2, 0), (1, 1)]])
def test_col2im_is_the_adjoint_of_im2col(padding):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 8, 7, 3))
    cols = ic.im2col(x, 3, 2, 2, padding)
    c = rng.standard_normal(cols.shape)
    assert np.isclose(np.sum(cols * c), np.sum(x * cb.col2im(c, x.shape, 3, 2, 2, padding)))


def test_brute_references_keep_float32_sums_in_float64():
    x, w, dy = (a.astype(np.float32) for a in _operands((1, 5, 5, 2), (3, 3), 2, 1, "SAME"))
    assert cb.conv2d_backprop_filter_brute(x, dy, w.shape, 1, "SAME").dtype == np.float64
    assert cb.conv2d_backprop_input(dy, w, x.shape, 1, "SAME").dtype == np.float32
