"""TF1 shapes: ``shape[i]`` is a ``Dimension`` under ``disable_v2_behavior()``, an int (or None)
under TF2 behaviour. Expected reprs, values and errors are those TensorFlow 2.21 printed for the
same expressions with ``tf.compat.v1`` after ``disable_v2_behavior()``.
"""
import copy
import pickle

import numpy as np
import pytest

import aicslib as aics
import aicslib.compat.v1 as tf


@pytest.fixture
def tf1():
    tf.disable_v2_behavior()
    yield
    tf.enable_v2_behavior()


def placeholder():
    return tf.placeholder(tf.float32, [None, 3])


def test_indexing_and_iterating_give_dimensions(tf1):
    x = placeholder()
    assert repr(x.shape[0]) == "Dimension(None)" and x.shape[0].value is None
    assert repr(x.get_shape()[1]) == "Dimension(3)" and x.get_shape()[1].value == 3
    assert [repr(d) for d in x.shape] == ["Dimension(None)", "Dimension(3)"]
    assert isinstance(x.shape[0], tf.Dimension) and isinstance(x.shape[1], tf.Dimension)
    assert str(x.shape) == "(?, 3)" and repr(x.shape) == "TensorShape([Dimension(None), Dimension(3)])"
    assert repr(x.shape[1:]) == "TensorShape([Dimension(3)])"
    assert x.shape.as_list() == [None, 3]


def test_arithmetic_and_comparisons_as_tf(tf1):
    x = placeholder()
    d, unknown = x.shape[1], x.shape[0]
    assert [repr(v) for v in (d + 1, d - 1, 1 + d, d // 2, d % 2, d * 2, 2 * d)] == [
        "Dimension(4)", "Dimension(2)", "Dimension(4)", "Dimension(1)", "Dimension(1)",
        "Dimension(6)", "Dimension(6)"]
    assert repr(d * unknown) == "Dimension(None)" and repr(unknown + 1) == "Dimension(None)"
    assert (d == 3) is True and (d == unknown) is None and (unknown == None) is None  # noqa: E711
    assert bool(unknown) is False and (d < unknown) is None
    with pytest.raises(TypeError, match="please use // instead"):
        d / 2
    with pytest.raises(ValueError, match="Dimension -2 must be >= 0"):
        d - 5
    with pytest.raises(TypeError):
        int(unknown)
    assert d * 0.5 == 1.5  # a float is not a size: Python's float arithmetic, as TF


def test_known_dimensions_work_where_ints_do(tf1):
    x = placeholder()
    d = x.shape[1]
    assert np.zeros([d]).shape == (3,) and list(range(d)) == [0, 1, 2] and int(d) == 3
    assert tf.zeros([d, 2]).shape.as_list() == [3, 2]
    assert tf.reshape(x, [-1, d * 1]).shape.as_list() == [None, 3]
    with pytest.raises(TypeError):
        tf.reshape(x, [x.shape[0], 3])  # TF: "Failed to convert elements of [Dimension(None), 3]"
    assert pickle.loads(pickle.dumps(d)) == 3 and copy.copy(x.shape[0]).value is None
    assert tf.dimension_value(d) == 3 and tf.dimension_value(x.shape[0]) is None


def test_compatibility_and_merge():
    known, unknown = tf.Dimension(3), tf.Dimension(None)
    assert known.is_compatible_with(unknown) and known.is_compatible_with(3)
    assert not known.is_compatible_with(4)
    assert unknown.merge_with(3).value == 3 and known.merge_with(None).value == 3
    with pytest.raises(ValueError, match="not compatible"):
        known.merge_with(4)
    with pytest.raises(TypeError, match="Dimension value must be integer"):
        tf.Dimension(2.5)


def test_tf2_behaviour_gives_ints_and_none():
    with aics.Graph().as_default():
        x = aics.placeholder(aics.float32, [None, 3])
        assert x.shape[0] is None and type(x.shape[1]) is int
        assert list(x.shape) == [None, 3] and str(x.shape) == "(None, 3)"


def test_library_code_sees_ints_in_tf1_mode(tf1):
    """Shape and gradient functions run the same whichever shapes the program sees."""
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable(np.ones((4, 2), np.float32))
    logits = tf.matmul(x, w)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    (g,) = tf.gradients(loss, [w])
    assert g.shape.as_list() == [4, 2]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(g, {x: np.ones((5, 4), np.float32), y: np.tile([[1.0, 0.0]], (5, 1))})
    # equal logits, softmax 1/2 each: dL/dlogits = (p - y) / 5 = [-0.1, 0.1] per row; x is all ones
    np.testing.assert_allclose(got, np.tile([[-0.5, 0.5]], (4, 1)), rtol=1e-6)
