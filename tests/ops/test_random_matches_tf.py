"""Seeded random numbers are TensorFlow's: the same Philox generator, distributions and seed rules.

Every expected array below was printed by TensorFlow 2.21 (CPU) for the same call, in a fresh
process (an op without its own seed gets one from the global seed, so the order of calls
matters as it does in TF). Floats agree to the last bit or two: the Box-Muller step uses
log/sin/cos, whose last bit differs between glibc (TF) and NumPy.
"""
import numpy as np
import pytest

import aicslib as tf
import aicslib.compat.v1 as tf1
from aicslib.kernels import philox_random


@pytest.fixture(autouse=True)
def fresh_streams():
    tf.random.set_seed(None)  # forget streams and the global seed, as a fresh TF process
    yield
    tf.random.set_seed(None)


def close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=3e-7, atol=1e-7)


def test_uniform_with_an_op_seed_and_its_continuation():
    close(tf.random.uniform([10], seed=22), [0.28583145, 0.87740326, 0.9378531, 0.96767807, 0.08326423,
                                             0.3949169, 0.54725015, 0.27253842, 0.27685797, 0.74979913])
    # the same op and seeds again: TF's cached kernel continues its stream
    close(tf.random.uniform([10], seed=22), [0.43394542, 0.3694563, 0.7155199, 0.7178862, 0.59545696,
                                             0.4662695, 0.47669077, 0.22862363, 0.23004901, 0.35564935])


def test_normal_and_truncated_normal():
    close(tf.random.normal([7], seed=5), [-1.1780828, -0.7099414, -1.748158, -0.49537227, 0.24303888,
                                          -0.12631302, -0.6639287])
    close(tf.random.truncated_normal([9], seed=7), [-0.04694568, -1.2039024, 1.1668352, 1.1706204,
                                                    0.7166261, 0.5711335, -0.9265398, -0.10458973,
                                                    -1.1940084])


def test_other_dtypes():
    close(tf.random.uniform([5], seed=3, dtype=tf.float64),
          [0.0954352, 0.81503702, 0.03041028, 0.67459111, 0.39521136])
    close(tf.random.normal([5], seed=3, dtype=tf.float64),
          [-1.98915126, 0.86133197, -2.3519239, -1.20598623, -1.36111682])
    close(tf.random.truncated_normal([5], seed=3, dtype=tf.float64),
          [-1.98915126, 0.86133197, 0.50015425, 0.22716357, -1.53631728])
    half = tf.random.uniform([6], seed=3, dtype=tf.float16)
    assert half.dtype == tf.float16
    close(half.numpy().astype(np.float32), [0.72558594, 0.33496094, 0.59765625, 0.7421875, 0.13964844,
                                            0.84765625])
    assert tf.random.uniform([6], 0, 100, seed=3, dtype=tf.int32).numpy().tolist() == [67, 83, 0, 0, 27, 56]
    assert tf.random.uniform([6], -5, 1000000, seed=3, dtype=tf.int64).numpy().tolist() == [
        649345, 899155, 369308, 566413, 471097, 397749]
    assert tf.random.shuffle(tf.range(10), seed=4).numpy().tolist() == [5, 6, 8, 3, 9, 2, 4, 1, 7, 0]


def test_global_seed_draws_op_seeds_as_tf():
    tf.random.set_seed(1234)
    close(tf.random.uniform([4]), [0.5380393, 0.36461866, 0.5816301, 0.24382842])
    close(tf.random.normal([4]), [1.1468066, 0.96459925, 0.87830144, -0.31010222])
    close(tf.random.normal([300], seed=9).numpy()[-4:], [-1.0980097, -0.18417765, 0.3515687, 1.055648])
    close(tf.random.truncated_normal([1001], seed=9).numpy()[-4:],
          [-0.5831244, -0.593503, 0.7751254, -0.07710081])


def test_tf1_initializers_with_seeds():
    tf1.disable_v2_behavior()
    try:
        with tf1.Graph().as_default():
            a = tf1.get_variable("a", [3, 2], initializer=tf1.glorot_uniform_initializer(seed=3))
            b = tf1.get_variable("b", [2, 2], initializer=tf1.truncated_normal_initializer(stddev=0.1, seed=5))
            e = tf1.get_variable("e", [3, 3], initializer=tf1.orthogonal_initializer(seed=8))
            f = tf1.get_variable("f", [2, 3], initializer=tf1.random_uniform_initializer(-1, 1, seed=9))
            w = tf1.Variable(tf1.random_normal([2, 2], seed=3))
            with tf1.Session() as sess:
                sess.run(tf1.global_variables_initializer())
                va, vb, ve, vf, vw = sess.run([a, b, e, f, w])
    finally:
        tf1.enable_v2_behavior()
    # TF 2.21 printed these rounded to 5 decimals
    np.testing.assert_allclose(va, [[-0.24773, -0.30667], [1.04479, -0.9059], [0.00833, -0.31001]], atol=6e-6)
    np.testing.assert_allclose(vb, [[-0.11781, -0.07099], [-0.17482, -0.04954]], atol=6e-6)
    np.testing.assert_allclose(ve, [[-0.61198, 0.23183, 0.75613], [-0.35485, 0.77394, -0.52449],
                                    [0.7068, 0.58929, 0.39137]], atol=1e-5)  # QR in LAPACK vs Eigen
    np.testing.assert_allclose(vf, [[-0.09019, -0.37205, -0.9073], [-0.05739, -0.75735, 0.42424]], atol=6e-6)
    np.testing.assert_allclose(vw, [[1.06166, -0.87858], [0.11187, 0.18512]], atol=6e-6)
    np.testing.assert_allclose(ve @ ve.T, np.eye(3), atol=1e-6)


def test_philox_known_answer():
    """Philox4x32-10's published test vector (Salmon et al. 2011, Random123 kat_vectors):
    counter 0, key 0 gives 6627e8d5 e169c58d bc57ac4c 9b00dbd8."""
    out = philox_random.philox((0, 0), 0, 1)[0]
    assert [f"{v:08x}" for v in out] == ["6627e8d5", "e169c58d", "bc57ac4c", "9b00dbd8"]


def test_unseeded_draws_differ():
    a, b = tf.random.uniform([8]).numpy(), tf.random.uniform([8]).numpy()
    assert not np.array_equal(a, b)
