"""The standard hooks of TF1's monitored training (TF's python/training/basic_session_run_hooks.py).

``StopAtStepHook`` stops at a global step, ``LoggingTensorHook`` logs tensors
every N steps or seconds, ``CheckpointSaverHook`` saves every N steps or
seconds and at the end, ``StepCounterHook`` logs steps per second,
``SummarySaverHook`` writes summaries, ``NanTensorHook`` stops on a NaN loss,
``FeedFnHook`` feeds, ``FinalOpsHook`` evaluates ops when the session ends.
Messages go to the Python logger named ``tensorflow`` at INFO, as TF's do
(``tf.logging.set_verbosity(tf.logging.INFO)`` shows them).
"""
import logging
import os
import time

import numpy as np

from ..framework.ops import GraphKeys, get_default_graph
from .session_run_hook import SessionRunArgs, SessionRunHook
from .training_util import get_global_step

_log = logging.getLogger("tensorflow")
_GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def global_step_read_tensor():
    """One read of the global step per graph (None without a global step), made when hooks
    begin, so that fetching the step in every run adds no ops to the graph."""
    graph = get_default_graph()
    cached = graph.get_collection(_GLOBAL_STEP_READ_KEY)
    if cached:
        return cached[0]
    step = get_global_step(graph)
    if step is None:
        return None
    read = step.read_value()
    graph.add_to_collection(_GLOBAL_STEP_READ_KEY, read)
    return read


class SecondOrStepTimer:
    """Triggers once every ``every_secs`` seconds or every ``every_steps`` steps (one of them)."""

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs, self._every_steps = every_secs, every_steps
        self.reset()

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_triggered_time + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at ``step``; returns (seconds, steps) since the previous one, or Nones."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time, self._last_triggered_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


class NeverTriggerTimer(SecondOrStepTimer):
    """A timer that never fires (``LoggingTensorHook(at_end=True)`` alone)."""

    def __init__(self):
        self.reset()

    def should_trigger_for_step(self, step):
        return False


def _need_global_step(hook_name):
    step = global_step_read_tensor()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches ``last_step`` (or ``num_steps`` past its
    value when the session was created)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._global_step_tensor = _need_global_step("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = session.run(self._global_step_tensor) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        # The fetched step may have been read before the train op incremented it: read again.
        if run_values.results + 1 >= self._last_step:
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs ``tag = value`` for ``tensors`` (a dict of tags to tensors or names, or a list)
    every ``every_n_iter`` runs or ``every_n_secs`` seconds, and at the end if ``at_end``."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors, self._formatter, self._log_at_end = tensors, formatter, at_end
        self._timer = NeverTriggerTimer() if only_at_end else SecondOrStepTimer(every_n_secs, every_n_iter)

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        graph = get_default_graph()
        self._current_tensors = {tag: graph.as_graph_element(t) if isinstance(t, str) else t
                                 for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, values):
        elapsed, _ = self._timer.update_last_triggered_step(self._iter_count)
        with np.printoptions(suppress=True):
            if self._formatter:
                _log.info(self._formatter(values))
                return
            stats = ", ".join(f"{tag} = {values[tag]!s}" for tag in self._tag_order)
        if elapsed is None:
            _log.info("%s", stats)
        else:
            _log.info("%s (%.3f sec)", stats, elapsed)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class CheckpointSaverListener:
    """Called around each save of a ``CheckpointSaverHook``; ``after_save`` returning True stops."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


_WRITERS = {}  # one FileWriter per log folder for the process, as TF's SummaryWriterCache


def _writer_for(logdir):
    from ..summary.v1 import FileWriter
    if logdir not in _WRITERS:
        _WRITERS[logdir] = FileWriter(logdir)
    return _WRITERS[logdir]


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint (``checkpoint_dir/model.ckpt-<step>``) when the session starts, every
    ``save_steps`` steps or ``save_secs`` seconds, and when it ends."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None, save_graph_def=True):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        _log.info("Create CheckpointSaverHook.")
        self._saver, self._scaffold = saver, scaffold
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []
        self._save_graph_def = save_graph_def

    def begin(self):
        self._global_step_tensor = _need_global_step("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        from ..io import gfile
        gfile.makedirs(self._checkpoint_dir)
        step = int(session.run(self._global_step_tensor))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(run_values.results + 1):
            step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session):
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session, step):
        """Saves; returns whether a listener asked to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        return any([listener.after_save(session, step) for listener in self._listeners])

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver to "
                               "the collection or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                               "indicate which one to use by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver


class StepCounterHook(SessionRunHook):
    """Logs ``global_step/sec`` every ``every_n_steps`` steps (or seconds), and writes it as a
    summary to ``output_dir`` when one is given."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._output_dir, self._summary_writer = output_dir, summary_writer

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _writer_for(self._output_dir)
        self._global_step_tensor = _need_global_step("StepCounter")
        self._tag = "global_step/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if self._timer.should_trigger_for_step(step):
            secs, steps = self._timer.update_last_triggered_step(step)
            if secs is not None and secs > 0:
                rate = steps / secs
                _log.info("%s: %g", self._tag, rate)
                if self._summary_writer is not None:
                    from ..framework.summary_proto import scalar
                    self._summary_writer.add_summary(scalar(self._tag, rate), step)


class SummarySaverHook(SessionRunHook):
    """Runs ``summary_op`` (the scaffold's ``merge_all`` by default) every ``save_steps`` steps
    or ``save_secs`` seconds and writes the result to ``output_dir``."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op, self._scaffold = summary_op, scaffold
        self._summary_writer, self._output_dir = summary_writer, output_dir
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _writer_for(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _need_global_step("SummarySaver")

    def _summaries(self):
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        return [] if op is None else (list(op) if isinstance(op, (list, tuple)) else [op])

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None
                                 or self._timer.should_trigger_for_step(self._next_step))
        fetches = {"global_step": self._global_step_tensor}
        if self._request_summary and self._summaries():
            fetches["summary"] = self._summaries()
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        step = int(run_values.results["global_step"])
        if self._next_step is None or self._request_summary:
            step = int(run_context.session.run(self._global_step_tensor))
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            if self._summary_writer is not None and "summary" in run_values.results:
                for summary in run_values.results["summary"]:
                    self._summary_writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session=None):
        if self._summary_writer is not None:
            self._summary_writer.flush()


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Raises ``NanLossDuringTrainingError`` (or only stops, ``fail_on_nan_loss=False``) when
    ``loss_tensor`` is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor, self._fail_on_nan_loss = loss_tensor, fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail_on_nan_loss:
                _log.error("Model diverged with loss = NaN.")
                raise NanLossDuringTrainingError
            _log.warning("Model diverged with loss = NaN.")
            run_context.request_stop()


class FeedFnHook(SessionRunHook):
    """Adds ``feed_fn()``'s feed_dict to every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class FinalOpsHook(SessionRunHook):
    """Evaluates ``final_ops`` when the session ends; ``final_ops_values`` holds the result."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops, self._final_ops_feed_dict = final_ops, final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)
