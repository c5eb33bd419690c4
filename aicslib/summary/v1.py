"""TF1's ``tf.summary`` (``aics.compat.v1.summary``): summary *ops* in the graph, written by a
``FileWriter`` (TF's python/summary/summary.py and writer/writer.py).

::

    loss_summary = aics.compat.v1.summary.scalar("loss", loss)
    merged = aics.compat.v1.summary.merge_all()
    writer = aics.compat.v1.summary.FileWriter(logdir, sess.graph)
    writer.add_summary(sess.run(merged, feed), global_step=step)

Each op computes a serialized ``Summary`` protobuf when the Session runs it;
``FileWriter`` wraps it in an ``Event`` (wall time, step) and appends it to
an event file that TensorBoard reads. ``add_graph`` writes the graph as a
``GraphDef`` protobuf, which TensorBoard's Graphs tab draws.
"""
import re
import time
import warnings

from ..compat.v1 import logging as _logging
from ..framework import context
from ..framework.ops import get_default_graph, name_scope
from ..ops import summary_ops
from .event_file_writer import EventFileWriter, event_pb2
from .record_writer import read_records

SUMMARIES = "summaries"  # GraphKeys.SUMMARIES


_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    """TF's summary_op_util.clean_tag: 'W1:0' becomes 'W1_0' (a name scope cannot hold ':')."""
    if name is None:
        return name
    new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if new_name != name:
        _logging.info("Summary name %s is illegal; using %s instead.", name, new_name)
    return new_name


def _summary_op(op, name, args, collections, family=None, **attrs):
    name = _clean_tag(name)
    scope_name = f"{family}/{name}" if family else name
    with name_scope(scope_name) as scope:
        tag = scope.rstrip("/") if scope else name
        val = op(tag, *args, name=scope.rstrip("/") + "/" if scope and not context.executing_eagerly() else None,
                 **attrs)
    if not context.executing_eagerly():
        for key in (collections if collections is not None else [SUMMARIES]):
            get_default_graph().add_to_collection(key, val)
    return val


def scalar(name, tensor, collections=None, family=None):
    """A ``Summary`` with one scalar value, tag ``name`` (in its name scope)."""
    return _summary_op(summary_ops.scalar_summary, name, [tensor], collections, family)


def histogram(name, values, collections=None, family=None):
    """A ``Summary`` with a histogram of ``values`` (TF's default exponential buckets)."""
    return _summary_op(summary_ops.histogram_summary, name, [values], collections, family)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A ``Summary`` with up to ``max_outputs`` PNG images of a [batch, h, w, c] tensor."""
    return _summary_op(summary_ops.image_summary, name, [tensor], collections, family, max_images=max_outputs)


def text(name, tensor, collections=None):
    """A ``Summary`` of a string tensor for TensorBoard's Text tab."""
    return _summary_op(summary_ops.text_summary, name, [tensor], collections)


def merge(inputs, collections=None, name=None):
    """One ``Summary`` holding the values of all ``inputs`` (serialized Summary tensors)."""
    val = summary_ops.merge_summary(inputs, name=name)
    if collections and not context.executing_eagerly():
        for key in collections:
            get_default_graph().add_to_collection(key, val)
    return val


def merge_all(key=SUMMARIES, scope=None, name=None):
    """``merge`` of every summary op in collection ``key``; None when there is none (as TF)."""
    if context.executing_eagerly():
        raise RuntimeError("Merging tf.summary.* ops is not compatible with eager execution. "
                           "Use aics.summary (TF2) instead.")
    ops = get_default_graph().get_collection(key, scope)
    if not ops:
        return None
    return merge(ops, name=name)


def _summary_message(summary):
    from tensorboard.compat.proto import summary_pb2
    if isinstance(summary, summary_pb2.Summary):
        return summary
    data = summary
    if hasattr(data, "numpy"):
        data = data.numpy()
    if hasattr(data, "dtype") and getattr(data, "ndim", None) == 0:
        data = data[()]
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"add_summary expects a Summary protobuf or its serialized bytes (the value of "
                        f"a summary op), got {type(summary).__name__}.")
    s = summary_pb2.Summary()
    s.ParseFromString(bytes(data))
    return s


class FileWriter:
    """Writes Summaries, graphs and events to an event file in ``logdir`` (TF1's FileWriter)."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if context.executing_eagerly():
            raise RuntimeError("tf.summary.FileWriter is not compatible with eager execution. "
                               "Use aics.summary.create_file_writer instead.")
        self._logdir = str(logdir)
        self._args = (max_queue, flush_secs, filename_suffix)
        self._writer = EventFileWriter(self._logdir, max_queue, flush_secs, filename_suffix)
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        return self._logdir

    @property
    def event_file(self):
        return self._writer.path

    def _closed(self):
        """TF1's FileWriter after close(): a warning, and the call does nothing."""
        if self._writer.closed:
            warnings.warn("Attempting to use a closed FileWriter. The operation will be a noop "
                          "unless the FileWriter is explicitly reopened.", stacklevel=3)
            return True
        return False

    def add_event(self, event):
        if not self._closed():
            self._writer.add_event(event)

    def add_summary(self, summary, global_step=None):
        """Adds a serialized Summary (what ``sess.run(summary_op)`` returns) at ``global_step``."""
        ev = event_pb2().Event(wall_time=time.time(), summary=_summary_message(summary))
        if global_step is not None:
            ev.step = int(global_step)
        self.add_event(ev)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes the graph as a GraphDef protobuf (TensorBoard's Graphs tab)."""
        from ..framework.graph_def_proto import graph_def_to_proto
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        src = graph if graph is not None else graph_def
        if hasattr(src, "SerializeToString") and not hasattr(src, "as_graph_def"):
            proto = src
        else:
            proto = graph_def_to_proto(src)
        ev = event_pb2().Event(wall_time=time.time(), graph_def=proto.SerializeToString())
        if global_step is not None:
            ev.step = int(global_step)
        self.add_event(ev)

    def add_session_log(self, session_log, global_step=None):
        ev = event_pb2().Event(wall_time=time.time(), session_log=session_log)
        if global_step is not None:
            ev.step = int(global_step)
        self.add_event(ev)

    def flush(self):
        if not self._closed():
            self._writer.flush()

    def close(self):
        self._writer.close()

    def reopen(self):
        """After ``close``: a new event file in the same logdir."""
        if self._writer.closed:
            self._writer = EventFileWriter(self._logdir, *self._args)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def summary_iterator(path):
    """The Events of an event file, in order (TF1's tf.compat.v1.train.summary_iterator)."""
    for data in read_records(path):
        ev = event_pb2().Event()
        ev.ParseFromString(data)
        yield ev
