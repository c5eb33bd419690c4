"""tf.data transformations whose sizes are tensors, and from_generator with nested structures.

TF builds ``batch(n)``/``shuffle(n)``/``repeat(n)``/``range(n)``/``take``/``skip`` with the
argument as an op input, read when the iterator starts; expected elements below are what
TensorFlow 2.21 (``tf.compat.v1`` after ``disable_v2_behavior()``) printed for the same code.
"""
import numpy as np
import pytest

import aicslib as aics
import aicslib.compat.v1 as tf


@pytest.fixture
def tf1():
    tf.disable_v2_behavior()
    tf.reset_default_graph()
    yield
    tf.enable_v2_behavior()


def drain(sess, nxt, limit=100):
    out = []
    try:
        for _ in range(limit):
            out.append(sess.run(nxt))
    except tf.errors.OutOfRangeError:
        pass
    return out


def test_batch_size_from_a_placeholder_is_read_at_initialization(tf1):
    bs = tf.placeholder(tf.int64, [])
    it = tf.data.make_initializable_iterator(tf.data.Dataset.range(10).batch(bs))
    nxt = it.get_next()
    assert nxt.shape.as_list() == [None]
    with tf.Session() as sess:
        sess.run(it.initializer, {bs: 3})
        # TF 2.21: [0 1 2], [3 4 5], then [6 7 8], [9]
        assert [b.tolist() for b in drain(sess, nxt)] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
        sess.run(it.initializer, {bs: 4})
        assert [b.tolist() for b in drain(sess, nxt)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater than zero"):
            sess.run(it.initializer, {bs: 0})


def test_repeat_take_skip_and_shuffle_with_fed_counts(tf1):
    n, k, buf = tf.placeholder(tf.int64, []), tf.placeholder(tf.int64, []), tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.range(4).repeat(n).skip(k).take(5)
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    shuffled = tf.data.Dataset.range(5).shuffle(buf, seed=1).make_initializable_iterator()
    with tf.Session() as sess:
        sess.run(it.initializer, {n: 2, k: 1})
        assert drain(sess, nxt) == [1, 2, 3, 0, 1]
        sess.run(it.initializer, {n: -1, k: 6})  # -1 repeats forever, as None
        assert drain(sess, nxt) == [2, 3, 0, 1, 2]
        sess.run(shuffled.initializer, {buf: 1})  # a buffer of one keeps the order (TF 2.21 too)
        assert drain(sess, shuffled.get_next()) == [0, 1, 2, 3, 4]
    assert len(ds.captured_tensors()) == 2


def test_one_shot_iterator_evaluates_computed_arguments(tf1):
    stop = tf.cast(tf.constant(5.0) * 1.0, tf.int64)  # not a constant: computed when the iterator starts
    nxt = tf.data.make_one_shot_iterator(tf.data.Dataset.range(stop).batch(tf.constant(2, tf.int64))).get_next()
    with tf.Session() as sess:
        assert [b.tolist() for b in drain(sess, nxt)] == [[0, 1], [2, 3], [4]]
    bs = tf.placeholder(tf.int64, [])
    with pytest.raises(ValueError, match="Cannot capture a placeholder .* by value"):
        tf.data.make_one_shot_iterator(tf.data.Dataset.range(3).batch(bs))


def test_argument_errors_name_the_argument(tf1):
    with pytest.raises(TypeError, match="batch_size must be an integer tensor"):
        tf.data.Dataset.range(3).batch(tf.placeholder(tf.float32, []))
    with pytest.raises(ValueError, match="count must be a scalar"):
        tf.data.Dataset.range(3).repeat(tf.placeholder(tf.int64, [2]))
    with pytest.raises(ValueError, match="Batch size must be greater than zero"):
        tf.data.Dataset.range(3).batch(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="step must be a non-zero integer"):
        tf.data.Dataset.range(0, 3, 0)


def test_eager_tensor_arguments():
    ds = aics.data.Dataset.range(aics.constant(7, aics.int64)).batch(aics.constant(3, aics.int64))
    assert [b.numpy().tolist() for b in ds] == [[0, 1, 2], [3, 4, 5], [6]]
    ds = aics.data.Dataset.range(1, 8, 3).repeat(aics.constant(2)).take(np.int64(5))
    assert [int(v) for v in ds] == [1, 4, 7, 1, 4]


def pairs():
    for i in range(2):
        yield np.full([2], i, np.float32), i


def records():
    for i in range(2):
        yield {"x": np.full([2, 3], i, np.float32), "y": [i, i]}


def test_from_generator_nested_types_and_shapes(tf1):
    ds = tf.data.Dataset.from_generator(pairs, (tf.float32, tf.int32), ((2,), ()))
    # TF 2.21: (TensorShape([Dimension(2)]), TensorShape([]))
    assert repr(ds.output_shapes) == "(TensorShape([Dimension(2)]), TensorShape([]))"
    assert [s.as_list() for s in ds.batch(2).output_shapes] == [[None, 2], [None]]
    ds2 = tf.data.Dataset.from_generator(records, {"x": tf.float32, "y": tf.int64},
                                         {"x": (2, 3), "y": [None]})
    assert ds2.output_shapes["x"].as_list() == [2, 3] and ds2.output_shapes["y"].as_list() == [None]
    a, b = tf.data.make_one_shot_iterator(ds).get_next()
    rec = tf.data.make_one_shot_iterator(ds2).get_next()
    with tf.Session() as sess:
        got = [sess.run([a, b]) for _ in range(2)]
        first = sess.run(rec)
    assert [(x.tolist(), int(y)) for x, y in got] == [([0.0, 0.0], 0), ([1.0, 1.0], 1)]
    assert first["x"].shape == (2, 3) and first["y"].tolist() == [0, 0] and first["y"].dtype == np.int64
    with pytest.raises(ValueError, match="must have the same structure as output_types"):
        tf.data.Dataset.from_generator(pairs, (tf.float32, tf.int32), ((2,),))
