"""Saver, checkpoint files, latest_checkpoint, Checkpoint: round trips and failures."""
import json
import os

import numpy as np
import pytest

import aicslib as aics
from aicslib.framework import file_io
from aicslib.train import saver as saver_mod


def _graph_model():
    w = aics.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="dense/kernel")
    b = aics.Variable(np.zeros(3, np.float32), name="dense/bias")
    gs = aics.train.get_or_create_global_step()
    return w, b, gs


def test_save_restore_roundtrip_graph(tmp_path):
    with aics.Graph().as_default():
        w, b, gs = _graph_model()
        saver = aics.train.Saver()
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            sess.run(b.assign([1.0, 2.0, 3.0]))
            sess.run(gs.assign(60))
            path = saver.save(sess, str(tmp_path / "model"), global_step=gs)
            assert path == str(tmp_path / "model-60")
            assert os.path.isfile(path + ".npz") and os.path.isfile(path + ".index.json")
            assert aics.train.latest_checkpoint(str(tmp_path)) == path
        with aics.Session() as sess2:   # fresh session: variables uninitialized
            saver.restore(sess2, path)
            np.testing.assert_array_equal(sess2.run(b), [1.0, 2.0, 3.0])
            np.testing.assert_array_equal(sess2.run(w), np.arange(6).reshape(2, 3))
            assert sess2.run(gs) == 60
    assert dict(aics.train.list_variables(str(tmp_path))) == {
        "dense/kernel": [2, 3], "dense/bias": [3], "global_step": []}
    np.testing.assert_array_equal(aics.train.load_variable(path, "dense/bias"), [1, 2, 3])


def test_files_contain_no_pickle(tmp_path):
    with aics.Graph().as_default():
        _graph_model()
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            path = aics.train.Saver().save(sess, str(tmp_path / "m"))
    with np.load(path + ".npz", allow_pickle=False) as npz:
        assert all(npz[k].dtype != object for k in npz.files)
    index = json.loads(open(path + ".index.json").read())
    assert index["format"] == "aicslib-checkpoint"
    assert index["variables"]["dense/kernel"]["shape"] == [2, 3]
    state = open(tmp_path / "checkpoint").read()
    assert 'model_checkpoint_path: "m"' in state


def test_max_to_keep(tmp_path):
    with aics.Graph().as_default():
        _, _, gs = _graph_model()
        saver = aics.train.Saver(max_to_keep=2)
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            paths = [saver.save(sess, str(tmp_path / "model"), global_step=s)
                     for s in (10, 20, 30)]
    assert saver.last_checkpoints == paths[1:]
    assert not os.path.exists(paths[0] + ".npz") and not os.path.exists(paths[0] + ".index.json")
    assert all(aics.train.checkpoint_exists(p) for p in paths[1:])
    state = aics.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[2]
    assert state.all_model_checkpoint_paths == paths[1:]


def test_latest_checkpoint_missing_or_empty(tmp_path):
    assert aics.train.latest_checkpoint(str(tmp_path / "nope")) is None
    assert aics.train.latest_checkpoint(str(tmp_path)) is None


def test_crash_during_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    with aics.Graph().as_default():
        w, b, gs = _graph_model()
        saver = aics.train.Saver()
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            good = saver.save(sess, str(tmp_path / "model"), global_step=1)
            sess.run(b.assign([7.0, 7.0, 7.0]))

            # Fail while the index of the second checkpoint is being written:
            # the data file is complete, the index is not.
            real_write = file_io.atomic_write

            def failing_write(path, write_fn, binary=True):
                if path.endswith(".index.json"):
                    def partial(f):
                        f.write('{"format": "aicslib-chec')   # cut off mid-way
                        raise OSError("disk full (simulated)")
                    return real_write(path, partial, binary)
                return real_write(path, write_fn, binary)
            monkeypatch.setattr(file_io, "atomic_write", failing_write)
            with pytest.raises(OSError, match="simulated"):
                saver.save(sess, str(tmp_path / "model"), global_step=2)
            monkeypatch.setattr(file_io, "atomic_write", real_write)

            assert aics.train.latest_checkpoint(str(tmp_path)) == good
            assert not aics.train.checkpoint_exists(str(tmp_path / "model-2"))
            assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]   # no debris
            saver.restore(sess, aics.train.latest_checkpoint(str(tmp_path)))
            np.testing.assert_array_equal(sess.run(b), [0.0, 0.0, 0.0])


def test_crash_while_writing_data(tmp_path, monkeypatch):
    with aics.Graph().as_default():
        _, b, _ = _graph_model()
        saver = aics.train.Saver()
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            good = saver.save(sess, str(tmp_path / "model"), global_step=1)

            def boom(f, **arrays):
                f.write(b"PK\x03\x04 partial zip")
                raise KeyboardInterrupt   # even an interrupt leaves no half file behind
            monkeypatch.setattr(np, "savez", boom)
            with pytest.raises(KeyboardInterrupt):
                saver.save(sess, str(tmp_path / "model"), global_step=1)   # same prefix!
            monkeypatch.undo()
            assert aics.train.latest_checkpoint(str(tmp_path)) == good
            saver.restore(sess, good)   # the old files are intact
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-1.index.json", "model-1.meta",
                                            "model-1.npz"]


def test_restore_errors(tmp_path):
    with aics.Graph().as_default():
        w, b, gs = _graph_model()
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            path = aics.train.Saver([w, b]).save(sess, str(tmp_path / "model"))
    # A variable that is not in the checkpoint.
    with aics.Graph().as_default():
        w, b, gs = _graph_model()
        extra = aics.Variable(1.0, name="extra")
        with aics.Session() as sess:
            with pytest.raises(aics.errors.NotFoundError, match="key extra not found"):
                aics.train.Saver([w, b, extra]).restore(sess, path)
    # A shape mismatch.
    with aics.Graph().as_default():
        w = aics.Variable(np.zeros((3, 2), np.float32), name="dense/kernel")
        with aics.Session() as sess:
            with pytest.raises(aics.errors.InvalidArgumentError,
                               match=r"dense/kernel.*\(3, 2\).*\(2, 3\)"):
                aics.train.Saver([w]).restore(sess, path)
    # A dtype mismatch.
    with aics.Graph().as_default():
        w = aics.Variable(np.zeros((2, 3), np.float64), name="dense/kernel")
        with aics.Session() as sess:
            with pytest.raises(aics.errors.InvalidArgumentError, match="dtype mismatch"):
                aics.train.Saver([w]).restore(sess, path)
    # Not a checkpoint / None.
    with aics.Graph().as_default():
        w = aics.Variable(np.zeros((2, 3), np.float32), name="dense/kernel")
        with aics.Session() as sess:
            with pytest.raises(aics.errors.NotFoundError, match="Failed to find"):
                aics.train.Saver([w]).restore(sess, str(tmp_path / "nothing"))
            with pytest.raises(ValueError, match="None"):
                aics.train.Saver([w]).restore(sess, None)


def test_corrupt_files_raise_data_loss(tmp_path):
    with aics.Graph().as_default():
        w, b, _ = _graph_model()
        saver = aics.train.Saver([w, b])
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model"))
            blob = bytearray(open(path + ".npz", "rb").read())
            blob[len(blob) // 2] ^= 0xFF
            open(path + ".npz", "wb").write(bytes(blob))
            with pytest.raises(saver_mod.DataLossError, match="corrupted"):
                saver.restore(sess, path)
            open(path + ".index.json", "w").write("{not json")
            with pytest.raises(saver_mod.DataLossError, match="index"):
                saver.restore(sess, path)
            os.remove(path + ".npz")
            saver.save(sess, str(tmp_path / "model"))
            os.remove(path + ".npz")
            with pytest.raises(saver_mod.DataLossError, match="missing"):
                saver.restore(sess, path)


def test_saver_arguments():
    with aics.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            aics.train.Saver()
        a = aics.Variable(1.0, name="a")
        with pytest.raises(ValueError, match="same name"):
            aics.train.Saver([a, a])
    with pytest.raises(RuntimeError, match="eager"):
        aics.train.Saver()


def test_saver_eager_and_dict_names(tmp_path):
    v = aics.Variable(np.ones(3, np.float32))
    s = aics.train.Saver({"my/var": v})
    path = s.save(None, str(tmp_path / "e"), global_step=3)
    v.assign(np.zeros(3, np.float32))
    s.restore(None, path)
    np.testing.assert_array_equal(v.numpy(), [1, 1, 1])
    assert aics.train.list_variables(path) == [("my/var", [3])]


def test_saver_parent_directory_must_exist(tmp_path):
    v = aics.Variable(1.0)
    with pytest.raises(ValueError, match="doesn't exist"):
        aics.train.Saver([v]).save(None, str(tmp_path / "no" / "such" / "dir" / "m"))


# -- Checkpoint (eager) ------------------------------------------------------------------------

def _train_steps(w, opt, n):
    for _ in range(n):
        opt.minimize(lambda: aics.reduce_sum((w - 3.0) * (w - 3.0)), var_list=[w])


def test_checkpoint_roundtrip_with_optimizer_slots(tmp_path):
    w = aics.Variable(np.array([1.0, -1.0], np.float32), name="w")
    opt = aics.train.AdamOptimizer(0.1)
    _train_steps(w, opt, 3)
    ckpt = aics.train.Checkpoint(model={"w": w}, optimizer=opt)
    path = ckpt.save(str(tmp_path / "ckpt"))
    assert path.endswith("ckpt-1") and aics.train.latest_checkpoint(str(tmp_path)) == path
    _train_steps(w, opt, 2)
    expected = w.numpy().copy()

    # A fresh model and optimizer: restore, deferred slots, then the same two steps.
    w2 = aics.Variable(np.zeros(2, np.float32), name="w")
    opt2 = aics.train.AdamOptimizer(0.1)
    status = aics.train.Checkpoint(model={"w": w2}, optimizer=opt2).restore(path)
    status.assert_consumed()
    assert status.deferred          # the Adam slots did not exist yet
    _train_steps(w2, opt2, 2)
    np.testing.assert_allclose(w2.numpy(), expected, rtol=1e-6)


def test_checkpoint_counter_and_errors(tmp_path):
    v = aics.Variable(np.ones(2, np.float32))
    ckpt = aics.train.Checkpoint(v=v)
    p1 = ckpt.save(str(tmp_path / "c"))
    p2 = ckpt.save(str(tmp_path / "c"))
    assert p1.endswith("c-1") and p2.endswith("c-2") and int(ckpt.save_counter.numpy()) == 2
    assert aics.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == [p1, p2]
    bad = aics.train.Checkpoint(v=aics.Variable(np.ones(3, np.float32)))
    with pytest.raises(aics.errors.InvalidArgumentError, match="shape mismatch"):
        bad.restore(p2)
    status = aics.train.Checkpoint(other=aics.Variable(1.0)).restore(p2)
    with pytest.raises(AssertionError, match="not found"):
        status.assert_consumed()
    aics.train.Checkpoint(v=v).restore(None)   # nothing to restore: a fresh start
    with pytest.raises(TypeError, match="cannot track"):
        aics.train.Checkpoint(x=object()).save(str(tmp_path / "x"))


def test_checkpoint_manager_keeps_the_newest(tmp_path):
    v = aics.Variable([1.0, 2.0])
    ckpt = aics.train.Checkpoint(v=v)
    manager = aics.train.CheckpointManager(ckpt, directory=str(tmp_path / "ck"), max_to_keep=2)
    paths = []
    for k in range(3):
        v.assign([float(k), 0.0])
        paths.append(manager.save())
    assert [os.path.basename(p) for p in paths] == ["ckpt-1", "ckpt-2", "ckpt-3"]
    assert manager.checkpoints == paths[1:]
    assert aics.train.latest_checkpoint(str(tmp_path / "ck")) == paths[-1]
    assert not any(f.startswith("ckpt-1.") for f in os.listdir(tmp_path / "ck"))
    v.assign([9.0, 9.0])
    ckpt.restore(aics.train.latest_checkpoint(str(tmp_path / "ck")))
    np.testing.assert_array_equal(v.numpy(), [2.0, 0.0])
    with pytest.raises(ValueError, match="max_to_keep"):
        aics.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)
