"""Writes interrupted half-way leave no torn file (issue 29).

Every file aicslib rewrites whole goes through one helper, ``framework.file_io.atomic_write``
(a unique temporary name in the same folder, fsync, rename, fsync of the folder): a write
that dies half-way (here: the disk fills after a few bytes) leaves the previous file as it
was, no temporary file, and TF's error class for ENOSPC naming the path. Event files are
appended to instead; their writer keeps them a sequence of whole records and fsyncs on
flush and close, as TF's EventsWriter::Flush does.
"""
import errno
import glob
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from tensorboard.compat.proto import event_pb2

import aicslib as aics
from aicslib.distribute import launch
from aicslib.models import vgg19
from aicslib.summary import record_writer, v1
from aicslib.summary.event_file_writer import EventFileWriter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DISK_FULL = r"; No space left on device"


class _FillsUp:
    """A file that takes ``budget`` bytes, then fails as a full disk does."""

    def __init__(self, f, budget):
        self._f, self._budget = f, budget

    def write(self, data):
        data = bytes(data) if not isinstance(data, str) else data
        n = min(len(data), self._budget)
        self._f.write(data[:n])
        self._budget -= n
        if n < len(data):
            raise OSError(errno.ENOSPC, "No space left on device")
        return n

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()
        return False


def _disk_fills_after(monkeypatch, budget=16):
    real = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: _FillsUp(real(*a, **k), budget))


def _interrupted(monkeypatch, tmp_path, path, write):
    """Writes once, then again with the disk filling up: the first file must survive."""
    write()
    before = open(path, "rb").read()
    with monkeypatch.context() as m:
        _disk_fills_after(m)
        with pytest.raises(aics.errors.ResourceExhaustedError, match=re.escape(path) + DISK_FULL):
            write()
    assert open(path, "rb").read() == before
    assert os.listdir(tmp_path) == [os.path.basename(path)], "a temporary file was left behind"
    return before


@pytest.mark.parametrize("name,as_text", [("g.pb", False), ("g.pbtxt", True), ("g.json", True)])
def test_write_graph(monkeypatch, tmp_path, name, as_text):
    with aics.Graph().as_default() as g:
        aics.constant(np.arange(1000, dtype=np.float32), name="big") * 2.0
    path = os.path.join(tmp_path, name)
    _interrupted(monkeypatch, tmp_path, path,
                 lambda: aics.io.write_graph(g, str(tmp_path), name, as_text=as_text))
    assert [n["name"] for n in aics.io.read_graph(path)["node"]][0] == "big"


def test_vgg19_weights(monkeypatch, tmp_path):
    weights = {"conv1_1": (np.ones((3, 3, 3, 4), np.float32), np.zeros(4, np.float32))}
    path = os.path.join(tmp_path, "w.npz")
    _interrupted(monkeypatch, tmp_path, path, lambda: vgg19.save_weights(path, weights))
    with np.load(path, allow_pickle=False) as z:
        np.testing.assert_array_equal(z["conv1_1/W"], weights["conv1_1"][0])


def test_keras_weights(monkeypatch, tmp_path):
    model = aics.keras.Sequential([aics.keras.layers.Dense(3)])
    model(np.ones((1, 2), np.float32))
    path = os.path.join(tmp_path, "model.npz")
    _interrupted(monkeypatch, tmp_path, path, lambda: model.save_weights(path))
    restored = aics.keras.Sequential([aics.keras.layers.Dense(3)])
    restored(np.ones((1, 2), np.float32))
    restored.load_weights(path)
    for a, b in zip(restored.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_host_file(monkeypatch, tmp_path):
    path = os.path.join(tmp_path, "hosts")
    before = _interrupted(monkeypatch, tmp_path, path,
                          lambda: launch.write_hostfile([("node1", 2), ("node2", 4)], "openmpi",
                                                        str(tmp_path)))
    assert before == b"node1 slots=2\nnode2 slots=4\n"


def test_write_file_op_and_checkpoint_state(monkeypatch, tmp_path):
    path = os.path.join(tmp_path, "out.bin")
    _interrupted(monkeypatch, tmp_path, path, lambda: aics.io.write_file(path, b"x" * 100))
    (tmp_path / "ck").mkdir()
    v = aics.Variable(np.arange(10, dtype=np.float32), name="v")
    saver = aics.train.Saver([v])
    first = saver.save(None, str(tmp_path / "ck" / "model"), global_step=1)
    with monkeypatch.context() as m:
        _disk_fills_after(m)
        with pytest.raises(aics.errors.ResourceExhaustedError, match=DISK_FULL):
            saver.save(None, str(tmp_path / "ck" / "model"), global_step=2)
    assert aics.train.latest_checkpoint(str(tmp_path / "ck")) == first
    assert not [n for n in os.listdir(tmp_path / "ck") if n.endswith(".tmp")]


def test_data_parallel_results_file(tmp_path):
    # the training script's own process, its disk filling while rank 0 writes --out
    out = str(tmp_path / "dp.npz")
    with open(out, "wb") as f:
        f.write(b"previous results")
    code = (
        "import os, runpy, sys\n"
        f"sys.path.insert(0, {HERE!r})\n"
        "from test_torn_writes import _FillsUp\n"
        "real = os.fdopen\n"
        "os.fdopen = lambda *a, **k: _FillsUp(real(*a, **k), 16)\n"
        "script = os.path.join(sys.argv[1], 'aicslib', 'distribute', 'train_data_parallel.py')\n"
        "sys.argv = [script, '--batch', '4', '--steps', '1', '--out', sys.argv[2]]\n"
        "runpy.run_path(script, run_name='__main__')\n")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", code, ROOT, out], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0, done.stderr[-2000:]
    assert f"ResourceExhaustedError: {out}; No space left on device" in done.stderr
    assert open(out, "rb").read() == b"previous results"
    assert os.listdir(tmp_path) == ["dp.npz"]


def test_every_np_load_states_allow_pickle():
    # checkpoints and weights hold no pickle: each np.load says whether it may read one
    calls = []
    for folder, _, files in (w for top in ("aicslib", "benchmarks", "tools")
                             for w in os.walk(os.path.join(ROOT, top))):
        for name in files:
            if name.endswith(".py"):
                text = open(os.path.join(folder, name), encoding="utf-8").read()
                for m in re.finditer(r"\bnp\.load\(([^)]*)\)", text):
                    calls.append((name, m.group(1)))
    assert calls, "the scan found no np.load at all"
    assert [c for c in calls if "allow_pickle=" not in c[1]] == []


# -- event files ---------------------------------------------------------------------------------

def _event(step):
    return event_pb2.Event(step=step, wall_time=1.0, file_version="")


def _steps(path):
    events = [event_pb2.Event.FromString(r) for r in record_writer.read_records(path)]
    return [e.step for e in events[1:]]     # after the file_version event


def test_flush_and_close_reach_the_disk(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    writer = EventFileWriter(str(tmp_path), max_queue=100, flush_secs=1000)
    for step in range(3):
        writer.add_event(_event(step))
    assert _steps(writer.path) == []             # queued
    synced.clear()
    writer.flush()
    assert _steps(writer.path) == [0, 1, 2] and synced, "flush must write and fsync (TF does)"
    writer.add_event(_event(3))
    synced.clear()
    writer.close()                               # close writes what is queued, then syncs
    assert _steps(writer.path) == [0, 1, 2, 3] and synced
    writer.flush()                               # TF2: flush and close after close do nothing
    writer.close()
    with pytest.raises(RuntimeError, match="closed"):
        writer.add_event(_event(4))


def test_a_full_disk_leaves_whole_records(tmp_path, monkeypatch):
    writer = EventFileWriter(str(tmp_path), max_queue=100, flush_secs=1000)
    writer.add_event(_event(0))
    writer.flush()
    size = os.path.getsize(writer.path)
    real_write = os.write

    def half(fd, data):                           # the disk fills half-way through
        real_write(fd, bytes(data[:len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")
    for step in (1, 2):
        writer.add_event(_event(step))
    with monkeypatch.context() as m:
        m.setattr(os, "write", half)
        with pytest.raises(aics.errors.ResourceExhaustedError,
                           match=re.escape(writer.path) + DISK_FULL):
            writer.flush()
    assert os.path.getsize(writer.path) == size   # cut back to the last whole record
    assert _steps(writer.path) == [0]             # readable: no torn record
    writer.add_event(_event(3))
    writer.close()                                # space again: nothing was lost, nothing twice
    assert _steps(writer.path) == [0, 1, 2, 3]


def test_two_writers_never_share_a_file(tmp_path):
    a, b = EventFileWriter(str(tmp_path)), EventFileWriter(str(tmp_path))
    a.add_event(_event(1))
    b.add_event(_event(2))
    a.close()
    b.close()
    assert a.path != b.path and len(glob.glob(str(tmp_path / "events.out.tfevents.*"))) == 2
    assert (_steps(a.path), _steps(b.path)) == ([1], [2])


def test_tf1_file_writer_after_close_warns_and_does_nothing(tmp_path):
    with aics.Graph().as_default():
        fw = v1.FileWriter(str(tmp_path))
        fw.add_event(_event(1))
        fw.close()
        size = os.path.getsize(fw.event_file)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fw.add_event(_event(2))
            fw.flush()
        assert [str(w.message) for w in caught] == [
            "Attempting to use a closed FileWriter. The operation will be a noop unless the "
            "FileWriter is explicitly reopened."] * 2
        assert os.path.getsize(fw.event_file) == size
        fw.reopen()
        fw.add_event(_event(3))
        fw.close()
        assert _steps(fw.event_file) == [3]
