"""The kernels' thread helpers (aicslib/kernels/work_sharder.py): ``run_blocks_overlapping``
computes the shared value once while the blocks start, gives results in block order, runs nested
work inline, and lets no block outlive an error; ``split_blocks`` keeps its GEMM-row minimum."""
import threading
import time

import pytest

from aicslib.accel import work_sharder


@pytest.fixture
def two_threads(monkeypatch):
    monkeypatch.setattr(work_sharder, "NUM_THREADS", 2)


@pytest.mark.parametrize("n_blocks", [1, 2, 5])
def test_blocks_get_the_value_computed_once_and_results_keep_their_order(two_threads, n_blocks):
    prepared, seen = [], []

    def prepare():
        prepared.append(threading.current_thread().name)
        time.sleep(0.01)                                     # the blocks start meanwhile
        return 10

    def fn(b, get):
        v = get()
        seen.append((b, work_sharder.in_worker()))
        return b * v

    blocks = list(range(n_blocks))
    assert work_sharder.run_blocks_overlapping(prepare, fn, blocks) == [10 * b for b in blocks]
    assert prepared == [threading.current_thread().name]      # once, on the calling thread
    assert sorted(b for b, _ in seen) == blocks
    if n_blocks > 1:                                          # (one block may split its own work)
        assert all(inside for _, inside in seen)              # nested work would run inline
    assert not work_sharder.in_worker()                       # and the caller's flag is cleared


def test_with_no_more_blocks_than_threads_the_caller_runs_the_first(two_threads):
    names = {}
    def fn(b, get):
        names[b] = threading.current_thread().name

    work_sharder.run_blocks_overlapping(lambda: None, fn, [0, 1])
    assert names[0] == threading.current_thread().name and names[1].startswith("aics-conv")


@pytest.mark.parametrize("n_blocks,started", [(2, [1]), (3, [0, 1, 2])])
def test_a_failing_prepare_fails_every_block_and_is_raised(two_threads, n_blocks, started):
    finished = []

    def fn(b, get):
        try:
            get()
        finally:
            finished.append(b)

    def prepare():
        raise ValueError("no filters")

    with pytest.raises(ValueError, match="no filters"):
        work_sharder.run_blocks_overlapping(prepare, fn, list(range(n_blocks)))
    assert sorted(finished) == started        # the pool's blocks ended before the raise; the caller's never began


def test_a_failing_block_is_raised_after_the_others_finish(two_threads):
    finished = []

    def fn(b, get):
        if b == 1:
            raise RuntimeError("block 1")
        time.sleep(0.02)
        finished.append(b)

    with pytest.raises(RuntimeError, match="block 1"):
        work_sharder.run_blocks_overlapping(lambda: None, fn, [0, 1])
    assert finished == [0]


def test_split_blocks_keeps_the_minimum_of_gemm_rows():
    # 4 images of 7 rows, 7 GEMM rows per row: 196 rows in all
    assert len(work_sharder.split_blocks(4, 7, 1000, None, 7)) == 1                  # < 2 x 256
    thin = work_sharder.split_blocks(4, 7, 1000, None, 7, min_gemm_rows=96)
    assert thin == [(0, 2, 0, 7), (2, 4, 0, 7)]
    assert len(work_sharder.split_blocks(4, 7, 1000, None, 7, min_gemm_rows=99)) == 1
