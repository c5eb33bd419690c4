"""Notebook 19's ring-allreduce lab: the reference states it is graded against, the in-process
communicator its per-rank program runs on, and the real MPI run of a function given as source.

References: aicslib's own step-by-step simulation (``ring.simulate_ring_allreduce``'s history,
written independently of the states computed from the definition) and NumPy sums."""
import inspect
import time

import numpy as np
import pytest

from aicslib.distribute import launch, ring
from aicslib.distribute.run_function import run_on_ranks
from workbook import grading
from workbook.references import ring_allreduce as ref
from workbook.references import ring_checks


def _have_mpi():
    try:
        launch.find_mpiexec()
        return True
    except launch.LaunchError:
        return False


CASES = [(1, 5), (2, 4), (3, 7), (4, 10), (5, 3), (6, 23), (3, 0)]


@pytest.mark.parametrize("p,n", CASES)
def test_states_from_the_definition_equal_the_simulated_steps(p, n):
    arrays = [np.random.default_rng(p * 10 + n + r).integers(-9, 10, n).astype(np.float64) for r in range(p)]
    history = []
    ring.simulate_ring_allreduce(arrays, history=history)
    for phase, step, bufs in history:
        expected = ref.state(phase, arrays, step + 1)
        for r in range(p):
            np.testing.assert_array_equal(bufs[r], expected[r], err_msg=f"{phase} step {step} rank {r}")
    assert ref.chunk_bounds(n, p) == ring.chunk_bounds(n, p)


@pytest.mark.parametrize("p,n", CASES)
def test_the_reference_passes_every_check(p, n, monkeypatch):
    # the references are the library's own code: the rule against calling the library is not what
    # this test checks (the lab's wrong answers that call it are, in tests/grading)
    monkeypatch.setattr(grading, "no_library_calls", lambda fn, *a, allowed=(), what=None, how=None, **k: fn(*a, **k))
    ring_checks.check_step_function(ring.reduce_scatter_step, "reduce-scatter", p, n, 1, "rs")
    ring_checks.check_step_function(ring.allgather_step, "allgather", p, n, 1, "ag")
    ring_checks.check_rank_program(ref.ring_allreduce_rank, p, n, 1, "ref")
    ring_checks.check_rank_program(ref.ring_allreduce_rank, p, n, 2, "ref", dtype=np.float32)


def test_a_whole_phase_at_step_0_fails():
    def rs_at_once(buffers, step):      # every step of the phase, all at step 0: the end state is right
        if step == 0:
            p = len(buffers)
            bounds = [(c.min(), c.max() + 1) for c in np.array_split(np.arange(buffers[0].size), p)]
            for s in range(p - 1):
                sent = [buffers[(r - 1) % p][slice(*bounds[(r - s - 1) % p])].copy() for r in range(p)]
                for r in range(p):
                    buffers[r][slice(*bounds[(r - s - 1) % p])] += sent[r]
    with pytest.raises(grading.CheckFailed, match="after reduce-scatter step 0"):
        ring_checks.check_step_function(rs_at_once, "reduce-scatter", 3, 7, 1, "rs")


def test_the_comm_refuses_collectives_and_reports_a_missing_message_quickly():
    def collective(comm, x):
        comm.Allreduce(x, x.copy())

    with pytest.raises(grading.CheckFailed, match="comm.Allreduce is not available"):
        ring_checks.check_rank_program(collective, 2, 4, 1, "collective")

    def one_message_short(comm, x):
        p, r = comm.Get_size(), comm.Get_rank()
        if r == 0:
            return x.copy()
        got = np.empty_like(x)
        comm.Sendrecv(x.copy(), dest=(r + 1) % p, recvbuf=got, source=(r - 1) % p)
        return x + got

    t0 = time.monotonic()
    with pytest.raises(grading.CheckFailed, match="never comes"):
        ring_checks.check_rank_program(one_message_short, 3, 6, 1, "short")
    assert time.monotonic() - t0 < 5


def test_simulation_takes_an_allgather_step():
    calls = []

    def counting(buffers, step):
        calls.append(step)
        ring.allgather_step(buffers, step)

    arrays = [np.arange(5.0) * r for r in range(4)]
    out = ring.simulate_ring_allreduce(arrays, allgather=counting)
    assert calls == [0, 1, 2]
    np.testing.assert_array_equal(out[2], np.sum(arrays, axis=0))


@pytest.mark.skipif(not _have_mpi(), reason="MPI (the [mpi] extra) is not installed")
def test_a_function_given_as_source_runs_on_real_ranks():
    arrays = [np.random.default_rng(r).standard_normal(101).astype(np.float32) for r in range(3)]
    results, seconds, job = run_on_ranks(inspect.getsource(ref), "ring_allreduce_rank", arrays, timeout=120)
    assert job.returncode == 0 and len(seconds) == 3
    for out in results:
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, np.sum(arrays, axis=0), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="failed"):
        run_on_ranks("def broken(comm, x):\n    raise ValueError('no')\n", "broken", arrays[:2], timeout=120)
