"""TF1 spellings that real programs use, each in the namespace where TensorFlow 2.21 accepts it.

``tf.compat.v1`` takes ``reduction_indices``/``keep_dims`` on every reduction, ``dimension`` on
``argmax``, ``value``/``filter`` on pooling and convolutions; TF2's ``tf`` takes none of them.
Expected numbers are NumPy recomputations or values printed by TensorFlow 2.21
(``tf.compat.v1`` after ``disable_v2_behavior()``), quoted where used.
"""
import os

import numpy as np
import pytest

import aicslib as aics
import aicslib.compat.v1 as tf


@pytest.fixture(autouse=True)
def _tf2_behavior_after():
    yield
    tf.enable_v2_behavior()


def run_v1(build):
    """Builds ``build()`` in a TF1 graph and runs it in a Session."""
    with tf.Graph().as_default():
        fetch = build()
        with tf.Session() as sess:
            return sess.run(fetch)


# ---------------------------------------------------------------- version and device queries

def test_version_in_both_namespaces():
    assert tf.__version__ == aics.__version__ == aics.version.VERSION
    assert isinstance(tf.__version__, str) and tf.__version__.count(".") == 2


def test_gpu_queries_answer_as_on_a_cpu_machine():
    for ns in (aics, tf):
        assert ns.test.is_gpu_available() is False
        assert ns.test.is_gpu_available(cuda_only=True) is False
        assert ns.test.is_built_with_cuda() is False and ns.test.is_built_with_gpu_support() is False
        assert ns.test.gpu_device_name() == ""
    assert aics.config.list_physical_devices("GPU") == []


# ---------------------------------------------------------------- reductions

X = np.array([[1.0, -2.0, 0.0], [3.0, 0.0, 4.0]], np.float32)


@pytest.mark.parametrize("name, ref", [
    ("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max), ("reduce_min", np.min),
    ("reduce_prod", np.prod), ("reduce_logsumexp", lambda a, axis, keepdims: np.log(
        np.sum(np.exp(a), axis=axis, keepdims=keepdims)))])
def test_v1_reductions_take_reduction_indices_and_keep_dims(name, ref):
    for ns in (tf, tf.math):
        out = run_v1(lambda: getattr(ns, name)(X, reduction_indices=[1], keep_dims=True))
        np.testing.assert_allclose(out, ref(X, axis=1, keepdims=True), rtol=1e-6)
        out = run_v1(lambda: getattr(ns, name)(X, reduction_indices=0))
        np.testing.assert_allclose(out, ref(X, axis=0, keepdims=False), rtol=1e-6)
    with pytest.raises(ValueError, match="Cannot specify both 'reduction_indices' and 'axis'"):
        getattr(tf, name)(X, axis=0, reduction_indices=0)


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                                  "reduce_prod", "reduce_all", "reduce_any", "reduce_logsumexp"])
def test_tf2_reductions_reject_tf1_keywords_as_tf(name):
    for ns in (aics, aics.math):
        fn = getattr(ns, name)
        with pytest.raises(TypeError, match="keep_dims"):
            fn(X > 0 if "all" in name or "any" in name else X, keep_dims=True)
        with pytest.raises(TypeError, match="reduction_indices"):
            fn(X, reduction_indices=0)


def test_bool_reductions_and_count_nonzero_v1():
    b = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(run_v1(lambda: tf.reduce_all(b, reduction_indices=[1], keep_dims=True)),
                                  [[False], [True]])  # TF 2.21 prints [[False] [ True]]
    np.testing.assert_array_equal(run_v1(lambda: tf.reduce_any(b, reduction_indices=1)), [True, True])
    cnz = run_v1(lambda: tf.count_nonzero([[0, 1], [2, 0], [3, 3]], reduction_indices=0, keep_dims=True))
    np.testing.assert_array_equal(cnz, [[2, 2]])  # TF 2.21: [[2 2]], int64
    assert cnz.dtype == np.int64
    np.testing.assert_array_equal(run_v1(lambda: tf.count_nonzero(input=X, axis=1)), [2, 2])
    assert "count_nonzero" not in dir(aics)  # TF2 has it only as tf.math.count_nonzero


def test_argmax_dimension_in_v1_and_v1_math_only():
    assert run_v1(lambda: tf.argmax(X, dimension=1)).tolist() == [0, 2]
    assert run_v1(lambda: tf.math.argmin(X, dimension=0)).tolist() == [0, 0, 0]
    with pytest.raises(TypeError, match="dimension"):
        aics.argmax(X, dimension=1)
    with pytest.raises(TypeError, match="dimension"):
        aics.math.argmax(X, dimension=1)


def test_in_top_k_argument_order_per_namespace():
    pred = np.array([[0.1, 0.8, 0.1], [0.6, 0.3, 0.1]], np.float32)
    targets = np.array([1, 1])
    want = [True, False]
    assert run_v1(lambda: tf.math.in_top_k(pred, targets, 1)).tolist() == want  # v1: predictions first
    assert run_v1(lambda: tf.nn.in_top_k(pred, targets, 1)).tolist() == want
    assert aics.math.in_top_k(targets, pred, 1).numpy().tolist() == want    # TF2: targets first
    assert aics.nn.in_top_k(targets, pred, 1).numpy().tolist() == want


def test_norm_vector_and_matrix_orders():
    m = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    # TF 2.21 printed 6.0, [[7.]] and 4.4979415 for these three.
    assert aics.norm(m, ord=1, axis=[0, 1]).numpy() == pytest.approx(6.0)
    np.testing.assert_allclose(run_v1(lambda: tf.norm(m, ord=np.inf, axis=[-2, -1], keep_dims=True)), [[7.0]])
    assert aics.norm([3.0, -4.0], ord=3).numpy() == pytest.approx(4.4979415, rel=1e-6)
    assert aics.norm(m).numpy() == pytest.approx(np.linalg.norm(m))
    np.testing.assert_allclose(aics.linalg.norm(m, axis=1).numpy(), np.linalg.norm(m, axis=1), rtol=1e-6)
    np.testing.assert_allclose(aics.norm(m, ord=1, axis=0, keepdims=True).numpy(), [[4.0, 6.0]])
    with pytest.raises(TypeError, match="keep_dims"):
        aics.norm(m, keep_dims=True)
    with pytest.raises(NotImplementedError, match="SVD"):
        aics.norm(m, ord=2, axis=[0, 1])
    with pytest.raises(ValueError, match="'ord' must be a supported vector norm"):
        aics.norm(m, ord=-1)


# ---------------------------------------------------------------- pooling and convolution keywords

IMG = np.random.RandomState(0).randn(2, 6, 6, 3).astype(np.float32)
KERNEL = np.random.RandomState(1).randn(3, 3, 3, 4).astype(np.float32)


def max_pool_2x2(x):
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def conv_valid(x, k):
    kh, kw = k.shape[:2]
    ho, wo = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((x.shape[0], ho, wo, k.shape[3]), np.float64)
    for i in range(ho):
        for j in range(wo):
            out[:, i, j, :] = np.tensordot(x[:, i:i + kh, j:j + kw, :], k, axes=3)
    return out


def test_v1_pooling_takes_value_and_input():
    win = dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    np.testing.assert_allclose(run_v1(lambda: tf.nn.max_pool(value=IMG, **win)), max_pool_2x2(IMG))
    np.testing.assert_allclose(run_v1(lambda: tf.nn.max_pool(input=IMG, **win)), max_pool_2x2(IMG))
    avg = IMG.reshape(2, 3, 2, 3, 2, 3).mean(axis=(2, 4))
    np.testing.assert_allclose(run_v1(lambda: tf.nn.avg_pool(value=IMG, **win)), avg, rtol=1e-6)
    np.testing.assert_allclose(run_v1(lambda: tf.nn.avg_pool2d(IMG, **win)), avg, rtol=1e-6)
    with pytest.raises(ValueError, match="Cannot specify both 'value' and 'input'"):
        tf.nn.max_pool(value=IMG, input=IMG, **win)
    with pytest.raises(TypeError, match="value"):
        aics.nn.max_pool(value=IMG, **win)  # TF2's tf.nn.max_pool has no 'value'


def test_v1_conv2d_takes_filter_and_use_cudnn_on_gpu():
    want = conv_valid(IMG, KERNEL)
    out = run_v1(lambda: tf.nn.conv2d(input=IMG, filter=KERNEL, strides=[1, 1, 1, 1], padding="VALID",
                                      use_cudnn_on_gpu=True))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    out = run_v1(lambda: tf.nn.conv2d(IMG, filters=KERNEL, strides=[1, 1, 1, 1], padding="VALID"))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="Cannot specify both 'filter' and 'filters'"):
        tf.nn.conv2d(IMG, filter=KERNEL, filters=KERNEL, strides=1, padding="VALID")
    with pytest.raises(TypeError, match="filter"):
        aics.nn.conv2d(IMG, filter=KERNEL, strides=1, padding="VALID")


def test_v1_depthwise_rate_is_dilation():
    k = np.random.RandomState(2).randn(2, 2, 3, 1).astype(np.float32)
    got = run_v1(lambda: tf.nn.depthwise_conv2d(IMG, k, [1, 1, 1, 1], "VALID", rate=[2, 2]))
    want = aics.nn.depthwise_conv2d(IMG, k, [1, 1, 1, 1], "VALID", dilations=[1, 2, 2, 1]).numpy()
    dilated = np.zeros((3, 3, 3, 1), np.float32)
    dilated[::2, ::2] = k  # a rate-2 2x2 kernel is a 3x3 kernel with holes
    for c in range(3):
        np.testing.assert_allclose(got[..., c], conv_valid(IMG[..., c:c + 1], dilated[:, :, c:c + 1])[..., 0],
                                   rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="Cannot specify both 'rate' and 'dilations'"):
        tf.nn.depthwise_conv2d(IMG, k, [1, 1, 1, 1], "VALID", rate=2, dilations=[1, 2, 2, 1])


def test_conv2d_transpose_both_signatures_invert_shapes():
    k = np.random.RandomState(3).randn(3, 3, 5, 4).astype(np.float32)  # [kh, kw, out, in]
    x = np.random.RandomState(4).randn(2, 3, 3, 4).astype(np.float32)
    y2 = aics.nn.conv2d_transpose(x, k, [2, 6, 6, 5], strides=2, padding="SAME").numpy()
    y1 = run_v1(lambda: tf.nn.conv2d_transpose(value=x, filter=k, output_shape=[2, 6, 6, 5],
                                               strides=[1, 2, 2, 1]))
    np.testing.assert_allclose(y1, y2, rtol=1e-6)
    # conv2d_transpose is the adjoint of conv2d: <conv(u), x> == <u, conv_transpose(x)>
    u = np.random.RandomState(5).randn(2, 6, 6, 5).astype(np.float32)
    cu = aics.nn.conv2d(u, k, strides=2, padding="SAME").numpy()
    assert np.sum(cu * x) == pytest.approx(np.sum(u * y2), rel=1e-4)


# ---------------------------------------------------------------- tf.image

IMG44 = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)


@pytest.mark.parametrize("method, want", [
    # TensorFlow 2.21's tf.compat.v1.image.resize_images(IMG44, [3, 3], method=m), rounded to 4 places
    (0, [0.0, 1.3333, 2.6667, 5.3333, 6.6667, 8.0, 10.6667, 12.0, 13.3333]),
    (1, [0.0, 1.0, 2.0, 4.0, 5.0, 6.0, 8.0, 9.0, 10.0]),
    (2, [0.0, 1.3701, 2.741, 5.4804, 6.8505, 8.2214, 10.964, 12.3341, 13.7051]),
    (3, [1.25, 2.5, 3.75, 6.25, 7.5, 8.75, 11.25, 12.5, 13.75])])
def test_resize_images_tf1_methods(method, want):
    out = run_v1(lambda: tf.image.resize_images(IMG44, [3, 3], method=method))
    np.testing.assert_allclose(out.ravel(), want, atol=1e-4)
    by_name = [tf.image.ResizeMethod.BILINEAR, tf.image.ResizeMethod.NEAREST_NEIGHBOR,
               tf.image.ResizeMethod.BICUBIC, tf.image.ResizeMethod.AREA][method]
    assert by_name == method
    np.testing.assert_allclose(run_v1(lambda: tf.image.resize(IMG44, [3, 3], method=by_name)).ravel(),
                               want, atol=1e-4)
    tf2_name = ["bilinear", "nearest", "bicubic", "area"][method]
    np.testing.assert_allclose(aics.image.resize_images(IMG44, [3, 3], method=tf2_name).numpy().ravel(),
                               want, atol=1e-4)


def test_resize_images_align_corners_same_size_and_aspect():
    out = run_v1(lambda: tf.image.resize_images(IMG44, [3, 3], align_corners=True))
    np.testing.assert_allclose(out.ravel(), [0, 1.5, 3, 6, 7.5, 9, 12, 13.5, 15])  # TF 2.21
    with tf.Graph().as_default():
        x = tf.constant(IMG44)
        assert tf.image.resize_images(x, [4, 4]) is x  # same size: no resize op, as TF
        flat = tf.constant(np.arange(8, dtype=np.float32).reshape(2, 4, 1))
        assert tf.image.resize_images(flat, [4, 4], preserve_aspect_ratio=True).shape.as_list() == [2, 4, 1]
    with pytest.raises(ValueError, match="Resize method is not implemented: 7"):
        tf.image.resize_images(IMG44, [3, 3], method=7)
    assert aics.image.resize is not tf.image.resize  # TF2's resize keeps half-pixel centres


def test_total_variation_batch_and_single_image():
    img = np.random.RandomState(6).rand(2, 5, 4, 3).astype(np.float32)
    want = (np.abs(np.diff(img, axis=1)).sum(axis=(1, 2, 3)) + np.abs(np.diff(img, axis=2)).sum(axis=(1, 2, 3)))
    np.testing.assert_allclose(aics.image.total_variation(img).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(aics.image.total_variation(img[1]).numpy(), want[1], rtol=1e-5)
    assert run_v1(lambda: tf.image.total_variation(tf.constant(IMG44))).tolist() == [60.0]  # TF 2.21: [60.]
    with pytest.raises(ValueError, match="3 or 4-dimensional"):
        aics.image.total_variation(np.zeros((4, 4), np.float32))


# ---------------------------------------------------------------- gfile in both namespaces

def test_io_gfile_has_tf2_names_and_v1_gfile_tf1_names(tmp_path):
    d = os.path.join(tmp_path, "x", "y")
    aics.io.gfile.makedirs(d)
    assert aics.io.gfile.exists(d) and aics.io.gfile.isdir(d)
    with aics.io.gfile.GFile(aics.io.gfile.join(d, "a.txt"), "w") as f:
        f.write("1\n")
    assert aics.io.gfile.glob(os.path.join(d, "*.txt")) == [os.path.join(d, "a.txt")]
    assert not hasattr(aics.io.gfile, "Exists")  # TF 2.21's tf.io.gfile has only lower-case names
    assert tf.io.gfile is aics.io.gfile and tf.gfile.Exists is aics.io.gfile.exists
    assert aics.gfile.MakeDirs is tf.gfile.MakeDirs  # TF 1.15 had tf.gfile at the top level
    tf.gfile.DeleteRecursively(os.path.join(tmp_path, "x"))
    assert not tf.gfile.Exists(d)
    with pytest.raises(aics.errors.NotFoundError):
        tf.gfile.DeleteRecursively(os.path.join(tmp_path, "x"))


def test_tf1_config_proto_keeps_grappler_defaults():
    config = tf.ConfigProto(gpu_options=tf.GPUOptions(allow_growth=True))
    assert config.gpu_options.allow_growth
    assert config.graph_options.rewrite_options.constant_folding == 0  # RewriterConfig.DEFAULT
    assert aics.ConfigProto is tf.ConfigProto  # TF 1.15's tf.ConfigProto at the top level
    with tf.Graph().as_default():
        with tf.Session(config=config) as sess:
            assert sess.run(tf.constant(2.0) * 3.0) == 6.0


def test_arg_min_arg_max_are_tf1_spellings(graph_mode):
    m = np.array([[3, 1, 2], [0, 5, -1]], np.float32)
    with tf.Session() as s:
        lo, hi = s.run([tf.arg_min(m, 1), tf.arg_max(m, 0)])
    np.testing.assert_array_equal(lo, [1, 2])
    np.testing.assert_array_equal(hi, [0, 1, 0])
    assert lo.dtype == np.int64
