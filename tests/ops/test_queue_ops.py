"""Queues as graph ops and eagerly; QueueRunner, Coordinator, batch/shuffle_batch."""
import threading
import time

import numpy as np
import pytest

import aicslib as aics
from aicslib.framework.errors import CancelledError, OutOfRangeError


def test_eager_queue():
    q = aics.FIFOQueue(3, aics.float32, shapes=[2])
    q.enqueue(np.array([1.0, 2.0], np.float32))
    q.enqueue_many(np.array([[3.0, 4.0], [5.0, 6.0]], np.float32))
    assert int(q.size()) == 3
    np.testing.assert_array_equal(q.dequeue().numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(q.dequeue_many(2).numpy(), [[3, 4], [5, 6]])
    q.close()
    assert bool(q.is_closed())
    with pytest.raises(OutOfRangeError):
        q.dequeue()
    with pytest.raises(CancelledError):
        q.enqueue(np.zeros(2, np.float32))


def test_graph_queue_ops_and_shapes():
    with aics.Graph().as_default():
        q = aics.FIFOQueue(10, [aics.float32, aics.int64], shapes=[[2], []], name="q")
        x = aics.placeholder(aics.float32, [None, 2])
        y = aics.placeholder(aics.int64, [None])
        enq = q.enqueue_many([x, y])
        xb, yb = q.dequeue_many(3)
        assert xb.shape.as_list() == [3, 2] and yb.shape.as_list() == [3]
        x1, y1 = q.dequeue()
        assert x1.shape.as_list() == [2] and y1.shape.as_list() == []
        xu, _ = q.dequeue_up_to(3)
        assert xu.shape.as_list() == [None, 2]
        with aics.Session() as sess:
            sess.run(enq, {x: np.ones((4, 2)), y: np.arange(4)})
            assert sess.run(q.size()) == 4
            xs, ys = sess.run([xb, yb])
            assert ys.tolist() == [0, 1, 2] and xs.dtype == np.float32
            sess.run(q.close())
            assert sess.run(q.is_closed())
            with pytest.raises(OutOfRangeError) as info:
                sess.run(xb)
            assert "q_DequeueMany" in str(info.value)
            xs, ys = sess.run([xu, _])
            assert ys.tolist() == [3]
            with pytest.raises(CancelledError):
                sess.run(enq, {x: np.ones((1, 2)), y: [9]})


def test_graph_enqueue_validation():
    with aics.Graph().as_default():
        q = aics.FIFOQueue(10, [aics.float32, aics.int64], shapes=[[2], []])
        with pytest.raises(ValueError, match="Shape mismatch in tuple component 0"):
            q.enqueue([np.zeros(3, np.float32), 1])
        with pytest.raises(ValueError, match="has 2 components"):
            q.enqueue([np.zeros(2, np.float32)])
        with pytest.raises(ValueError, match="fully defined"):
            aics.FIFOQueue(10, aics.float32, shapes=[[None, 2]])


def test_named_queue():
    q = aics.FIFOQueue(4, [aics.float32, aics.int32], shapes=[[], []], names=["x", "y"])
    q.enqueue({"x": 1.0, "y": 2})
    out = q.dequeue()
    assert set(out) == {"x", "y"} and int(out["y"]) == 2
    with pytest.raises(ValueError, match="do not match"):
        q.enqueue({"x": 1.0})


def test_random_shuffle_queue_graph_seeded():
    def run():
        with aics.Graph().as_default():
            q = aics.RandomShuffleQueue(100, 10, aics.int32, shapes=[[]], seed=5)
            enq = q.enqueue_many(np.arange(50, dtype=np.int32))
            deq = q.dequeue_many(40)
            with aics.Session() as sess:
                sess.run(enq)
                return sess.run(deq).tolist()
    a, b = run(), run()
    assert a == b and a != list(range(40)) and len(set(a)) == 40


def test_session_close_cancels_blocked_dequeue():
    with aics.Graph().as_default():
        q = aics.FIFOQueue(2, aics.float32, shapes=[[]])
        deq = q.dequeue()
        sess = aics.Session()
        box = {}

        def consume():
            try:
                sess.run(deq)
            except Exception as e:
                box["e"] = e
        t = threading.Thread(target=consume, daemon=True)
        t.start()
        time.sleep(0.1)
        assert t.is_alive()
        sess.close()
        t.join(5)
        assert not t.is_alive() and isinstance(box["e"], CancelledError)


@pytest.mark.timeout(60)
def test_queue_runner_with_coordinator_feeds_everything():
    n = 500
    with aics.Graph().as_default():
        data = np.arange(n, dtype=np.int64)
        counter = aics.Variable(np.int64(0), name="counter")
        # Each enqueue run takes the next slice of 10 items.
        src = aics.FIFOQueue(n, aics.int64, shapes=[[]], name="src")
        q = aics.FIFOQueue(32, aics.int64, shapes=[[]], name="work")
        item = src.dequeue()
        enq = q.enqueue(item)
        qr = aics.train.QueueRunner(q, [enq] * 3)
        aics.train.add_queue_runner(qr)
        batch = q.dequeue_up_to(7)
        with aics.Session() as sess:
            sess.run(counter.initializer)
            sess.run(src.enqueue_many(data))
            sess.run(src.close())
            coord = aics.train.Coordinator()
            threads = aics.train.start_queue_runners(sess, coord)
            assert len(threads) == 4   # 3 enqueue threads + the closer
            got = []
            try:
                while not coord.should_stop():
                    got.extend(sess.run(batch).tolist())
            except OutOfRangeError:
                pass   # src exhausted -> runner closed q -> the end of the input
            finally:
                coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    assert sorted(got) == list(range(n))


@pytest.mark.timeout(60)
def test_coordinator_stop_cancels_blocked_enqueues():
    with aics.Graph().as_default():
        q = aics.FIFOQueue(5, aics.float32, shapes=[[]])
        enq = q.enqueue(np.float32(1.0))
        qr = aics.train.QueueRunner(q, [enq, enq])
        with aics.Session() as sess:
            coord = aics.train.Coordinator()
            threads = qr.create_threads(sess, coord=coord, daemon=True, start=True)
            deq = q.dequeue_many(5)
            for _ in range(3):
                assert sess.run(deq).shape == (5,)
            coord.request_stop()   # the runners are blocked on a full queue
            coord.join(threads, stop_grace_period_secs=10)
            assert all(not t.is_alive() for t in threads)
            assert sess.run(q.is_closed())


def test_coordinator_reports_thread_exception():
    coord = aics.train.Coordinator()

    def worker():
        with coord.stop_on_exception():
            raise ValueError("boom in thread")
    t = threading.Thread(target=worker)
    t.start()
    with pytest.raises(ValueError, match="boom in thread"):
        coord.join([t], stop_grace_period_secs=5)
    assert coord.should_stop()


def test_coordinator_clean_stop_and_clear():
    coord = aics.train.Coordinator()
    coord.request_stop(OutOfRangeError(None, None, "end"))   # a clean stop: not re-raised
    coord.join([], stop_grace_period_secs=1)
    coord.clear_stop()
    assert not coord.should_stop()
    assert not coord.wait_for_stop(0.01)


def test_runner_in_eager_mode_is_an_error():
    q = aics.FIFOQueue(2, aics.float32)
    with pytest.raises(RuntimeError, match="not supported when eager"):
        aics.train.QueueRunner(q, [None])


@pytest.mark.timeout(60)
def test_shuffle_batch_pipeline():
    """slice-by-index producer -> shuffle_batch: all 200 examples seen once per epoch."""
    n = 200
    with aics.Graph().as_default():
        xs = np.arange(n, dtype=np.float32).reshape(n, 1) * np.ones((1, 3), np.float32)
        ys = np.arange(n, dtype=np.int64)
        src = aics.FIFOQueue(n, [aics.float32, aics.int64], shapes=[[3], []])
        x, y = src.dequeue()
        xb, yb = aics.train.shuffle_batch([x, y], batch_size=16, capacity=64,
                                          min_after_dequeue=20, num_threads=2, seed=1,
                                          allow_smaller_final_batch=True)
        assert xb.shape.as_list() == [None, 3]
        with aics.Session() as sess:
            sess.run(src.enqueue_many([xs, ys]))
            sess.run(src.close())
            coord = aics.train.Coordinator()
            threads = aics.train.start_queue_runners(sess, coord)
            seen = []
            try:
                while True:
                    a, b = sess.run([xb, yb])
                    np.testing.assert_array_equal(a[:, 0], b)
                    seen.extend(b.tolist())
            except OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    assert sorted(seen) == list(range(n))
    assert seen != list(range(n))
