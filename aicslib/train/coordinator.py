"""Coordinator (TF's python/training/coordinator.py): stop a set of threads together.

    coord = aics.train.Coordinator()
    threads = aics.train.start_queue_runners(sess, coord)
    try:
        while not coord.should_stop():
            sess.run(train_op)
    except aics.errors.OutOfRangeError:
        pass                       # input exhausted: a normal end
    finally:
        coord.request_stop()
    coord.join(threads)

A thread that fails calls ``request_stop(exception)``; ``join`` then re-raises
that exception in the main thread, so errors in input threads are not lost.
"""
import contextlib
import sys
import threading
import time

from ..framework import errors


class Coordinator:
    """A stop flag shared by threads, with exception reporting and a joining helper."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def _filter_exception(self, ex):
        if isinstance(ex, tuple):
            ex2 = ex[1]
        else:
            ex2 = ex
        if isinstance(ex2, self._clean_stop_exception_types):
            ex = None   # a clean stop, e.g. the end of the input
        return ex

    def request_stop(self, ex=None):
        """Asks all threads to stop. ``ex`` (an exception or ``sys.exc_info()``) is
        re-raised by ``join()``; the first one reported wins."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    _, ex_instance, _ = ex
                else:
                    ex_instance = ex
                if ex_instance is not None:
                    raise ex_instance
                return
            if not self._stop_event.is_set():
                if ex and self._exc_info_to_raise is None:
                    if isinstance(ex, tuple):
                        self._exc_info_to_raise = ex
                    else:
                        self._exc_info_to_raise = (type(ex), ex, ex.__traceback__)
                self._stop_event.set()

    def clear_stop(self):
        """Clears the stop flag (and any recorded exception)."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            if self._stop_event.is_set():
                self._stop_event.clear()

    def should_stop(self):
        """True once a stop was requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Context manager: an exception inside requests a stop (and is reported)."""
        try:
            yield
        except BaseException:
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Waits until a stop is requested; returns True if it was, False on timeout."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for ``threads`` (and registered ones) to end after a stop request.

        Re-raises the exception passed to ``request_stop``, if any. Threads still
        alive ``stop_grace_period_secs`` after the stop raise RuntimeError (unless
        ``ignore_live_threads``).
        """
        with self._lock:
            threads = set(threads or ()) | self._registered_threads
            threads = list(threads)
        # Wait for all threads to stop or for request_stop() to be called.
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.01):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
            time.sleep(0.005)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, ex_instance, tb = self._exc_info_to_raise
                raise ex_instance.with_traceback(tb)
        if stragglers and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: "
                               f"{' '.join(stragglers)}")

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception given to request_stop, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                _, ex_instance, tb = self._exc_info_to_raise
                raise ex_instance.with_traceback(tb)


class LooperThread(threading.Thread):
    """A thread that calls ``target(*args)`` repeatedly until the coordinator stops."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        super().__init__(daemon=True)
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        coord.register_thread(self)

    def run(self):
        with self._coord.stop_on_exception():
            while not self._coord.should_stop():
                self._target(*self._args, **self._kwargs)
                if self._timer_interval_secs:
                    if self._coord.wait_for_stop(self._timer_interval_secs):
                        break
