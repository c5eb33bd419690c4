"""Multi-device and multi-process training (issue 13, exercise 5.3).

References: TF's documented DeviceSpec parsing; single-device / single-process
training on the whole batch; NumPy sums; brute-force GPipe timetables."""
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import aicslib as aics
from aicslib import flags
from aicslib.client.timeline import Timeline
from aicslib.distribute import average_gradients, launch, simulate_ring_allreduce, split_batch
from aicslib.distribute import comm_model, mpi, ring
from aicslib.distribute.pipeline import Pipeline, Stage, bubble_fraction, gpipe_schedule
from aicslib.distribute.train_data_parallel import train
from aicslib.framework.device import DeviceSpec, canonical_device, session_device_count, visible_device_map

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
TRAIN_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "aicslib", "distribute", "train_data_parallel.py")


def _have_mpi():
    try:
        launch.find_mpiexec()
        return True
    except launch.LaunchError:
        return False


needs_mpi = pytest.mark.skipif(not _have_mpi(), reason="MPI (the [mpi] extra) is not installed")


# --------------------------------------------------------------------------
# Device strings, as TF's DeviceSpec (tensorflow/python/framework/device_spec.py and its tests)

class TestDeviceSpec:
    @pytest.mark.parametrize("spec, parts, string", [
        ("/job:foo/replica:0/task:3/device:CPU:2", ("foo", 0, 3, "CPU", 2),
         "/job:foo/replica:0/task:3/device:CPU:2"),
        ("/job:muu/device:GPU:2", ("muu", None, None, "GPU", 2), "/job:muu/device:GPU:2"),
        ("/replica:1/task:0/cpu:0", (None, 1, 0, "CPU", 0), "/replica:1/task:0/device:CPU:0"),
        ("cpu", (None, None, None, "CPU", None), "/device:CPU:*"),
        ("CPU:1", (None, None, None, "CPU", 1), "/device:CPU:1"),
        ("/CPU:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
        ("/device:CPU:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
        ("/gpu:*", (None, None, None, "GPU", None), "/device:GPU:*"),
        ("/job:localhost/replica:0/task:1/device:CPU:0", ("localhost", 0, 1, "CPU", 0),
         "/job:localhost/replica:0/task:1/device:CPU:0"),
        ("/job:foo/replica:0", ("foo", 0, None, None, None), "/job:foo/replica:0"),
        ("", (None, None, None, None, None), ""),
    ])
    def test_parse_as_tf(self, spec, parts, string):
        d = DeviceSpec.from_string(spec)
        assert (d.job, d.replica, d.task, d.device_type, d.device_index) == parts
        assert d.to_string() == string
        assert canonical_device(spec) == string

    @pytest.mark.parametrize("spec, message", [
        ("/job:foo/gpu:0/cpu:0", "Cannot specify multiple device types: /job:foo/gpu:0/cpu:0"),
        ("/device:CPU:0/device:GPU:1", "Cannot specify multiple device types"),
        ("/job:foo/unknown:0", "Unknown attribute: 'unknown' in '/job:foo/unknown:0'"),
        ("/cpu:x", "invalid literal for int()"),
        ("/replica:abc", "invalid literal for int()"),
    ])
    def test_bad_strings_raise_tf_errors(self, spec, message):
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            DeviceSpec.from_string(spec)
        with pytest.raises(ValueError):
            aics.device(spec).__enter__()

    def test_nested_scopes_merge_as_tf(self):
        # TF's DeviceSpec docstring: inner components override, unset ones are inherited.
        outer = DeviceSpec(job="train")
        inner = DeviceSpec(job="ps", device_type="GPU", device_index=0)
        assert outer.make_merged_spec(inner).to_string() == "/job:ps/device:GPU:0"
        assert outer.make_merged_spec(DeviceSpec(device_type="GPU", device_index=1)).to_string() == \
            "/job:train/device:GPU:1"
        g = aics.Graph()
        with g.as_default():
            with aics.device("/job:localhost/replica:0/task:0"):
                with aics.device("CPU:1"):
                    a = aics.constant(1.0)
                with aics.device(None):   # None clears the device, as in TF
                    b = aics.constant(1.0)
        # this process's own task is reported in the short form (aicslib's simplification)
        assert a.device == "/device:CPU:1"
        assert canonical_device("/job:localhost/replica:0/task:0/device:CPU:0") == "/device:CPU:0"
        assert b.device == ""


# --------------------------------------------------------------------------
# Several logical devices in one process

def _two_device_graph():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [8, 8], name="x")
        with aics.device("/CPU:0"):
            a = aics.matmul(x, x, name="a")
        with aics.device("/job:localhost/replica:0/task:0/device:CPU:1"):
            b = aics.matmul(x, x + 1.0, name="b")
        total = aics.add(a, b, name="total")
    return g, x, total


class TestLogicalDevices:
    def test_placement_is_honoured_and_traced(self):
        g, x, total = _two_device_graph()
        xv = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
        with aics.Session(graph=g, config=aics.ConfigProto(device_count={"CPU": 2})) as s:
            md = aics.RunMetadata()
            out = s.run(total, {x: xv}, options=aics.RunOptions(trace_level=3), run_metadata=md)
        np.testing.assert_allclose(out, xv @ xv + xv @ (xv + 1), rtol=1e-5)
        where = {n.node_name: d.device for d in md.step_stats.dev_stats for n in d.node_stats}
        assert where["a"] == "/device:CPU:0" and where["b"] == "/device:CPU:1"

    def test_missing_device_is_tf_error_without_soft_placement(self):
        g, x, total = _two_device_graph()
        with aics.Session(graph=g, config=aics.ConfigProto(allow_soft_placement=False)) as s:
            with pytest.raises(aics.errors.InvalidArgumentError,
                               match="Could not satisfy explicit device specification"):
                s.run(total, {x: np.ones((8, 8), np.float32)})

    def test_soft_placement_moves_missing_device_to_cpu0(self):
        g, x, total = _two_device_graph()
        with aics.Session(graph=g) as s:
            md = aics.RunMetadata()
            s.run(total, {x: np.ones((8, 8), np.float32)}, options=aics.RunOptions(trace_level=3),
                  run_metadata=md)
        assert [d.device for d in md.step_stats.dev_stats] == ["/device:CPU:0"]

    def test_devices_run_concurrently(self, op_name):
        """Two kernels on two devices each wait for the other to have started: only possible
        when the devices really run at the same time (sequentially each would time out)."""
        name = op_name("Rendezvous")
        aics.register_op(name).input("x: float").output("y: float").attr("side: int")
        events = [threading.Event(), threading.Event()]
        met = []

        @aics.register_kernel(name)
        def _kernel(x, side):
            events[side].set()
            met.append(events[1 - side].wait(timeout=5.0))
            return x
        g = aics.Graph()
        with g.as_default():
            c = aics.constant(1.0)
            with aics.device("/CPU:0"):
                p = getattr(aics.raw_ops, name)(x=c, side=0)
            with aics.device("/CPU:1"):
                q = getattr(aics.raw_ops, name)(x=c, side=1)
            with aics.Session(config=aics.ConfigProto(device_count={"CPU": 2})) as s:
                s.run([p, q])
        assert met == [True, True]

    def test_error_on_one_device_names_the_node(self):
        g = aics.Graph()
        with g.as_default():
            x = aics.placeholder(aics.float32, [None, 3])
            with aics.device("/CPU:0"):
                a = aics.matmul(x, x, name="bad_matmul")   # (2, 3) @ (2, 3): inner sizes differ
            with aics.device("/CPU:1"):
                b = aics.reduce_sum(x, name="fine")
            with aics.Session(config=aics.ConfigProto(device_count={"CPU": 2})) as s:
                with pytest.raises(aics.errors.InvalidArgumentError, match="bad_matmul"):
                    s.run([a, b], {x: np.ones((2, 3), np.float32)})
                assert s.run(b, {x: np.ones((2, 3), np.float32)}) == 6.0

    def test_visible_devices_env(self, monkeypatch):
        monkeypatch.setenv("AICS_VISIBLE_DEVICES", "1,3")
        flags.reload()
        try:
            assert visible_device_map(4) == {0: 1, 1: 3}
            assert session_device_count({"CPU": 4})["CPU"] == 2
            with aics.Session(config=aics.ConfigProto(device_count={"CPU": 4})) as s:
                devs = s.list_devices()
            assert [(d.name, d.device_type, d.physical_index) for d in devs] == [
                ("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1),
                ("/job:localhost/replica:0/task:0/device:CPU:1", "CPU", 3)]
            # as CUDA_VISIBLE_DEVICES, the list stops at the first index that does not exist
            assert visible_device_map(2) == {0: 1}
            g, x, total = _two_device_graph()
            with aics.Session(graph=g, config=aics.ConfigProto(device_count={"CPU": 4},
                                                                allow_soft_placement=False)) as s:
                s.run(total, {x: np.ones((8, 8), np.float32)})   # CPU:1 exists (physical 3)
            monkeypatch.setenv("AICS_VISIBLE_DEVICES", "2")
            flags.reload()
            with aics.Session(graph=g, config=aics.ConfigProto(device_count={"CPU": 4},
                                                                allow_soft_placement=False)) as s:
                with pytest.raises(aics.errors.InvalidArgumentError, match="CPU:1"):
                    s.run(total, {x: np.ones((8, 8), np.float32)})
        finally:
            monkeypatch.delenv("AICS_VISIBLE_DEVICES")
            flags.reload()

    def test_bad_visible_devices_env(self, monkeypatch):
        monkeypatch.setenv("AICS_VISIBLE_DEVICES", "0,a")
        with pytest.raises(ValueError, match="AICS_VISIBLE_DEVICES"):
            flags.reload()
        monkeypatch.delenv("AICS_VISIBLE_DEVICES")
        flags.reload()


def _tower_training(num_devices, steps=3):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(32, 6)).astype(np.float32)
    Y = rng.normal(size=(32, 2)).astype(np.float32)
    W0 = rng.normal(size=(6, 2)).astype(np.float32)
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [32, 6])
        y = aics.placeholder(aics.float32, [32, 2])
        w = aics.Variable(W0, name="w")
        opt = aics.train.GradientDescentOptimizer(0.1)
        towers = []
        for i, (xi, yi) in enumerate(zip(split_batch(x, num_devices), split_batch(y, num_devices))):
            with aics.device(f"/CPU:{i}"), aics.name_scope(f"tower_{i}"):
                loss = aics.reduce_mean(aics.square(aics.matmul(xi, w) - yi))
                towers.append(opt.compute_gradients(loss, [w]))
        with aics.device("/CPU:0"):
            step = opt.apply_gradients(average_gradients(towers))
        with aics.Session(config=aics.ConfigProto(device_count={"CPU": num_devices})) as s:
            s.run(aics.global_variables_initializer())
            md = aics.RunMetadata()
            for _ in range(steps):
                s.run(step, {x: X, y: Y}, options=aics.RunOptions(trace_level=3), run_metadata=md)
            return s.run(w), md, (X, Y, W0)


class TestTowers:
    def test_replicated_towers_equal_single_device_and_numpy(self):
        w1, _, (X, Y, W0) = _tower_training(1)
        w4, md, _ = _tower_training(4)
        w = W0.astype(np.float64)
        for _ in range(3):   # plain NumPy gradient descent on the whole batch
            w -= 0.1 * 2 * X.T @ (X @ w - Y) / Y.size
        np.testing.assert_allclose(w1, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w4, w, rtol=1e-5, atol=1e-6)
        assert {d.device for d in md.step_stats.dev_stats} == {f"/device:CPU:{i}" for i in range(4)}

    def test_average_gradients_checks_towers(self):
        with pytest.raises(ValueError, match="one .gradient, variable. list per tower"):
            average_gradients([])

    def test_chrome_trace(self):
        _, md, _ = _tower_training(2, steps=1)
        trace = json.loads(Timeline(md.step_stats).generate_chrome_trace_format())
        events = trace["traceEvents"]
        names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
        assert sorted(names.values()) == ["/device:CPU:0 Compute", "/device:CPU:1 Compute"]
        nodes = [e for e in events if e["ph"] == "X"]
        stats = [n for d in md.step_stats.dev_stats for n in d.node_stats]
        assert len(nodes) == len(stats)
        by_name = {e["args"]["name"]: e for e in nodes}
        for n in stats:
            e = by_name[n.node_name]
            assert (e["ts"], e["dur"], e["name"]) == (n.all_start_micros, n.all_end_rel_micros, n.op)
            assert names[e["pid"]] == f"{n.device} Compute"
        flows = [e for e in events if e["ph"] in "st"]
        assert flows, "tower 1 reads the variable on CPU:0: a cross-device edge"
        for s, t in zip(flows[::2], flows[1::2]):
            assert s["id"] == t["id"] and s["pid"] != t["pid"] and s["ts"] <= t["ts"] + 1

    def test_timeline_plot_has_a_lane_per_device(self):
        import matplotlib
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        _, md, _ = _tower_training(2, steps=1)
        ax = Timeline(md.step_stats).plot()
        assert [t.get_text() for t in ax.get_yticklabels()] == ["/device:CPU:0", "/device:CPU:1"]
        plt.close(ax.figure)


# --------------------------------------------------------------------------
# Ring-allreduce, in one process and over MPI

@given(st.integers(1, 6), st.integers(0, 40), st.integers(0, 2**31 - 1))
def test_simulated_ring_equals_numpy_sum(p, n, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(-100, 100, size=n).astype(np.float64) for _ in range(p)]
    history = []
    out = simulate_ring_allreduce(arrays, history=history)
    expected = np.sum(arrays, axis=0)
    for o in out:
        np.testing.assert_array_equal(o, expected)   # integer-valued: exact in any order
    assert len(history) == 2 * (p - 1)
    # after reduce-scatter, rank r holds the complete chunk (r + 1) mod p
    if p > 1:
        bounds = ring.chunk_bounds(n, p)
        after_rs = history[p - 2][2]
        for r in range(p):
            lo, hi = bounds[(r + 1) % p]
            np.testing.assert_array_equal(after_rs[r][lo:hi], expected[lo:hi])


@given(st.integers(0, 50), st.integers(1, 8))
def test_chunk_bounds_match_array_split(n, p):
    expected = [len(c) for c in np.array_split(np.arange(n), p)]
    assert [hi - lo for lo, hi in ring.chunk_bounds(n, p)] == expected


@needs_mpi
@settings(max_examples=1)   # each example is a 2-process MPI job (~2 s); plus the explicit one
@example(sizes=[0, 1, 2, 3, 5, 7, 8, 13, 100, 1001])
@given(st.lists(st.integers(0, 5000), min_size=1, max_size=10))
def test_ring_equals_mpi_allreduce_equals_numpy(sizes):
    ranks = 2
    r = launch.run(os.path.join(SCRIPTS, "collectives_check.py"), ranks, [",".join(map(str, sizes))],
                   capture=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": OK") == ranks


# --------------------------------------------------------------------------
# Data-parallel training over MPI

@needs_mpi
def test_two_ranks_on_half_batches_equal_one_process_on_the_batch(tmp_path):
    out = tmp_path / "dp.npz"
    r = launch.run(TRAIN_SCRIPT, 2, ["--batch", 32, "--steps", 4, "--algorithm", "ring", "--out", out],
                   capture=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    weights, losses, _ = train(32, 4)    # one process, whole batch, no MPI
    with np.load(out, allow_pickle=False) as d:
        assert int(d["size"]) == 2
        np.testing.assert_allclose(d["losses"], losses, rtol=1e-5)
        for i, w in enumerate(weights):
            np.testing.assert_allclose(d[f"w{i}"], w, rtol=1e-5, atol=1e-6)
    assert not np.allclose(weights[0], train(32, 0)[0][0]), "training must have moved the weights"


@needs_mpi
def test_a_killed_rank_fails_the_job_within_seconds(tmp_path):
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "aicslib.distribute.launch", "-n", "2", TRAIN_SCRIPT,
                        "--batch", "8", "--steps", "50", "--die-rank", "1", "--die-step", "1"],
                       capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - start
    assert r.returncode != 0
    assert "the job failed" in r.stderr
    assert elapsed < 30, f"took {elapsed:.1f}s"


@needs_mpi
def test_a_rank_that_never_arrives_makes_the_collective_time_out(tmp_path):
    # Rank 1 stays alive but never calls allreduce (a rank that exits instead races MPI's own
    # teardown: the launcher may kill rank 0 before its deadline, and then nothing is printed).
    script = tmp_path / "stray.py"
    script.write_text("import time\nimport numpy as np\nfrom aicslib.distribute import init, allreduce\n"
                      "c = init()\nif c.Get_rank() == 1:\n    time.sleep(50)\nallreduce(np.ones(3))\n")
    env = dict(os.environ, AICS_MPI_TIMEOUT="1")
    r = launch.run(str(script), 2, capture=True, timeout=60, env=env)
    assert r.returncode != 0
    assert "DeadlineExceededError: allreduce of a float64[3] array on rank 0 of 2 timed out" in r.stderr


@needs_mpi
def test_launcher_timeout_kills_the_whole_job(tmp_path):
    script = tmp_path / "hang.py"
    script.write_text("import time\nfrom aicslib.distribute import init\ninit()\ntime.sleep(120)\n")
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        launch.run(str(script), 2, capture=True, timeout=2)
    assert time.monotonic() - start < 30
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(script) not in ps, "a rank outlived the launcher's timeout"


class TestLauncherErrors:
    @pytest.mark.parametrize("text, message", [
        ("node1:4\nnode2 slots=x\n", "line 2: slots must be a positive integer, got 'x'"),
        ("node1:0\n", "line 1: slots must be a positive integer, got '0'"),
        ("# only a comment\n\n", "lists no hosts"),
        ("node1 some junk\n", "line 1: 'node1 some junk' is not a host entry"),
        ("bad/host\n", "line 1: 'bad/host' is not a host entry"),
    ])
    def test_bad_hostfile(self, tmp_path, text, message):
        f = tmp_path / "hosts"
        f.write_text(text)
        with pytest.raises(launch.LaunchError, match=message.replace("(", r"\(")):
            launch.parse_hostfile(str(f))

    def test_hostfile_formats(self, tmp_path):
        f = tmp_path / "hosts"
        f.write_text("a.example:4  # MPICH\nb slots=2\nc\n")
        assert launch.parse_hostfile(str(f)) == [("a.example", 4), ("b", 2), ("c", 1)]

    def test_missing_hostfile_from_the_command_line(self, tmp_path, capsys):
        rc = launch.main(["-n", "2", "--hostfile", str(tmp_path / "nope"), TRAIN_SCRIPT])
        err = capsys.readouterr().err
        assert rc == 2 and "does not exist" in err and "nope" in err

    def test_missing_mpiexec_names_the_extra(self, monkeypatch, tmp_path):
        monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
        monkeypatch.setenv("PATH", str(tmp_path))
        with pytest.raises(launch.LaunchError, match=r"pip install -e '\.\[mpi\]'"):
            launch.find_mpiexec()

    def test_missing_mpi4py_names_the_extra(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "mpi4py", None)
        with pytest.raises(ImportError, match=r"pip install -e '\.\[mpi\]'"):
            mpi.import_mpi()


# --------------------------------------------------------------------------
# Model parallelism: GPipe

def _mlp_graph(split, micro_batches=4):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(16, 5)).astype(np.float32)
    Y = rng.normal(size=(16, 2)).astype(np.float32)
    Ws = [rng.normal(scale=0.5, size=s).astype(np.float32) for s in [(5, 8), (8, 8), (8, 2)]]
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [16, 5])
        y = aics.placeholder(aics.float32, [16, 2])
        ws = [aics.Variable(w) for w in Ws]
        fns = [lambda h, w=ws[0]: aics.tanh(aics.matmul(h, w)),
               lambda h, w=ws[1]: aics.tanh(aics.matmul(h, w)),
               lambda h, w=ws[2]: aics.matmul(h, w)]

        def mse(pred, target):
            return aics.reduce_mean(aics.square(pred - target))
        if split:
            loss, gv = Pipeline([Stage(f, [w]) for f, w in zip(fns, ws)],
                                num_micro_batches=micro_batches).build(x, y, mse)
        else:
            h = x
            for f in fns:
                h = f(h)
            loss = mse(h, y)
            gv = list(zip(aics.gradients(loss, ws), ws))
        with aics.Session(config=aics.ConfigProto(device_count={"CPU": 3})) as s:
            s.run(aics.global_variables_initializer())
            md = aics.RunMetadata()
            out = s.run([loss] + [gr for gr, _ in gv], {x: X, y: Y},
                        options=aics.RunOptions(trace_level=3), run_metadata=md)
    return out, md


@pytest.mark.parametrize("micro_batches", [1, 2, 4])
def test_gpipe_equals_unsplit_network(micro_batches):
    ref, _ = _mlp_graph(False)
    got, md = _mlp_graph(True, micro_batches)
    for a, b in zip(ref, got):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    stage_of = {}
    for d in md.step_stats.dev_stats:
        for n in d.node_stats:
            if n.node_name.startswith("stage"):
                stage_of.setdefault(n.node_name.split("/")[0], set()).add(d.device)
    assert stage_of == {f"stage{s}": {f"/device:CPU:{s}"} for s in range(3)}


@needs_mpi
def test_gpipe_across_three_processes_equals_unsplit_network():
    r = launch.run(os.path.join(SCRIPTS, "pipeline_check.py"), 3, capture=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": OK") == 3


@given(st.integers(1, 6), st.integers(1, 8))
def test_gpipe_schedule_bubble(stages, micro):
    sched = gpipe_schedule(stages, micro, 1.0, 2.0)
    assert len(sched) == 2 * stages * micro
    for s in range(stages):   # no stage does two things at once
        spans = sorted((a, b) for st_, _, _, a, b in sched if st_ == s)
        assert all(b0 <= a1 for (_, b0), (a1, _) in zip(spans, spans[1:]))
    end = {(k, s, m): b for s, k, m, a, b in sched}
    start = {(k, s, m): a for s, k, m, a, b in sched}
    for s, k, m, a, b in sched:    # data dependencies
        if k == "F" and s > 0:
            assert a >= end[("F", s - 1, m)]
        if k == "B" and s < stages - 1:
            assert a >= end[("B", s + 1, m)]
        if k == "B":
            assert a >= end[("F", s, m)]
    makespan = max(b for *_, b in sched)
    busy = sum(b - a for *_, a, b in sched)
    assert abs((1 - busy / (stages * makespan)) - bubble_fraction(stages, micro)) < 1e-9
    assert start[("F", 0, 0)] == 0.0


# --------------------------------------------------------------------------
# The alpha-beta model

@given(st.integers(1, 64), st.integers(1, 10**7))
def test_allreduce_model_counts_ring_messages(p, n):
    alpha, beta = 1e-5, 1e-9
    # brute force: 2 (p - 1) steps, each a message of one chunk (the largest, as steps are in lockstep)
    chunk = -(-n // p)
    brute = 0.0 if p == 1 else 2 * (p - 1) * (alpha + chunk * beta)
    model = float(comm_model.allreduce_time(n, p, alpha, beta))
    assert model <= brute + 1e-15 and brute - model <= 2 * (p - 1) * beta + 1e-15


def test_fit_alpha_beta_recovers_line():
    sizes = np.array([8, 1024, 65536, 1 << 20])
    a, b = comm_model.fit_alpha_beta(sizes, 2e-6 + sizes * 3e-10)
    assert abs(a - 2e-6) < 1e-9 and abs(b - 3e-10) < 1e-13
    assert float(comm_model.speedup(1.0, 0, 8, 0.0, 0.0)) == pytest.approx(8.0)
