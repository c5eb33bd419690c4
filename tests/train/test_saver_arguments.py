"""Saver(sharded=...) and Saver.save(write_meta_graph=..., ...): each does what
TensorFlow's does here, or refuses with a message naming the argument."""
import json
import os

import numpy as np
import pytest

import aicslib as aics


def _model():
    w = aics.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="dense/kernel")
    b = aics.Variable(np.zeros(3, np.float32), name="dense/bias")
    y = aics.nn.relu(aics.matmul(aics.ones([4, 2]), w) + b, name="y")
    return w, b, y


def _save(tmp_path, name="model", step=1, saver_kwargs=None, **save_kwargs):
    with aics.Graph().as_default() as g:
        w, b, y = _model()
        saver = aics.train.Saver(**(saver_kwargs or {}))
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            sess.run(b.assign([1.0, 2.0, 3.0]))
            path = saver.save(sess, str(tmp_path / name), global_step=step, **save_kwargs)
    return g, saver, path


# -- write_meta_graph ---------------------------------------------------------------------

def test_meta_graph_is_written_by_default_as_json(tmp_path):
    g, _, path = _save(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-1.index.json", "model-1.meta",
                                            "model-1.npz"]
    with open(path + ".meta", encoding="utf-8") as f:
        meta = json.load(f)                      # plain JSON: no pickle
    assert meta["format"] == "aicslib-meta-graph"
    assert [n["name"] for n in meta["graph_def"]["node"]] == [op.name for op in g.get_operations()]
    assert set(meta["saver_def"]["variables"]) == {"dense/kernel", "dense/bias"}
    assert set(meta["collection_def"]["trainable_variables"]) == {"dense/kernel:0", "dense/bias:0"}


def test_meta_graph_rebuilds_the_graph_and_the_checkpoint_restores_into_it(tmp_path):
    _, _, path = _save(tmp_path)
    with open(path + ".meta", encoding="utf-8") as f:
        meta = json.load(f)
    with aics.Graph().as_default() as g2:
        aics.import_graph_def(meta["graph_def"], name="")
        y = g2.get_tensor_by_name("y:0")
        values = aics.train.load_checkpoint(path)
        with aics.Session() as sess:
            for name in meta["saver_def"]["variables"]:   # restore by name, as TF's restore op does
                handle = g2.get_tensor_by_name(name + ":0")
                sess.run(aics.raw_ops.AssignVariableOp(resource=handle, value=values[name]))
            out = sess.run(y)
    # Reference in NumPy: relu(ones(4, 2) @ w + b).
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(out, np.maximum(np.ones((4, 2)) @ w + [1.0, 2.0, 3.0], 0))


def test_write_meta_graph_false_writes_none(tmp_path):
    _save(tmp_path, write_meta_graph=False)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-1.index.json", "model-1.npz"]


def test_meta_graph_suffix_and_max_to_keep(tmp_path):
    with aics.Graph().as_default():
        _model()
        saver = aics.train.Saver(max_to_keep=1)
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            first = saver.save(sess, str(tmp_path / "m"), global_step=1, meta_graph_suffix="mg")
            assert os.path.isfile(first + ".mg")
            second = saver.save(sess, str(tmp_path / "m"), global_step=2, meta_graph_suffix="mg")
    assert not os.path.exists(first + ".mg")   # removed with its checkpoint, as in TF
    assert os.path.isfile(second + ".mg")


def test_eager_saver_writes_no_meta_graph(tmp_path):
    v = aics.Variable([1.0, 2.0], name="v")
    aics.train.Saver([v]).save(None, str(tmp_path / "e"))
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "e.index.json", "e.npz"]


def test_strip_default_attrs(tmp_path):
    _, _, full = _save(tmp_path, name="full")
    _, _, stripped = _save(tmp_path, name="stripped", strip_default_attrs=True)
    with open(full + ".meta") as f:
        full_nodes = {n["name"]: n for n in json.load(f)["graph_def"]["node"]}
    with open(stripped + ".meta") as f:
        meta = json.load(f)
    nodes = {n["name"]: n for n in meta["graph_def"]["node"]}
    assert meta["meta_info_def"]["stripped_default_attrs"] is True
    # MatMul's transpose_a/transpose_b are false by default: left out; T is kept.
    assert set(full_nodes["MatMul"]["attr"]) >= {"transpose_a", "transpose_b", "T"}
    assert "transpose_a" not in nodes["MatMul"]["attr"] and "T" in nodes["MatMul"]["attr"]
    with aics.Graph().as_default() as g:   # the defaults come back on import
        aics.import_graph_def(meta["graph_def"], name="")
        assert g.get_operation_by_name("MatMul").get_attr("transpose_a") is False


def test_unserializable_graph_warns_and_keeps_the_checkpoint(tmp_path, capfd, monkeypatch):
    def unserializable(graph):   # as for a graph holding function attrs
        raise ValueError("Graphs holding function attrs cannot be serialized.")
    monkeypatch.setattr(aics.Graph, "as_graph_def", unserializable)
    with aics.Graph().as_default():
        _model()
        saver = aics.train.Saver()
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model"))
    assert "meta graph" in capfd.readouterr().err
    assert not os.path.exists(path + ".meta")
    assert aics.train.latest_checkpoint(str(tmp_path)) == path


def test_save_debug_info_is_refused(tmp_path):
    with pytest.raises(NotImplementedError, match="save_debug_info=True"):
        _save(tmp_path, save_debug_info=True)


# -- sharded ------------------------------------------------------------------------------

def test_sharded_on_one_device_writes_the_unsharded_files(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "sharded").mkdir()
    _save(tmp_path / "plain")
    _, _, sharded = _save(tmp_path / "sharded", saver_kwargs={"sharded": True})
    assert sorted(os.listdir(tmp_path / "plain")) == sorted(os.listdir(tmp_path / "sharded"))
    np.testing.assert_array_equal(aics.train.load_variable(sharded, "dense/bias"), [1, 2, 3])


def test_sharded_over_devices_is_refused_naming_the_argument():
    with aics.Graph().as_default():
        with aics.device("/cpu:0"):
            aics.Variable(np.zeros(2, np.float32), name="a")
        with aics.device("/mlu:0"):
            aics.Variable(np.zeros(2, np.float32), name="b")
        with pytest.raises(NotImplementedError, match="sharded=True"):
            aics.train.Saver(sharded=True)
        aics.train.Saver()   # unsharded: fine
