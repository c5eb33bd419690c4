"""``aics.summary``: TensorBoard logging, TF2 style (TF's tf.summary).

::

    writer = aics.summary.create_file_writer(logdir)
    with writer.as_default():
        for step in range(100):
            aics.summary.scalar("loss", loss, step=step)
    writer.flush()

Summaries are written when called (eager execution) to the default writer,
as real TensorBoard event files: TFRecord-framed ``Event`` protobufs
(``record_writer.py``, ``event_file_writer.py``) built with the ``tensorboard``
package's message classes. TF1's graph-mode API (summary ops, ``merge_all``,
``FileWriter``) is ``aicslib.summary.v1``, exposed as ``aics.compat.v1.summary``.
"""
import contextlib
import threading
import time

import numpy as np

from ..framework import summary_proto
from ..framework.ops import Tensor
from .event_file_writer import EventFileWriter, event_pb2
from .record_writer import read_records

_state = threading.local()
_global = {"step": None}


def _stack():
    if not hasattr(_state, "writers"):
        _state.writers = []
        _state.record = []
    return _state.writers


class SummaryWriter:
    """A writer of one event file (``create_file_writer``); ``as_default()`` makes summaries go to it."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self._logdir = str(logdir)
        self._writer = EventFileWriter(self._logdir, max_queue or 10,
                                       (flush_millis or 120000) / 1000.0, filename_suffix or ".v2")
        self._id = summary_proto.register_writer(self)

    @property
    def logdir(self):
        return self._logdir

    @property
    def event_file(self):
        return self._writer.path

    @contextlib.contextmanager
    def as_default(self, step=None):
        stack = _stack()
        stack.append(self)
        old_step = _global["step"]
        if step is not None:
            _global["step"] = step
        try:
            yield self
        finally:
            stack.pop()
            if step is not None:
                _global["step"] = old_step
            self.flush()

    def set_as_default(self, step=None):
        _stack().append(self)
        if step is not None:
            _global["step"] = step

    def init(self):
        return None

    def write(self, summary, step):
        ev = event_pb2().Event(wall_time=time.time(), step=int(step), summary=summary)
        self._writer.add_event(ev)

    def write_graph_def(self, graph_def_proto):
        self._writer.add_event(event_pb2().Event(wall_time=time.time(),
                                                 graph_def=graph_def_proto.SerializeToString()))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()


class _NoopWriter(SummaryWriter):
    def __init__(self):
        self._logdir = None
        self._id = summary_proto.register_writer(self)

    def write(self, summary, step):
        pass

    def write_graph_def(self, graph_def_proto):
        pass

    def flush(self):
        pass

    def close(self):
        pass


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None,
                       experimental_trackable=False):
    """A SummaryWriter writing an event file in ``logdir`` (created if needed)."""
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_noop_writer():
    return _NoopWriter()


@contextlib.contextmanager
def record_if(condition):
    """Summaries inside are written only when ``condition`` (a bool or a function of no
    arguments returning one) is true."""
    _stack()
    _state.record.append(condition)
    try:
        yield
    finally:
        _state.record.pop()


def should_record_summaries():
    """True when a default writer exists and every enclosing ``record_if`` allows it."""
    if not _stack() or isinstance(_stack()[-1], _NoopWriter):
        return False
    for c in _state.record:
        c = c() if callable(c) else c
        c = c.numpy() if hasattr(c, "numpy") else c
        if not bool(c):
            return False
    return True


def _step(step):
    if step is None:
        step = _global["step"]
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument or "
                         "through tf.summary.experimental.set_step()")
    if isinstance(step, Tensor):
        return step
    return int(step.numpy()) if hasattr(step, "numpy") else int(step)


def _write(make, graph_op, name, data, step):
    """Writes now (eager values), or, for a graph tensor (inside aics.function), adds a summary
    op and a write op that runs at every call, as TF2's summary ops do."""
    if not should_record_summaries():
        return False
    step = _step(step)
    if isinstance(data, Tensor) or isinstance(step, Tensor):
        from ..ops import summary_ops
        from ..ops.math_ops import cast
        from ..framework import dtypes
        from ..framework.ops import convert_to_tensor
        serialized = graph_op(name, convert_to_tensor(data))
        step_t = cast(convert_to_tensor(step), dtypes.int64)
        summary_ops.write_summary_event(step_t, serialized, _stack()[-1]._id)
        return True
    value = np.asarray(data.numpy() if hasattr(data, "numpy") else data)
    _stack()[-1].write(make(name, value), step)
    return True


def _ops():
    from ..ops import summary_ops
    return summary_ops


def scalar(name, data, step=None, description=None):
    """Writes one scalar; returns True if it was written (False with no default writer)."""
    return _write(summary_proto.scalar, lambda n, d: _ops().scalar_summary(n, d), name, data, step)


def histogram(name, data, step=None, buckets=None, description=None):
    """Writes a histogram of ``data`` (TF's default exponential buckets)."""
    return _write(summary_proto.histogram, lambda n, d: _ops().histogram_summary(n, d), name, data, step)


def _image_uint8(x):
    if x.dtype.kind == "f":  # TF2: floats are in [0, 1]
        x = np.clip(np.round(x * 255.0), 0, 255).astype(np.uint8)
    return x


def image(name, data, step=None, max_outputs=3, description=None):
    """Writes up to ``max_outputs`` images of a [k, h, w, c] tensor (floats in [0, 1], or uint8)."""
    def graph_op(n, d):
        from ..framework import dtypes
        from ..ops.math_ops import cast, clip_by_value
        if d.dtype.is_floating:
            d = cast(clip_by_value(d * 255.0 + 0.5, 0.0, 255.0), dtypes.uint8)
        return _ops().image_summary(n, d, max_images=max_outputs)
    return _write(lambda n, x: summary_proto.image(n, _image_uint8(x), max_outputs), graph_op, name, data, step)


def text(name, data, step=None, description=None):
    """Writes a string (or string tensor) for TensorBoard's Text tab."""
    return _write(summary_proto.text, lambda n, d: _ops().text_summary(n, d), name, data, step)


def graph(graph_data):
    """Writes a graph (an aicslib Graph or GraphDef) to the default writer."""
    if not should_record_summaries():
        return False
    from ..framework.graph_def_proto import graph_def_to_proto
    g = graph_data if hasattr(graph_data, "SerializeToString") else graph_def_to_proto(graph_data)
    _stack()[-1].write_graph_def(g)
    return True


def flush(writer=None, name=None):
    w = writer if writer is not None else (_stack()[-1] if _stack() else None)
    if w is not None:
        w.flush()


_trace = {"on": False}


def trace_on(graph=True, profiler=False):
    """Starts a trace (TF records the graphs of functions traced from now on, and a profile)."""
    _trace["on"] = True


def trace_off():
    _trace["on"] = False


def trace_export(name, step=None, profiler_outdir=None):
    """Ends the trace. aicslib records no function graphs or profiles here (use
    ``aics.summary.graph(f.get_concrete_function(...).graph)`` to write a function's graph);
    it logs that and writes nothing, so that TF2 programs which trace still run."""
    if not _trace["on"]:
        from ..compat.v1 import logging as _logging
        _logging.warning("Cannot export trace because trace_on() was not called.")
    else:
        from ..compat.v1 import logging as _logging
        _logging.info("trace_export(%r): aicslib records no traced graphs or profiles; "
                      "nothing written.", name)
    _trace["on"] = False


class experimental:
    @staticmethod
    def set_step(step):
        _global["step"] = step

    @staticmethod
    def get_step():
        return _global["step"]


__all__ = ["SummaryWriter", "create_file_writer", "create_noop_writer", "record_if", "should_record_summaries",
           "scalar", "histogram", "image", "text", "graph", "flush", "experimental", "trace_on",
           "trace_off", "trace_export"]
