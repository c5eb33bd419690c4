"""The queue runtime (aicslib/framework/queue_state.py), without any graph.

Every blocking call in these tests has a timeout, and every thread is joined
with one, so a bug makes a test fail instead of hanging the suite.
"""
import threading
import time

import numpy as np
import pytest

from aicslib.framework.errors import (CancelledError, DeadlineExceededError,
                                      InvalidArgumentError, OutOfRangeError)
from aicslib.framework.queue_state import FIFOQueueState, RandomShuffleQueueState

T = 5.0  # generous timeout for calls that should succeed


def _start(fn, *args):
    box = {}

    def run():
        try:
            box["result"] = fn(*args)
        except BaseException as e:
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


def _join(t, timeout=T):
    t.join(timeout)
    assert not t.is_alive(), "thread still blocked: deadlock?"


def _wait_until(cond, timeout=T):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition never became true"
        time.sleep(0.002)


# -- construction and validation ---------------------------------------------------

def test_fifo_order_and_components():
    q = FIFOQueueState(10, ["float32", np.int32], shapes=[[2], []])
    q.enqueue(([1, 2], 0))
    q.enqueue_many((np.array([[3, 4], [5, 6]], np.float32), [1, 2]))
    assert q.size() == 3 and len(q) == 3
    x, y = q.dequeue(timeout=T)
    assert x.dtype == np.float32 and x.tolist() == [1, 2] and y.dtype == np.int32 and y == 0
    xs, ys = q.dequeue_many(2, timeout=T)
    assert xs.shape == (2, 2) and xs.tolist() == [[3, 4], [5, 6]] and ys.tolist() == [1, 2]
    assert q.size() == 0


def test_single_component_returns_bare_array():
    q = FIFOQueueState(5, np.float32, shapes=[3])
    assert q.shapes[0].as_list() == [3]
    q.enqueue(np.ones(3, np.float32))
    q.enqueue([np.zeros(3, np.float32)])          # a list is the list of components
    assert q.dequeue(timeout=T).tolist() == [1, 1, 1]
    assert q.dequeue_many(1, timeout=T).shape == (1, 3)


def test_scalar_shape_and_names():
    q = FIFOQueueState(5, [np.int64, np.float32], shapes=[[], [2]], names=["label", "image"])
    q.enqueue({"label": 3, "image": [0.5, 1.5]})
    q.enqueue_many({"label": [4, 5], "image": np.zeros((2, 2), np.float32)})
    out = q.dequeue(timeout=T)
    assert set(out) == {"label", "image"} and out["label"] == 3
    batch = q.dequeue_many(2, timeout=T)
    assert batch["label"].tolist() == [4, 5] and batch["image"].shape == (2, 2)
    with pytest.raises(InvalidArgumentError, match="do not match"):
        q.enqueue({"label": 1})
    with pytest.raises(InvalidArgumentError, match="expects a dict"):
        q.enqueue((1, [0.0, 0.0]))


def test_enqueue_copies_values():
    q = FIFOQueueState(5, np.float32)
    a = np.zeros(2, np.float32)
    q.enqueue(a)
    a[0] = 9
    assert q.dequeue(timeout=T).tolist() == [0, 0]


@pytest.mark.parametrize("vals, match", [
    ((np.zeros(2, np.float64), 1), r"type mismatch in tuple component 0\. Expected float32, got float64"),
    (([1.0, 2.0], 1.5), r"type mismatch in tuple component 1\. Expected int32"),
    (([1.0, 2.0, 3.0], 1), r"shape mismatch in tuple component 0\. Expected \[2\], got \[3\]"),
    (([1.0, 2.0],), r"expected 2 components .* got 1"),
    ((np.zeros(2, np.float32), np.int64(3)), "Expected int32, got int64"),
])
def test_enqueue_validation(vals, match):
    q = FIFOQueueState(5, [np.float32, np.int32], shapes=[[2], []], name="q")
    with pytest.raises(InvalidArgumentError, match=match) as info:
        q.enqueue(vals)
    assert "FIFOQueue 'q'" in str(info.value)
    assert q.size() == 0


def test_enqueue_many_validation():
    q = FIFOQueueState(5, [np.float32, np.int32], shapes=[[2], []])
    with pytest.raises(InvalidArgumentError, match=r"same size in dimension 0, got sizes \[2, 3\]"):
        q.enqueue_many((np.zeros((2, 2), np.float32), [1, 2, 3]))
    with pytest.raises(InvalidArgumentError, match="scalar"):
        q.enqueue_many((np.zeros((2, 2), np.float32), 1))
    with pytest.raises(InvalidArgumentError, match=r"Expected \[2\], got \[3\]"):
        q.enqueue_many((np.zeros((2, 3), np.float32), [1, 2]))
    assert q.size() == 0


def test_constructor_validation():
    with pytest.raises(ValueError, match="capacity must be >= 1"):
        FIFOQueueState(0, np.float32)
    with pytest.raises(TypeError, match="capacity must be an integer"):
        FIFOQueueState(2.5, np.float32)
    with pytest.raises(ValueError, match="same length as dtypes"):
        FIFOQueueState(2, [np.float32, np.int32], shapes=[[2]])
    with pytest.raises(TypeError):
        FIFOQueueState(2, "complex9")
    with pytest.raises(ValueError, match="min_after_dequeue .* less than capacity"):
        RandomShuffleQueueState(5, 5, np.float32)
    with pytest.raises(ValueError, match=">= 0"):
        RandomShuffleQueueState(5, -1, np.float32)


def test_unknown_shapes_dequeue_many():
    q = FIFOQueueState(5, np.float32)
    q.enqueue(np.zeros(2, np.float32))
    q.enqueue(np.zeros(3, np.float32))
    with pytest.raises(InvalidArgumentError, match="different shapes"):
        q.dequeue_many(2, timeout=T)
    assert q.size() == 2                      # elements given back, in order
    assert q.dequeue(timeout=T).shape == (2,)


def test_dequeue_zero_and_bad_n():
    q = FIFOQueueState(5, np.float32, shapes=[[3]])
    assert q.dequeue_many(0).shape == (0, 3)
    with pytest.raises(InvalidArgumentError, match="integer >= 0"):
        q.dequeue_many(-1)


# -- blocking ------------------------------------------------------------------------

def test_dequeue_blocks_until_enqueue():
    q = FIFOQueueState(2, np.int32)
    t, box = _start(q.dequeue, T)
    time.sleep(0.05)
    assert t.is_alive()
    q.enqueue(7)
    _join(t)
    assert box["result"] == 7


def test_enqueue_blocks_when_full():
    q = FIFOQueueState(2, np.int32)
    q.enqueue_many([[1, 2]])
    t, box = _start(q.enqueue, 3, T)
    time.sleep(0.05)
    assert t.is_alive() and q.size() == 2
    assert q.dequeue(timeout=T) == 1
    _join(t)
    assert "error" not in box
    assert q.dequeue_many(2, timeout=T).tolist() == [2, 3]


def test_timeouts_raise_deadline_exceeded():
    q = FIFOQueueState(1, np.int32)
    t0 = time.monotonic()
    with pytest.raises(DeadlineExceededError, match="timed out"):
        q.dequeue(timeout=0.05)
    assert time.monotonic() - t0 >= 0.04
    q.enqueue(1)
    with pytest.raises(DeadlineExceededError):
        q.enqueue(2, timeout=0.05)
    # A dequeue_many that times out gives back what it took.
    with pytest.raises(DeadlineExceededError):
        q.dequeue_many(2, timeout=0.05)
    assert q.size() == 1 and q.dequeue(timeout=T) == 1


def test_batches_larger_than_capacity_flow_through():
    q = FIFOQueueState(3, np.int32)
    t, box = _start(q.enqueue_many, [np.arange(10, dtype=np.int32)], T)
    out = q.dequeue_many(10, timeout=T)
    _join(t)
    assert out.tolist() == list(range(10)) and "error" not in box


def test_dequeue_many_not_overtaken():
    """A waiting dequeue_many(3) is served before a later dequeue()."""
    q = FIFOQueueState(10, np.int32)
    t1, box1 = _start(q.dequeue_many, 3, T)
    _wait_until(lambda: len(q._dequeuers) == 1)
    t2, box2 = _start(q.dequeue, T)
    _wait_until(lambda: len(q._dequeuers) == 2)
    q.enqueue_many([[1, 2]])
    time.sleep(0.05)
    assert t1.is_alive() and t2.is_alive()
    q.enqueue_many([[3, 4]])
    _join(t1)
    _join(t2)
    assert box1["result"].tolist() == [1, 2, 3] and box2["result"] == 4


def test_enqueue_many_batches_do_not_interleave():
    q = FIFOQueueState(2, np.int32)
    ta, _ = _start(q.enqueue_many, [np.full(6, 1, np.int32)], T)
    _wait_until(lambda: q.size() == 2)
    tb, _ = _start(q.enqueue_many, [np.full(6, 2, np.int32)], T)
    _wait_until(lambda: len(q._enqueuers) == 2)
    out = q.dequeue_many(12, timeout=T)
    _join(ta)
    _join(tb)
    assert out.tolist() == [1] * 6 + [2] * 6


# -- close -----------------------------------------------------------------------------

def test_close_semantics():
    q = FIFOQueueState(10, np.int32, shapes=[[]])
    q.enqueue_many([[1, 2, 3]])
    assert not q.is_closed()
    q.close()
    assert q.is_closed()
    with pytest.raises(CancelledError, match="is closed"):
        q.enqueue(4)
    with pytest.raises(CancelledError):
        q.enqueue_many([[4, 5]])
    assert q.dequeue(timeout=T) == 1                 # remaining elements still come out
    with pytest.raises(OutOfRangeError, match=r"requested 3, current size 2"):
        q.dequeue_many(3, timeout=T)
    assert q.size() == 2                              # nothing lost by the failed attempt
    assert q.dequeue_up_to(5, timeout=T).tolist() == [2, 3]
    with pytest.raises(OutOfRangeError):
        q.dequeue_up_to(5, timeout=T)
    with pytest.raises(OutOfRangeError):
        q.dequeue(timeout=T)
    q.close()                                         # closing twice is harmless


def test_close_wakes_blocked_dequeuers():
    q = FIFOQueueState(10, np.int32)
    threads = [_start(q.dequeue, T) for _ in range(3)]
    many = _start(q.dequeue_many, 4, T)
    up_to = _start(q.dequeue_up_to, 4, T)
    _wait_until(lambda: len(q._dequeuers) == 5)
    q.close()
    for t, box in threads + [many, up_to]:
        _join(t)
        assert isinstance(box.get("error"), OutOfRangeError)


def test_dequeue_up_to_returns_fewer_after_close():
    q = FIFOQueueState(10, np.int32)
    t, box = _start(q.dequeue_up_to, 5, T)
    _wait_until(lambda: len(q._dequeuers) == 1)
    q.enqueue_many([[1, 2]])
    time.sleep(0.05)
    assert t.is_alive()                               # open queue: waits for 5
    q.close()
    _join(t)
    assert box["result"].tolist() == [1, 2]


def test_close_keeps_pending_enqueues_unless_cancelled():
    q = FIFOQueueState(1, np.int32)
    q.enqueue(1)
    t, box = _start(q.enqueue, 2, T)
    _wait_until(lambda: len(q._enqueuers) == 1)
    q.close()                                         # pending enqueue survives
    assert q.dequeue(timeout=T) == 1
    assert q.dequeue(timeout=T) == 2
    _join(t)
    assert "error" not in box
    with pytest.raises(OutOfRangeError):
        q.dequeue(timeout=T)


def test_close_cancel_pending_enqueues():
    q = FIFOQueueState(2, np.int32)
    q.enqueue_many([[1, 2]])
    single = _start(q.enqueue, 3, T)
    batch = _start(q.enqueue_many, [[4, 5, 6]], T)
    _wait_until(lambda: len(q._enqueuers) == 2)
    q.close(cancel_pending_enqueues=True)
    for t, box in (single, batch):
        _join(t)
        assert isinstance(box.get("error"), CancelledError)
        assert "cancel_pending_enqueues" in str(box["error"])
    assert q.dequeue_up_to(10, timeout=T).tolist() == [1, 2]


def test_dequeue_waits_for_pending_enqueue_after_close():
    """A dequeue_many after close still gets elements a pending enqueue delivers."""
    q = FIFOQueueState(2, np.int32)
    t, _ = _start(q.enqueue_many, [[1, 2, 3, 4]], T)
    _wait_until(lambda: q.size() == 2)
    q.close()
    assert q.dequeue_many(4, timeout=T).tolist() == [1, 2, 3, 4]
    _join(t)


def test_cancel_all():
    q = FIFOQueueState(1, np.int32)
    d = _start(q.dequeue, T)
    _wait_until(lambda: len(q._dequeuers) == 1)
    q.cancel_all("session closed")
    _join(d[0])
    assert isinstance(d[1]["error"], CancelledError) and "session closed" in str(d[1]["error"])
    q.enqueue(1)                                      # still usable
    assert q.dequeue(timeout=T) == 1


# -- RandomShuffleQueue ---------------------------------------------------------------

def _drain(q):
    out = []
    while True:
        try:
            out.append(int(q.dequeue(timeout=T)))
        except OutOfRangeError:
            return out


def test_random_shuffle_seeded_determinism():
    def run(seed):
        q = RandomShuffleQueueState(100, 10, np.int32, shapes=[[]], seed=seed)
        q.enqueue_many([np.arange(50, dtype=np.int32)])
        first = q.dequeue_many(20, timeout=T).tolist()
        q.close()
        return first + _drain(q)

    a, b, c = run(42), run(42), run(7)
    assert a == b
    assert a != c
    assert sorted(a) == list(range(50))
    assert a != list(range(50))


def test_random_shuffle_min_after_dequeue():
    q = RandomShuffleQueueState(20, 5, np.int32, seed=1)
    q.enqueue_many([np.arange(8, dtype=np.int32)])
    got = q.dequeue_many(3, timeout=T)
    assert len(got) == 3 and q.size() == 5
    with pytest.raises(DeadlineExceededError):        # 5 left = min_after_dequeue: blocks
        q.dequeue(timeout=0.05)
    t, box = _start(q.dequeue_many, 2, T)
    time.sleep(0.05)
    assert t.is_alive()
    q.enqueue(100)
    time.sleep(0.05)
    assert t.is_alive()                               # only one above the minimum so far
    q.enqueue(101)
    _join(t)
    assert q.size() == 5
    q.close()                                         # closed: the minimum no longer holds
    rest = q.dequeue_up_to(100, timeout=T)
    assert len(rest) == 5
    assert sorted(got.tolist() + box["result"].tolist() + rest.tolist()) == \
        list(range(8)) + [100, 101]


def test_random_shuffle_mixes_well():
    q = RandomShuffleQueueState(1000, 500, np.int32, seed=3)
    q.enqueue_many([np.arange(1000, dtype=np.int32)])
    first = q.dequeue_many(100, timeout=T)
    # Uniform over the 1000 elements: the mean index is near 500, not near 50.
    assert 350 < first.mean() < 650


# -- stress ------------------------------------------------------------------------------

@pytest.mark.timeout(60)
@pytest.mark.parametrize("make", [
    lambda: FIFOQueueState(7, [np.int64, np.float32], shapes=[[], [2]]),
    lambda: RandomShuffleQueueState(16, 4, [np.int64, np.float32], shapes=[[], [2]], seed=0),
], ids=["fifo", "random_shuffle"])
def test_stress_many_producers_and_consumers(make):
    """4 producers (enqueue and enqueue_many), 4 consumers (dequeue, dequeue_many,
    dequeue_up_to), then close: every item comes out exactly once, intact."""
    q = make()
    n_producers, per_producer = 4, 600
    errors = []
    consumed = [[] for _ in range(4)]

    def producer(p):
        try:
            base = p * per_producer
            i = 0
            while i < per_producer:
                k = min(1 + (i % 5), per_producer - i)
                ids = np.arange(base + i, base + i + k, dtype=np.int64)
                payload = np.stack([ids, -ids], axis=1).astype(np.float32)
                if k == 1:
                    q.enqueue((ids[0], payload[0]), timeout=T)
                else:
                    q.enqueue_many((ids, payload), timeout=T)
                i += k
        except BaseException as e:
            errors.append(e)

    def consumer(c):
        out = consumed[c]
        try:
            while True:
                try:
                    if c == 0:
                        ids, payload = q.dequeue(timeout=T)
                        ids, payload = ids[None], payload[None]
                    elif c == 1:
                        ids, payload = q.dequeue_many(3, timeout=T)
                    else:
                        ids, payload = q.dequeue_up_to(4, timeout=T)
                except OutOfRangeError:
                    return
                assert np.array_equal(payload[:, 0], ids) and np.array_equal(payload[:, 1], -ids)
                out.extend(ids.tolist())
        except BaseException as e:
            errors.append(e)

    producers = [threading.Thread(target=producer, args=(p,), daemon=True)
                 for p in range(n_producers)]
    consumers = [threading.Thread(target=consumer, args=(c,), daemon=True) for c in range(4)]
    for t in producers + consumers:
        t.start()
    for t in producers:
        _join(t, 30)
    q.close()
    for t in consumers:
        _join(t, 30)
    assert not errors, errors
    everything = sorted(x for out in consumed for x in out)
    total = n_producers * per_producer
    # dequeue_many(3) may leave up to 2 items that only dequeue_up_to/dequeue can take;
    # they are taken by the other consumers, so nothing is left behind.
    assert q.size() == 0
    assert everything == list(range(total))


@pytest.mark.timeout(60)
def test_stress_close_with_cancel_no_deadlock():
    """Producers blocked on a full queue, consumers blocked on an empty one: a
    close(cancel_pending_enqueues=True) releases all of them; items that went in
    come out exactly once."""
    for trial in range(5):
        q = FIFOQueueState(3, np.int64)
        accepted = [[] for _ in range(3)]
        got = []
        lock = threading.Lock()

        def producer(p):
            for i in range(1000):
                item = p * 1000 + i
                try:
                    q.enqueue(item, timeout=T)
                except CancelledError:
                    return
                accepted[p].append(item)

        def consumer():
            while True:
                try:
                    x = q.dequeue(timeout=T)
                except OutOfRangeError:
                    return
                with lock:
                    got.append(int(x))
                time.sleep(0)

        ps = [threading.Thread(target=producer, args=(p,), daemon=True) for p in range(3)]
        cs = [threading.Thread(target=consumer, daemon=True) for _ in range(2)]
        for t in ps + cs:
            t.start()
        time.sleep(0.01 * (trial + 1))
        q.close(cancel_pending_enqueues=True)
        for t in ps + cs:
            _join(t, 20)
        assert sorted(got) == sorted(x for a in accepted for x in a)
        assert q.size() == 0
