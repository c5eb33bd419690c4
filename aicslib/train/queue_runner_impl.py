"""QueueRunner (TF's python/training/queue_runner_impl.py): threads that fill a queue.

A QueueRunner holds a queue and a list of enqueue ops; ``create_threads``
starts one thread per op, each running it in a loop (``sess.run(enqueue_op)``)
until the coordinator says stop or the queue is closed. When the last thread
ends, the runner closes the queue, so consumers get ``OutOfRangeError`` after
the last element instead of blocking forever. When a stop is requested, it
closes the queue with ``cancel_pending_enqueues=True`` so blocked enqueues end.
"""
import threading

from ..framework import context, errors
from ..framework.ops import GraphKeys, get_default_graph


class QueueRunner:
    """Runs ``enqueue_ops`` in threads to keep ``queue`` filled."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None):
        if context.executing_eagerly():
            raise RuntimeError("QueueRunners are not supported when eager execution is enabled. "
                               "Use aics.data instead.")
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else \
            queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = tuple(
            queue_closed_exception_types or (errors.OutOfRangeError, errors.CancelledError))
        self._lock = threading.Lock()
        self._runs_per_session = {}
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return list(self._enqueue_ops)

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def exceptions_raised(self):
        """Exceptions raised in the threads (when no coordinator reported them)."""
        return list(self._exceptions_raised)

    @property
    def name(self):
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None):
        decremented = False
        try:
            while True:
                if coord and coord.should_stop():
                    break
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    # The queue was closed (or the session too): this thread is done.
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception:
                                pass
                    return
        except Exception as e:
            if coord:
                coord.request_stop(e)
            else:
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1
                    last = self._runs_per_session[sess] == 0
                if last:
                    try:
                        sess.run(self._close_op)
                    except Exception:
                        pass

    def _close_on_stop(self, sess, cancel_op, coord):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception:
            pass

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Threads running the enqueue ops (plus one that closes the queue on stop)."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []   # already running for this session
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon,
                                    name=f"QueueRunnerThread-{self.name}-{i}")
                   for i, op in enumerate(self._enqueue_ops)]
        if coord:
            threads.append(threading.Thread(target=self._close_on_stop,
                                            args=(sess, self._cancel_op, coord), daemon=daemon,
                                            name=f"QueueRunnerCloser-{self.name}"))
        for t in threads:
            if coord:
                coord.register_thread(t)
            if start:
                t.start()
        return threads


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """Adds ``qr`` to the graph collection used by ``start_queue_runners``."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in the graph; returns them."""
    if context.executing_eagerly():
        raise RuntimeError("Queues are not compatible with eager execution.")
    if sess is None:
        from ..framework.session import get_default_session
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: no default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session.")
    threads = []
    with sess.graph.as_default():
        for qr in sess.graph.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
