"""tf.train.MonitoredSession / MonitoredTrainingSession / SingularMonitoredSession and the basic
hooks, against TensorFlow 2.21's ``tf.compat.v1`` behaviour (log lines and checkpoint numbers
quoted from a TF run of the same program) and NumPy's linear regression."""
import logging
import os

import numpy as np
import pytest

import aicslib.compat.v1 as tf


@pytest.fixture(autouse=True)
def tf1():
    tf.disable_v2_behavior()
    tf.reset_default_graph()
    yield
    tf.enable_v2_behavior()


X = np.linspace(-1, 1, 20, dtype=np.float32).reshape(-1, 1)
Y = 3 * X + 1


def regression():
    x = tf.placeholder(tf.float32, [None, 1])
    y = tf.placeholder(tf.float32, [None, 1])
    w, b = tf.Variable([[0.0]], name="w"), tf.Variable([0.0], name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    gs = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return x, y, w, b, loss, gs, train


def numpy_regression(steps):
    w = b = 0.0
    for _ in range(steps):
        err = w * X + b - Y
        w, b = w - 0.1 * 2 * np.mean(err * X), b - 0.1 * 2 * np.mean(err)
    return w, b


def test_training_session_stops_logs_checkpoints_and_resumes(tmp_path, caplog):
    x, y, w, b, loss, gs, train = regression()
    hooks = [tf.train.StopAtStepHook(last_step=50),
             tf.train.LoggingTensorHook({"loss": loss, "step": gs}, every_n_iter=20)]
    runs = 0
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                               save_checkpoint_steps=20) as sess:
            while not sess.should_stop():
                sess.run(train, {x: X, y: Y})
                runs += 1
    assert runs == 50
    # TF 2.21 logged: "loss = 4.3157897, step = 1", then "loss = 0.15535349, step = 21 (... sec)"
    logged = [r.getMessage() for r in caplog.records]
    assert "loss = 4.3157897, step = 1" in logged
    assert any(m.startswith("loss = 0.15535349, step = 21 (") for m in logged)
    # TF 2.21 saved model.ckpt-0, -20, -40 and, at the end, -50
    saved = sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(tmp_path)
                   if f.startswith("model.ckpt-") and f.endswith(".npz"))
    assert saved == [0, 20, 40, 50]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-50")
    with tf.train.SingularMonitoredSession(checkpoint_dir=str(tmp_path)) as sess:
        assert sess.run(gs) == 50  # restored, not re-initialized
        want_w, want_b = numpy_regression(50)
        np.testing.assert_allclose(sess.run(w), [[want_w]], rtol=1e-5)  # TF 2.21: [[2.935]]
        np.testing.assert_allclose(sess.run(b), [want_b], rtol=1e-5)
        assert sess.raw_session().graph is tf.get_default_graph()


def test_num_steps_counts_from_the_step_at_creation(tmp_path):
    x, y, w, b, loss, gs, train = regression()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
        while not sess.should_stop():
            sess.run(train, {x: X, y: Y})
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           hooks=[tf.train.StopAtStepHook(num_steps=3)]) as sess:
        while not sess.should_stop():
            sess.run(train, {x: X, y: Y})
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
            sess.run(train, {x: X, y: Y})
    with tf.train.MonitoredSession(session_creator=tf.train.ChiefSessionCreator(
            checkpoint_dir=str(tmp_path))) as sess:
        assert sess.run(gs) == 8


def test_hook_argument_errors_as_tf():
    with pytest.raises(ValueError, match="One of num_steps or last_step must be specified"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step can be specified"):
        tf.train.StopAtStepHook(1, 2)
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook(["a"])
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook(["a"], every_n_iter=0)
    tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
        tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)])


class RecordingHook(tf.train.SessionRunHook):
    def __init__(self, fetch, feed):
        self.fetch, self.feed, self.calls, self.seen = fetch, feed, [], []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        self.calls.append("before_run")
        return tf.train.SessionRunArgs(self.fetch, feed_dict=self.feed)

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.seen.append(run_values.results)
        if len(self.seen) == 2:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")


def test_hooks_add_fetches_and_feeds_and_are_called_in_order():
    a = tf.placeholder(tf.float32, [])
    c = tf.placeholder(tf.float32, [])
    doubled, tripled = a * 2.0, c * 3.0
    hook = RecordingHook({"t": tripled}, {c: 5.0})
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert sess.run(doubled, {a: 1.0}) == 2.0  # the caller gets only its own fetches
        assert not sess.should_stop()
        assert sess.run(doubled, {a: 4.0}) == 8.0
        assert sess.should_stop()
    assert hook.seen == [{"t": 15.0}, {"t": 15.0}]
    assert hook.calls == ["begin", "after_create_session", "before_run", "after_run", "before_run",
                          "after_run", "end"]
    with tf.train.MonitoredSession(hooks=[RecordingHook(None, {a: 1.0})]) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(doubled, {a: 2.0})


def test_out_of_range_ends_the_loop_and_runs_end_hooks():
    data = tf.data.Dataset.from_tensor_slices(np.arange(5, dtype=np.float32)).batch(2)
    batch = tf.data.make_one_shot_iterator(data).get_next()
    total = tf.Variable(0.0)
    add = tf.assign_add(total, tf.reduce_sum(batch))
    final = tf.train.FinalOpsHook(total)
    seen = []
    with tf.train.MonitoredSession(hooks=[final]) as sess:
        while not sess.should_stop():
            seen.append(sess.run(add))
    assert seen == [1.0, 6.0, 10.0]  # then OutOfRangeError, swallowed as TF does
    assert final.final_ops_values == 10.0


def test_nan_tensor_hook_and_run_step_fn():
    v = tf.Variable(1.0)
    loss = v * float("nan")
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss, fail_on_nan_loss=False)]) as sess:
        sess.run(loss)
        assert sess.should_stop()
    with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
            sess.run(loss)

    def step_fn(step_context):
        value = step_context.run_with_hooks(v)
        step_context.request_stop()
        return value

    with tf.train.MonitoredSession() as sess:
        assert sess.run_step_fn(step_fn) == 1.0 and sess.should_stop()


def test_scaffold_init_fn_and_not_ready_error():
    v = tf.Variable(2.0, name="v")
    u = tf.Variable(5.0, name="u")
    scaffold = tf.train.Scaffold(init_op=tf.variables_initializer([v]),
                                 init_fn=lambda scaffold, sess: sess.run(u.initializer))
    with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
        assert sess.run(u) == 5.0
    tf.reset_default_graph()
    v = tf.Variable(2.0, name="v")
    tf.Variable(5.0, name="u")
    scaffold = tf.train.Scaffold(init_op=tf.variables_initializer([v]))
    with pytest.raises(RuntimeError, match="Init operations did not make model ready.*Variables not "
                                           "initialized: u"):
        tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold))


def test_summaries_are_written_by_the_training_session(tmp_path):
    x, y, w, b, loss, gs, train = regression()
    tf.summary.scalar("loss", loss)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=2,
                                           hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
        while not sess.should_stop():
            sess.run(train, {x: X, y: Y})
    events = [f for f in os.listdir(tmp_path) if f.startswith("events.out.tfevents")]
    assert len(events) == 1
    steps = [ev.step for ev in tf.train.summary_iterator(os.path.join(tmp_path, events[0]))
             if ev.HasField("summary") and any(v.tag == "loss" for v in ev.summary.value)]
    assert steps == [1, 3, 5]  # TF 2.21 wrote the loss at steps 1, 3, 5 (the step after the run)
