"""Crash-safe, distrustful checkpoints (issue 17).

A save is crashed at every step (a forked child exits at that step, as a killed
process would: no cleanup runs) and at random times with kill -9; afterwards the
folder must always hold a loadable checkpoint with the old or the new values,
never a mixture. Hostile indexes and archives must give DataLossError naming the
file, without reading outside the folder or decompressing what the index does not
name (memory measured with tracemalloc).
"""
import errno
import json
import os
import random
import signal
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import aicslib as aics
from aicslib.framework import file_io
from aicslib.train import checkpoint_writer
from aicslib.train.checkpoint_format import sha256

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")


def _vars(n=1000):
    return [aics.Variable(np.zeros(n, np.float32), name="w"),
            aics.Variable(np.zeros(3, np.int64), name="step")]


def _set(variables, k):
    for v in variables:
        v.assign(np.full(v.shape, k, v.dtype.as_numpy_dtype))


def _saved_value(folder):
    """The single value k every variable of the latest checkpoint holds (else fails)."""
    latest = aics.train.latest_checkpoint(folder)
    assert latest is not None, f"no loadable checkpoint in {os.listdir(folder)}"
    values = aics.train.load_checkpoint(latest)
    ks = {float(x) for arr in values.values() for x in np.unique(arr)}
    assert len(ks) == 1, f"checkpoint mixes values of several saves: {ks}"
    return ks.pop()


def _run_in_child(fn):
    """Runs ``fn`` in a forked child; returns its exit status (fn may os._exit itself)."""
    pid = os.fork()
    if pid == 0:   # child
        code = 0
        try:
            fn()
        except BaseException:
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


def _save_steps(tmp_path):
    """The crash points a save goes through, recorded from a real save."""
    steps = []
    variables = _vars(10)
    saver = aics.train.Saver(variables)
    original = checkpoint_writer.crash_point
    checkpoint_writer.crash_point = steps.append
    try:
        saver.save(None, str(tmp_path / "probe"))
        saver.save(None, str(tmp_path / "probe"))
    finally:
        checkpoint_writer.crash_point = original
    return list(dict.fromkeys(steps))


def test_save_steps_cover_both_commits(tmp_path):
    steps = _save_steps(tmp_path)
    assert steps[:4] == ["data_staged", "index_staged", "data_linked", "index_final"]
    assert "state_written" in steps


@pytest.mark.parametrize("first_save", [False, True], ids=["resave", "first-save"])
def test_crash_at_every_step_leaves_a_loadable_checkpoint(tmp_path, first_save):
    steps = _save_steps(tmp_path / ".." / tmp_path.name)
    for n, step in enumerate(steps):
        folder = tmp_path / f"crash{n}"
        folder.mkdir()
        variables = _vars()
        saver = aics.train.Saver(variables)
        prefix = str(folder / "model")
        if not first_save:
            _set(variables, 1)
            saver.save(None, prefix)
        _set(variables, 2)

        def crash_at(s, step=step):
            if s == step:
                os._exit(0)   # dies like kill -9: no except/finally blocks run
        checkpoint_writer.crash_point = crash_at
        try:
            status = _run_in_child(lambda: saver.save(None, prefix))
        finally:
            checkpoint_writer.crash_point = lambda s: None
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        if first_save and steps.index(step) < steps.index("state_written"):
            # The state file is written last: a crashed first save names nothing yet.
            assert aics.train.latest_checkpoint(str(folder)) is None
        else:
            k = _saved_value(str(folder))
            committed = steps.index(step) >= steps.index("index_staged")
            assert k == (2.0 if committed else 1.0), (step, k)
        # The prefix itself is always readable once the index exists, and the next save
        # clears the debris of the crashed one.
        if os.path.exists(prefix + ".index.json"):
            aics.train.load_checkpoint(prefix)
        _set(variables, 3)
        saver.save(None, prefix)
        assert _saved_value(str(folder)) == 3.0
        assert sorted(os.listdir(folder)) == ["checkpoint", "model.index.json", "model.npz"]
    checkpoint_writer.crash_point = lambda s: None


def test_kill_9_during_repeated_saves_to_one_prefix(tmp_path):
    variables = _vars(200_000)   # ~1 MB per save: kills land inside writes too
    saver = aics.train.Saver(variables)
    prefix = str(tmp_path / "model")
    _set(variables, 0)
    saver.save(None, prefix)
    rng = random.Random(17)
    last_seen = 0.0
    for round_ in range(8):
        def save_forever(start=round_ * 1000 + 1):
            k = start
            while True:
                _set(variables, k)
                saver.save(None, prefix)
                k += 1
        pid = os.fork()
        if pid == 0:
            try:
                save_forever()
            finally:
                os._exit(1)
        time.sleep(rng.uniform(0.005, 0.08))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        k = _saved_value(str(tmp_path))   # loads, and all variables agree
        assert k == 0.0 or k >= round_ * 1000 + 1 or k == last_seen, k
        last_seen = k
    _set(variables, -1)
    saver.save(None, prefix)
    assert _saved_value(str(tmp_path)) == -1.0
    # The save cleared its prefix's debris (a killed state-file write may leave its own
    # temporary file: other savers may share that file, so it is not the prefix's to remove).
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")
                and not f.startswith(".checkpoint.")]


# -- nothing in the files is trusted -----------------------------------------------------------

def _checkpoint(tmp_path, name="model"):
    variables = _vars(8)
    _set(variables, 5)
    return aics.train.Saver(variables).save(None, str(tmp_path / name))


def _rewrite_index(prefix, change):
    path = prefix + ".index.json"
    index = json.load(open(path))
    change(index)
    with open(path, "w") as f:
        json.dump(index, f)


@pytest.mark.parametrize("data_file", ["../outside.npz", "/tmp/outside.npz", "sub/x.npz", "..",
                                       "a\\..\\b.npz"])
def test_data_file_outside_the_folder_is_refused(tmp_path, data_file):
    (tmp_path / "ck").mkdir()
    prefix = _checkpoint(tmp_path / "ck")
    other = _checkpoint(tmp_path, "outside")   # a real checkpoint the index could point at
    assert os.path.exists(other + ".npz")

    def point_outside(index):
        index["data_file"] = data_file
        index["data_sha256"] = sha256(other + ".npz")
    _rewrite_index(prefix, point_outside)
    with pytest.raises(aics.errors.DataLossError, match=r"model\.index\.json.*data_file"):
        aics.train.load_checkpoint(prefix)


def test_symlinked_data_file_outside_the_folder_is_refused(tmp_path):
    (tmp_path / "ck").mkdir()
    prefix = _checkpoint(tmp_path / "ck")
    other = _checkpoint(tmp_path, "outside")
    os.remove(prefix + ".npz")
    os.symlink(other + ".npz", prefix + ".npz")
    with pytest.raises(aics.errors.DataLossError, match="outside the checkpoint's folder"):
        aics.train.load_checkpoint(prefix)


_json = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats()
                     | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from([("format",), ("version",), ("data_file",), ("data_sha256",),
                             ("global_step",), ("variables",), ("variables", "w"),
                             ("variables", "w", "key"), ("variables", "w", "dtype"),
                             ("variables", "w", "shape"), ("variables", "step", "shape")]),
       value=_json, delete=st.booleans())
def test_malformed_index_gives_data_loss_error(tmp_path, path, value, delete):
    prefix = str(tmp_path / "model")
    if not os.path.exists(prefix + ".index.json"):
        _checkpoint(tmp_path)
    good = open(prefix + ".index.json").read()
    try:
        def change(index):
            node = index
            for p in path[:-1]:
                node = node[p]
            if delete:
                node.pop(path[-1], None)
            else:
                node[path[-1]] = value
        _rewrite_index(prefix, change)
        try:
            values = aics.train.load_checkpoint(prefix)
        except aics.errors.DataLossError as e:
            assert str(tmp_path / "model") in str(e)   # names the checkpoint's files
        else:   # a harmless change (e.g. another global_step) must still give the real values
            assert set(values) <= {"step", "w"}
            assert all((arr == 5).all() for arr in values.values())
            if path[0] != "variables":
                assert sorted(values) == ["step", "w"]
    finally:
        open(prefix + ".index.json", "w").write(good)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": ' * 50_000, "\xff\xfe",
                                  "null", "[]", '"x"', "1e999"])
def test_unparsable_index_gives_data_loss_error(tmp_path, text):
    prefix = _checkpoint(tmp_path)
    with open(prefix + ".index.json", "w", encoding="latin-1") as f:
        f.write(text)
    with pytest.raises(aics.errors.DataLossError, match=r"model\.index\.json"):
        aics.train.load_checkpoint(prefix)


def _add_member(npz_path, name, nbytes, compress=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(npz_path, "a", compression=compress) as zf:
        with zf.open(name, "w", force_zip64=True) as f:
            chunk = bytes(1 << 20)
            for _ in range(nbytes >> 20):
                f.write(chunk)


def test_restore_reads_only_the_members_the_index_names(tmp_path):
    prefix = _checkpoint(tmp_path)
    _add_member(prefix + ".npz", "unused.npy", 64 << 20)   # 64 MiB of zeros, deflated
    assert os.path.getsize(prefix + ".npz") < 2 << 20
    _rewrite_index(prefix, lambda i: i.update(data_sha256=sha256(prefix + ".npz")))
    tracemalloc.start()
    try:
        values = aics.train.load_checkpoint(prefix)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (values["w"] == 5).all() and (values["step"] == 5).all()
    assert peak < 4 << 20, f"restore peaked at {peak / 2**20:.1f} MiB"


def test_declared_sizes_are_checked_before_reading(tmp_path):
    prefix = _checkpoint(tmp_path)

    def grow(index):   # the index claims a 4 GiB variable the 5 KB archive cannot hold
        index["variables"]["w"]["shape"] = [1 << 30]
    _rewrite_index(prefix, grow)
    tracemalloc.start()
    try:
        with pytest.raises(aics.errors.DataLossError, match=r"'w'.*declares \d+ bytes"):
            aics.train.load_checkpoint(prefix)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_pickled_member_is_refused(tmp_path):
    prefix = _checkpoint(tmp_path)
    arr = np.array([{"evil": 1}] * 8, dtype=object)
    bad = tmp_path / "bad.npz"
    np.savez(str(bad), t1=np.zeros(3, np.int64), t0=arr)   # t0 is "step" (sorted names)
    os.replace(bad, prefix + ".npz")
    _rewrite_index(prefix, lambda i: i.update(data_sha256=sha256(prefix + ".npz")))
    with pytest.raises(aics.errors.DataLossError, match="model.npz"):
        aics.train.load_checkpoint(prefix)


# -- the file system says no -------------------------------------------------------------------

def test_full_disk_raises_resource_exhausted_and_keeps_the_old_checkpoint(tmp_path, monkeypatch):
    variables = _vars(8)
    saver = aics.train.Saver(variables)
    _set(variables, 1)
    saver.save(None, str(tmp_path / "model"))
    _set(variables, 2)

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(aics.errors.ResourceExhaustedError,
                       match=r"model.*; No space left on device"):
        saver.save(None, str(tmp_path / "model"))
    monkeypatch.undo()
    assert _saved_value(str(tmp_path)) == 1.0
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]


def test_read_only_folder_raises_permission_denied(tmp_path, monkeypatch):
    variables = _vars(8)
    if os.geteuid() != 0:   # a real read-only folder where permissions bind
        os.chmod(tmp_path, 0o555)
    else:                   # root ignores permissions: the file system refuses instead
        def read_only(*args, **kwargs):
            raise OSError(errno.EROFS, "Read-only file system")
        monkeypatch.setattr(file_io.tempfile, "mkstemp", read_only)
    try:
        with pytest.raises(aics.errors.PermissionDeniedError, match=str(tmp_path)):
            aics.train.Saver(variables).save(None, str(tmp_path / "model"))
        with pytest.raises(aics.errors.PermissionDeniedError, match=str(tmp_path)):
            aics.io.write_file(str(tmp_path / "x.txt"), b"x")
    finally:
        os.chmod(tmp_path, 0o755)


@pytest.mark.parametrize("max_to_keep", [None, 0])
def test_max_to_keep_none_lists_only_the_newest(tmp_path, max_to_keep):
    # TF (saver.py): "If None or 0, no checkpoints are deleted from the filesystem but only
    # the last one is kept in the checkpoint file."
    variables = _vars(4)
    saver = aics.train.Saver(variables, max_to_keep=max_to_keep)
    paths = [saver.save(None, str(tmp_path / "model"), global_step=s) for s in range(4)]
    state = aics.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[-1]
    assert state.all_model_checkpoint_paths == [paths[-1]]
    assert all(aics.train.checkpoint_exists(p) for p in paths)
    # TF 2.21's tf.compat.v1.train.Saver(max_to_keep=None or 0) records none of them
    assert saver.last_checkpoints == []
    assert aics.train.latest_checkpoint(str(tmp_path)) == paths[-1]


def test_write_file_uses_a_unique_temp_name_and_fsyncs(tmp_path, monkeypatch):
    target = tmp_path / "out.bin"
    bystander = tmp_path / "out.bin.tmp"   # the old fixed temp name must not be clobbered
    bystander.write_bytes(b"someone else's")
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    aics.io.write_file(str(target), b"new\0\0")
    assert target.read_bytes() == b"new\0\0"
    assert bystander.read_bytes() == b"someone else's"
    assert synced, "write_file never fsync'ed"
    assert sorted(os.listdir(tmp_path)) == ["out.bin", "out.bin.tmp"]
