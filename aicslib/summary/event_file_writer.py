"""Event files (TF's core/util/events_writer.cc): ``events.out.tfevents.<time>.<host>.<pid>.<n>``,
a TFRecord file of ``Event`` protobufs (``tensorboard.compat.proto.event_pb2``),
the first one carrying ``file_version: "brain.Event:2"``.

An event file only grows, so it is appended to rather than replaced (``file_io.atomic_write``
is for files rewritten whole). What a crash or a full disk may leave is then a torn last
record: TensorBoard reads up to it and drops the rest. Two rules keep that the worst case:

* records reach the file whole and in order: a failed write is cut back to the last whole
  record (so later records are not stranded behind a torn one) and raised as TF's error
  class for its errno, the events staying queued for the next flush;
* ``flush`` writes the queued records and fsyncs the file, as EventsWriter::Flush does;
  ``close`` does the same under the same lock, so no event queued before it is lost.
"""
import itertools
import os
import socket
import threading
import time

from ..framework import errors
from .record_writer import encode_record

_file_numbers = itertools.count()   # TF's per-process counter in the file name


def event_pb2():
    from tensorboard.compat.proto import event_pb2 as m
    return m


def _create_exclusively(logdir, suffix):
    """A new, empty event file that no other writer has: the name counts up until free."""
    while True:
        path = os.path.join(logdir, f"events.out.tfevents.{int(time.time()):010d}."
                                    f"{socket.gethostname()}.{os.getpid()}.{next(_file_numbers)}"
                                    f"{suffix or ''}")
        try:
            return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        except OSError as e:
            raise errors.from_os_error(e, path) from e


class EventFileWriter:
    """Appends Events to a new event file in ``logdir``; ``flush`` writes them to disk."""

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=""):
        logdir = os.fspath(logdir)
        os.makedirs(logdir, exist_ok=True)
        self._logdir = logdir
        self._path, self._fd = _create_exclusively(logdir, filename_suffix)
        self._size = 0                 # bytes of whole records in the file
        self._pending = []
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._last_flush = time.time()
        self._lock = threading.Lock()
        self._closed = False
        first = event_pb2().Event(wall_time=time.time(), file_version="brain.Event:2")
        self.add_event(first)
        self.flush()

    @property
    def path(self):
        return self._path

    @property
    def closed(self):
        return self._closed

    def get_logdir(self):
        return self._logdir

    def add_event(self, event):
        if self._closed:
            raise RuntimeError(f"Event file writer for '{self._logdir}' is closed.")
        data = event.SerializeToString()
        with self._lock:
            self._pending.append(encode_record(data))
            due = len(self._pending) >= self._max_queue or time.time() - self._last_flush >= self._flush_secs
        if due:
            self.flush()

    def _append(self, data):
        view, done = memoryview(data), 0
        try:
            while done < len(data):
                done += os.write(self._fd, view[done:])
        except BaseException as e:
            # some bytes may have landed even when the failing call reports none
            try:
                os.ftruncate(self._fd, self._size)
                os.lseek(self._fd, self._size, os.SEEK_SET)
            except OSError:
                pass
            if isinstance(e, OSError) and e.errno is not None:
                raise errors.from_os_error(e, self._path) from e
            raise
        self._size += len(data)

    def _write_pending(self):
        """With the lock held: the queued records, then an fsync of the file."""
        if self._pending:
            self._append(b"".join(self._pending))
            self._pending = []
        try:
            os.fsync(self._fd)
        except OSError as e:
            raise errors.from_os_error(e, self._path) from e
        self._last_flush = time.time()

    def flush(self):
        with self._lock:
            if not self._closed:
                self._write_pending()

    def close(self):
        with self._lock:
            if self._closed:
                return
            try:
                self._write_pending()
            finally:
                self._closed = True
                os.close(self._fd)
