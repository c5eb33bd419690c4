"""TensorBoard event files: written by aics.summary (TF2) and compat.v1.summary + FileWriter (TF1),
read back by TensorBoard's own loader (EventAccumulator) and its CRC32C."""
import glob
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.compat.proto import graph_pb2

import aicslib as aics
import aicslib.compat.v1 as tf1
from aicslib.summary import record_writer, v1


def _load(logdir):
    acc = event_accumulator.EventAccumulator(str(logdir), size_guidance={"scalars": 0, "histograms": 0,
                                                                           "images": 0, "tensors": 0})
    acc.Reload()
    return acc


@settings(max_examples=30, deadline=None)
@given(data=st.binary(max_size=300))
def test_masked_crc32c_matches_tensorboards(data):
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
    assert record_writer.masked_crc32c(data) == masked_crc32c(data)


def test_crc32c_check_value():
    assert record_writer.crc32c(b"123456789") == 0xE3069283  # the CRC-32C catalogue's check value


def test_tf2_scalars_histogram_image_text(tmp_path):
    writer = aics.summary.create_file_writer(str(tmp_path))
    losses = [1.0 / (s + 1) for s in range(5)]
    values = np.random.default_rng(0).normal(size=1000)
    with writer.as_default():
        for step, loss in enumerate(losses):
            assert aics.summary.scalar("loss", aics.constant(loss), step=step)
        aics.summary.histogram("weights", values, step=0)
        aics.summary.image("digit", np.linspace(0, 1, 2 * 4 * 5 * 1).reshape(2, 4, 5, 1), step=0, max_outputs=2)
        aics.summary.text("note", "hello TensorBoard", step=0)
    writer.close()
    acc = _load(tmp_path)
    got = acc.Scalars("loss")
    assert [e.step for e in got] == list(range(5))
    np.testing.assert_allclose([e.value for e in got], losses, rtol=1e-6)
    h = acc.Histograms("weights")[0].histogram_value
    assert h.num == 1000 and h.min == pytest.approx(values.min()) and h.max == pytest.approx(values.max())
    assert h.sum == pytest.approx(values.sum()) and sum(h.bucket) == 1000
    limits = np.asarray(h.bucket_limit)
    for lo, hi, count in zip(np.r_[-np.inf, limits[:-1]], limits, h.bucket):  # brute-force the counts
        assert count == np.sum((values >= lo) & (values < hi))
    imgs = acc.Images("digit/image/0") + acc.Images("digit/image/1")
    assert [(i.width, i.height) for i in imgs] == [(5, 4), (5, 4)]
    from PIL import Image
    import io
    px = np.asarray(Image.open(io.BytesIO(imgs[1].encoded_image_string)))
    want = np.round(np.linspace(0, 1, 40).reshape(2, 4, 5)[1] * 255).astype(np.uint8)
    np.testing.assert_array_equal(px, want)
    assert acc.Tensors("note")[0].tensor_proto.string_val == [b"hello TensorBoard"]


def test_no_default_writer_and_record_if(tmp_path):
    assert aics.summary.scalar("x", 1.0, step=0) is False
    writer = aics.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=3):
        with aics.summary.record_if(False):
            assert aics.summary.scalar("skipped", 1.0) is False
        assert aics.summary.scalar("kept", 2.0)  # the step given to as_default
    writer.close()
    acc = _load(tmp_path)
    assert acc.Tags()["scalars"] == ["kept"] and acc.Scalars("kept")[0].step == 3
    with pytest.raises(ValueError, match="No step set"):
        with aics.summary.create_noop_writer().as_default():
            aics.summary.scalar("y", 1.0)  # a no-op writer records nothing, so no step needed
        with aics.summary.create_file_writer(str(tmp_path / "b")).as_default():
            aics.summary.scalar("y", 1.0)


def test_tf1_summary_ops_merge_all_and_file_writer_with_graph(tmp_path):
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [None], name="inputs")
        loss = aics.reduce_mean(aics.square(x), name="mse")
        v1.scalar("loss", loss)
        v1.histogram("x", x)
        merged = v1.merge_all()
        assert merged is not None and merged.dtype == aics.string
        with aics.Session() as sess:
            writer = v1.FileWriter(str(tmp_path), sess.graph)
            for step in range(3):
                xv = np.arange(4, dtype=np.float32) * (step + 1)
                s = sess.run(merged, {x: xv})
                assert isinstance(s, bytes)
                writer.add_summary(s, global_step=step)
            writer.close()
    acc = _load(tmp_path)
    np.testing.assert_allclose([e.value for e in acc.Scalars("loss")],
                               [np.mean((np.arange(4) * (k + 1)) ** 2) for k in range(3)])
    assert [e.step for e in acc.Histograms("x")] == [0, 1, 2]
    gd = acc.Graph()
    assert isinstance(gd, graph_pb2.GraphDef)
    nodes = {n.name: n.op for n in gd.node}
    assert nodes["inputs"] == "Placeholder" and nodes["mse"] == "Mean" and nodes["Square"] == "Square"
    events = list(v1.summary_iterator(glob.glob(os.path.join(tmp_path, "events.out.tfevents.*"))[0]))
    assert events[0].file_version == "brain.Event:2"


def test_merge_rejects_duplicate_tags():
    with aics.Graph().as_default():
        a = v1.scalar("same", aics.constant(1.0), collections=[])
        b = v1.scalar("same_1", aics.constant(2.0), collections=[])
        dup = v1.merge([a, a])
        with aics.Session() as sess:
            assert len(sess.run(v1.merge([a, b]))) > 0
            with pytest.raises(aics.errors.InvalidArgumentError, match="Duplicate tag"):
                sess.run(dup)


def test_graph_with_a_loop_goes_to_tensorboard(tmp_path):
    g = aics.Graph()
    with g.as_default():
        aics.while_loop(lambda i: i < 10, lambda i: i + 1, [aics.constant(0)])
    w = aics.summary.create_file_writer(str(tmp_path))
    with w.as_default():
        assert aics.summary.graph(g)
    w.close()
    ops = {n.op for n in _load(tmp_path).Graph().node}
    assert {"Enter", "Merge", "Switch", "NextIteration", "Exit", "LoopCond"} <= ops


def test_tf2_summaries_inside_aics_function_write_at_every_call(tmp_path):
    writer = aics.summary.create_file_writer(str(tmp_path))
    w = aics.Variable(2.0)

    @aics.function
    def step_fn(x, step):
        loss = aics.square(x * w)
        aics.summary.scalar("loss", loss, step=step)
        aics.summary.histogram("x", aics.stack([x, -x]), step=step)
        return loss

    with writer.as_default():
        for s in range(4):
            step_fn(aics.constant(float(s)), aics.constant(s, dtype=aics.int64))
    writer.close()
    assert step_fn.experimental_get_tracing_count() == 1  # traced once, written four times
    acc = _load(tmp_path)
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(s, (2.0 * s) ** 2) for s in range(4)]
    assert [h.histogram_value.num for h in acc.Histograms("x")] == [2, 2, 2, 2]


def test_summary_name_with_colon_is_cleaned_like_tensorflow(graph_mode, tmp_path):
    # tf1.summary.histogram(var.name, var) in TensorFlow-Examples' tensorboard_advanced.py:
    # TF logs "Summary name W1:0 is illegal; using W1_0 instead." and goes on.
    w = tf1.Variable(tf1.ones([3]), name="W1")
    op = tf1.summary.histogram(w.name, w)
    assert op.op.name.startswith("W1_0")
