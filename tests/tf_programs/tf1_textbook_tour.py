"""TF1 as textbooks of the TF 1.x era write it: version and device checks, static shapes read as
``Dimension``s, ``reduction_indices``/``keep_dims``, ``argmax(dimension=)``, ``max_pool(value=)``,
``resize_images`` with method ints, ``total_variation``, and ``tf.gfile`` for the output folder.
Every number is checked against NumPy."""
import os
import tempfile

import numpy as np

import aicslib.compat.v1 as tf


def main():
    tf.disable_v2_behavior()
    print("TensorFlow version:", tf.__version__)
    device = "/gpu:0" if tf.test.is_gpu_available() else "/cpu:0"
    assert device == "/cpu:0" and not tf.test.is_built_with_cuda()

    rng = np.random.RandomState(0)
    batch = rng.rand(3, 8, 8, 2).astype(np.float32)
    images = tf.placeholder(tf.float32, [None, 8, 8, 2], name="images")
    height, width, channels = [images.get_shape()[i].value for i in (1, 2, 3)]
    assert images.shape[0].value is None and str(images.shape) == "(?, 8, 8, 2)"
    flat_size = images.get_shape()[1] * images.get_shape()[2] * channels  # Dimension arithmetic
    flat = tf.reshape(images, [-1, flat_size.value])

    with tf.device(device):
        pooled = tf.nn.max_pool(value=images, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
        channel_mean = tf.reduce_mean(images, reduction_indices=[1, 2], keep_dims=True)
        row_sum = tf.reduce_sum(flat, reduction_indices=1)
        best = tf.argmax(flat, dimension=1)
        nonzero = tf.count_nonzero(tf.cast(flat > 0.5, tf.float32), reduction_indices=1)
        small = tf.image.resize_images(images, [height // 2, width // 2], method=tf.image.ResizeMethod.AREA)
        near = tf.image.resize_images(images, [4, 4], method=1)
        variation = tf.image.total_variation(images)

    with tf.Session() as sess:
        out = sess.run({"pooled": pooled, "mean": channel_mean, "rows": row_sum, "best": best,
                        "nonzero": nonzero, "small": small, "near": near, "tv": variation},
                       feed_dict={images: batch})

    b = batch.astype(np.float64)
    quads = b.reshape(3, 4, 2, 4, 2, 2)
    np.testing.assert_allclose(out["pooled"], quads.max(axis=(2, 4)), rtol=1e-6)
    np.testing.assert_allclose(out["small"], quads.mean(axis=(2, 4)), rtol=1e-5)  # AREA, 2x down
    np.testing.assert_allclose(out["near"], b[:, ::2, ::2, :], rtol=1e-6)        # legacy nearest
    np.testing.assert_allclose(out["mean"], b.mean(axis=(1, 2), keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(out["rows"], b.reshape(3, -1).sum(1), rtol=1e-5)
    np.testing.assert_array_equal(out["best"], b.reshape(3, -1).argmax(1))
    np.testing.assert_array_equal(out["nonzero"], (b.reshape(3, -1) > 0.5).sum(1))
    tv = np.abs(np.diff(b, axis=1)).sum(axis=(1, 2, 3)) + np.abs(np.diff(b, axis=2)).sum(axis=(1, 2, 3))
    np.testing.assert_allclose(out["tv"], tv, rtol=1e-5)

    log_dir = os.path.join(tempfile.mkdtemp(), "logs", "run1")
    if not tf.gfile.Exists(log_dir):
        tf.gfile.MakeDirs(log_dir)
    with tf.gfile.GFile(os.path.join(log_dir, "summary.txt"), "w") as f:
        f.write("mean %.6f\n" % float(out["mean"].mean()))
    assert tf.gfile.Glob(os.path.join(log_dir, "*.txt")) == [os.path.join(log_dir, "summary.txt")]
    tf.gfile.DeleteRecursively(os.path.dirname(os.path.dirname(log_dir)))
    assert not tf.gfile.Exists(log_dir)
    return {"pooled_sum": float(out["pooled"].sum()), "total_variation": out["tv"].tolist()}


if __name__ == "__main__":
    print(main())
