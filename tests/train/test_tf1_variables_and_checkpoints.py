"""Variables created after the initializer was built, ``report_uninitialized_variables``,
``boolean_mask``, TF 1.15's top-level names, and where checkpoints may be written.

Expected results are TensorFlow 2.21's (``tf.compat.v1`` after ``disable_v2_behavior()``),
quoted where used, or NumPy's.
"""
import os

import numpy as np
import pytest

import aicslib as aics
import aicslib.compat.v1 as tf


@pytest.fixture
def tf1():
    tf.disable_v2_behavior()
    yield
    tf.enable_v2_behavior()


def test_variable_made_after_the_initializer_is_reported_until_initialized(tf1):
    v1 = tf.Variable(1.0, name="v1")
    init = tf.global_variables_initializer()
    v2 = tf.Variable(2.0, name="v2")
    with tf.Session() as sess:
        sess.run(init)
        # TF 2.21: array([b'v2'], dtype=object), False, then array([], dtype=object)
        assert sess.run(tf.report_uninitialized_variables()).tolist() == [b"v2"]
        assert not sess.run(tf.is_variable_initialized(v2)) and sess.run(tf.is_variable_initialized(v1))
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value v2"):
            sess.run(v2)
        sess.run(tf.variables_initializer([v2]))
        assert sess.run(tf.report_uninitialized_variables()).tolist() == []
        assert sess.run(v2) == 2.0


def test_report_on_a_var_list_and_with_no_variables(tf1):
    a, b = tf.Variable(0.0, name="a"), tf.Variable(0.0, name="scope_b")
    with tf.Session() as sess:
        sess.run(b.initializer)
        assert sess.run(tf.report_uninitialized_variables([a, b])).tolist() == [b"a"]
        assert sess.run(tf.report_uninitialized_variables([b])).tolist() == []
    with tf.Graph().as_default():
        empty = tf.report_uninitialized_variables()
        assert empty.dtype == tf.string and empty.shape.as_list() == [0]


def test_boolean_mask_rows_elements_and_gradient():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = np.array([True, False, True])
    np.testing.assert_array_equal(aics.boolean_mask(x, rows).numpy(), x[rows])
    m2 = x % 3 == 0
    np.testing.assert_array_equal(aics.boolean_mask(x, m2).numpy(), x[m2])
    np.testing.assert_array_equal(aics.boolean_mask(x, [True, False, False, True], axis=1).numpy(),
                                  x[:, [0, 3]])
    v = aics.Variable(x)
    with aics.GradientTape() as tape:
        y = aics.reduce_sum(aics.boolean_mask(v, rows) * 2.0)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), np.where(rows[:, None], 2.0, 0.0) + 0 * x)
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        aics.boolean_mask(x, True)


def test_tf115_top_level_names_with_plain_import(tf1):
    """TF 1.15 programs written against `import tensorflow as tf` run with `import aicslib as tf`."""
    with aics.variable_scope("layer1"):
        w = aics.get_variable("w", [2, 3], initializer=aics.ones_initializer())
    with aics.variable_scope("layer1", reuse=True):
        assert aics.get_variable("w") is w
    x = aics.placeholder(aics.float32, [None, 2])
    h = aics.layers.dense(x, 4, name="dense")
    assert w.name == "layer1/w:0" and h.shape.as_list() == [None, 4]
    assert repr(x.shape[0]) == "Dimension(None)"
    assert aics.AUTO_REUSE is tf.AUTO_REUSE and aics.gfile.Exists is tf.gfile.Exists
    assert aics.reduce_sum is not tf.reduce_sum  # TF2's signature stays at the top level


def test_checkpoint_save_creates_missing_folders(tmp_path):
    v = aics.Variable(3.0)
    ckpt = aics.train.Checkpoint(v=v)
    path = ckpt.save(os.path.join(tmp_path, "new", "deeper", "prefix"))
    assert path == os.path.join(tmp_path, "new", "deeper", "prefix-1")  # TF 2.21 numbers from 1
    assert aics.train.latest_checkpoint(os.path.join(tmp_path, "new", "deeper")) == path
    written = ckpt.write(os.path.join(tmp_path, "other", "exact"))
    v.assign(0.0)
    ckpt.restore(written)
    assert v.numpy() == 3.0
    manager = aics.train.CheckpointManager(ckpt, os.path.join(tmp_path, "m", "n"), max_to_keep=2)
    assert manager.save() == os.path.join(tmp_path, "m", "n", "ckpt-2")  # TF 2.21: ckpt-2


def test_saver_numbers_by_global_step_and_needs_the_folder(tf1, tmp_path):
    v = tf.Variable(1.0, name="v")
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        p = saver.save(sess, os.path.join(tmp_path, "model.ckpt"), global_step=1000)
        assert p == os.path.join(tmp_path, "model.ckpt-1000")
        sess.run(step.assign(7))
        assert saver.save(sess, os.path.join(tmp_path, "model.ckpt"), global_step=step).endswith("-7")
        missing = os.path.join(tmp_path, "no", "model.ckpt")
        # TF 2.21: "Parent directory of .../no/model.ckpt doesn't exist, can't save."
        with pytest.raises(ValueError, match=r"Parent directory of .*no/model.ckpt doesn't exist"):
            saver.save(sess, missing, global_step=5)
    assert v.name == "v:0"
