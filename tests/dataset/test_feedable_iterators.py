"""Feedable iterators (TF1's ``Iterator.from_string_handle`` + ``iterator.string_handle()``):
one ``get_next()`` reads from the training or the validation iterator, as a fed string picks.
Run as TF1 programs run on aicslib (``import aicslib.compat.v1 as tf; tf.disable_v2_behavior()``);
expected values and error texts are TensorFlow 2.21's for the same programs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib.compat.v1 as tf
from aicslib.framework.errors import InvalidArgumentError, NotFoundError, OutOfRangeError


@pytest.fixture(autouse=True, scope="module")
def _tf1_behavior():
    tf.disable_v2_behavior()
    yield
    tf.enable_v2_behavior()


def test_train_validation_switching_as_in_the_tf1_guide(graph):
    # TF's "Feedable iterator" example: the training iterator keeps its place while the
    # validation iterator is re-initialized and read in between.
    training_dataset = tf.data.Dataset.range(100).map(lambda x: x * 10).repeat()
    validation_dataset = tf.data.Dataset.range(5)
    handle = tf.placeholder(tf.string, shape=[])
    iterator = tf.data.Iterator.from_string_handle(handle, tf.data.get_output_types(training_dataset),
                                                   tf.data.get_output_shapes(training_dataset))
    next_element = iterator.get_next()
    assert next_element.dtype == tf.int64 and iterator.output_types == tf.int64
    training_iterator = tf.data.make_one_shot_iterator(training_dataset)
    validation_iterator = tf.data.make_initializable_iterator(validation_dataset)
    assert training_iterator.string_handle().op.type == "IteratorToStringHandle"
    assert training_iterator.string_handle().dtype == tf.string
    assert iterator.get_next().op.inputs[0].op.type == "IteratorFromStringHandleV2"
    with tf.Session() as sess:
        training_handle = sess.run(training_iterator.string_handle())
        validation_handle = sess.run(validation_iterator.string_handle())
        assert isinstance(training_handle, bytes) and training_handle != validation_handle
        seen_train, seen_valid = [], []
        for _ in range(3):
            for _ in range(4):
                seen_train.append(int(sess.run(next_element, {handle: training_handle})))
            sess.run(validation_iterator.initializer)
            while True:
                try:
                    seen_valid.append(int(sess.run(next_element, {handle: validation_handle})))
                except OutOfRangeError:
                    break
    assert seen_train == [10 * i for i in range(12)]
    assert seen_valid == [0, 1, 2, 3, 4] * 3


@settings(max_examples=8, deadline=None)
@given(n_train=st.integers(1, 12), n_valid=st.integers(1, 6), batch=st.integers(1, 4),
       schedule=st.lists(st.booleans(), min_size=1, max_size=10))
def test_feedable_iterator_follows_each_iterator_independently(n_train, n_valid, batch, schedule):
    with tf.Graph().as_default():
        _follow_schedule(n_train, n_valid, batch, schedule)


def _follow_schedule(n_train, n_valid, batch, schedule):
    # (features, labels) tuples in batches of unknown size: whatever order the feed picks, each
    # iterator yields its own elements in order (a plain Python model of two independent cursors).
    xs = np.arange(n_train * 2, dtype=np.float32).reshape(n_train, 2)
    ys = np.arange(n_train, dtype=np.int32)
    train = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(batch)
    valid = tf.data.Dataset.from_tensor_slices((-xs[:n_valid], -ys[:n_valid])).batch(batch)
    handle = tf.placeholder(tf.string, shape=[])
    it = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes)
    feat, lab = it.get_next()
    assert feat.shape.as_list() == [None, 2]
    train_it = train.make_one_shot_iterator()
    valid_it = valid.make_initializable_iterator()
    cursors = {True: 0, False: 0}
    sizes = {True: n_train, False: min(n_valid, n_train)}
    with tf.Session() as sess:
        sess.run(valid_it.initializer)
        handles = {True: sess.run(train_it.string_handle()), False: sess.run(valid_it.string_handle())}
        for use_train in schedule:
            start = cursors[use_train]
            if start >= sizes[use_train]:
                with pytest.raises(OutOfRangeError):
                    sess.run([feat, lab], {handle: handles[use_train]})
                continue
            f, y = sess.run([feat, lab], {handle: handles[use_train]})
            stop = min(start + batch, sizes[use_train])
            sign = 1 if use_train else -1
            np.testing.assert_array_equal(f, sign * xs[start:stop])
            np.testing.assert_array_equal(y, sign * ys[start:stop])
            cursors[use_train] = stop


def test_training_with_a_feedable_iterator_matches_numpy(graph):
    # A TF1 training loop: SGD on the training batches, loss on the validation set in between.
    rng = np.random.default_rng(0)
    x_train = rng.standard_normal((32, 3)).astype(np.float32)
    y_train = (x_train @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    x_valid, y_valid = x_train[:8] * 0.5, y_train[:8]
    train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(8).repeat()
    valid = tf.data.Dataset.from_tensor_slices((x_valid, y_valid)).batch(8)
    handle = tf.placeholder(tf.string, shape=[])
    x, y = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes).get_next()
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    train_it, valid_it = train.make_one_shot_iterator(), valid.make_initializable_iterator()
    w_np, b_np = np.zeros((3, 1), np.float64), np.zeros(1, np.float64)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        th, vh = sess.run([train_it.string_handle(), valid_it.string_handle()])
        for k in range(8):
            sess.run(step, {handle: th})
            xb, yb = x_train[(k % 4) * 8:(k % 4) * 8 + 8], y_train[(k % 4) * 8:(k % 4) * 8 + 8]
            err = xb @ w_np + b_np - yb
            w_np -= 0.1 * 2 * xb.T @ err / err.size
            b_np -= 0.1 * 2 * err.sum(0) / err.size
            sess.run(valid_it.initializer)
            v = sess.run(loss, {handle: vh})
            np.testing.assert_allclose(v, np.mean((x_valid @ w_np + b_np - y_valid) ** 2), rtol=1e-4)


def test_bad_handles_give_tensorflows_errors(graph):
    ints = tf.data.Dataset.range(3)
    floats = tf.data.Dataset.from_tensors(tf.constant([1.0]))
    handle = tf.placeholder(tf.string, shape=[])
    nxt = tf.data.Iterator.from_string_handle(handle, ints.output_types, ints.output_shapes).get_next()
    float_it = floats.make_one_shot_iterator()
    int_it = ints.make_one_shot_iterator()
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="Could not parse string_handle as a valid ResourceHandle"):
            sess.run(nxt, {handle: b"garbage"})
        with pytest.raises(InvalidArgumentError, match="Data type mismatch at component 0: expected int64 but "
                                                       "got float"):
            sess.run(nxt, {handle: sess.run(float_it.string_handle())})
        int_handle = sess.run(int_it.string_handle())
        assert int(sess.run(nxt, {handle: int_handle})) == 0
    with tf.Session() as other:  # an iterator lives in the session that made it
        with pytest.raises(NotFoundError, match="does not exist"):
            other.run(nxt, {handle: int_handle})
    with pytest.raises(ValueError, match="scalar"):
        tf.data.Iterator.from_string_handle(tf.placeholder(tf.string, [2]), tf.int64)


def test_shape_mismatch_is_reported(graph):
    vectors = tf.data.Dataset.from_tensors(np.zeros(3, np.float32))
    handle = tf.placeholder(tf.string, shape=[])
    nxt = tf.data.Iterator.from_string_handle(handle, tf.float32, tf.TensorShape([2])).get_next()
    with tf.Session() as sess:
        h = sess.run(vectors.make_one_shot_iterator().string_handle())
        with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes at component 0: expected \[2\] but "
                                                       r"got \[3\]"):
            sess.run(nxt, {handle: h})


def test_eager_execution_refuses_string_handles():
    tf.enable_v2_behavior()
    try:
        with pytest.raises(RuntimeError, match="graph mode"):
            tf.data.Iterator.from_string_handle("x", tf.int64)
    finally:
        tf.disable_v2_behavior()
