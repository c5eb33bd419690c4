"""TF1's monitored training loop (TF's python/training/monitored_session.py).

    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, hooks=[
            tf.train.StopAtStepHook(last_step=1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)

A ``MonitoredSession`` creates its Session through a ``SessionCreator`` (which
restores the latest checkpoint of ``checkpoint_dir`` or runs the ``Scaffold``'s
initializers, then checks every variable is initialized), starts the queue
runners under a ``Coordinator``, and calls its hooks around every ``run``.
Leaving the ``with`` block on ``OutOfRangeError`` (an input pipeline at its end)
is a normal end, as in TF: the hooks' ``end`` runs (the last checkpoint is saved)
and the error is swallowed.

TF also finalizes the graph while the session lives, so that a loop that adds
ops fails loudly; aicslib leaves it open (programs that run on TF run the same).
"""
from ..framework import errors
from ..framework.ops import GraphKeys, get_default_graph
from ..framework.session import Session
from .basic_session_run_hooks import (CheckpointSaverHook, StepCounterHook, SummarySaverHook)
from .coordinator import Coordinator
from .queue_runner_impl import start_queue_runners
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

USE_DEFAULT = object()  # MonitoredTrainingSession's "use TF's default" marker


def _default(key, make):
    """The one op in collection ``key`` of the default graph, else ``make()`` (added to it)."""
    found = get_default_graph().get_collection(key)
    if len(found) > 1:
        raise RuntimeError(f"More than one item in the collection {key}. Please indicate which one "
                           "to use by passing it to the tf.Scaffold constructor as: "
                           f"tf.Scaffold({key}=item to use)")
    if found:
        return found[0]
    op = make()
    if op is not None:
        get_default_graph().add_to_collection(key, op)
    return op


class Scaffold:
    """What a monitored session needs to make a model ready: the init ops, a readiness check,
    the summary op and the Saver. ``finalize()`` fills in every one left None with TF's
    default (``global_variables_initializer``, ``report_uninitialized_variables``, ``merge_all``,
    a ``Saver`` of all variables)."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            c = copy_from_scaffold
            init_op = init_op or c.init_op
            init_feed_dict = init_feed_dict or c.init_feed_dict
            init_fn = init_fn or c._user_init_fn
            ready_op = ready_op or c.ready_op
            ready_for_local_init_op = ready_for_local_init_op or c.ready_for_local_init_op
            local_init_op = local_init_op or c.local_init_op
            local_init_feed_dict = local_init_feed_dict or c.local_init_feed_dict
            summary_op = summary_op or c.summary_op
            saver = saver or c.saver
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op, self._init_feed_dict = init_op, init_feed_dict
        self._ready_op, self._ready_for_local_init_op = ready_op, ready_for_local_init_op
        self._local_init_op, self._local_init_feed_dict = local_init_op, local_init_feed_dict
        self._summary_op, self._saver = summary_op, saver

    def finalize(self):
        from ..ops import variables
        from ..ops.array_ops import group
        from .saver import Saver
        if self._init_op is None:
            self._init_op = _default(GraphKeys.INIT_OP, variables.global_variables_initializer)
        if self._ready_op is None:
            self._ready_op = _default(GraphKeys.READY_OP, variables.report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = _default(
                GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()))
        if self._local_init_op is None:
            self._local_init_op = _default(GraphKeys.LOCAL_INIT_OP,
                                           lambda: group(variables.local_variables_initializer()))
        if self._summary_op is None:
            from ..summary.v1 import merge_all
            self._summary_op = _default(GraphKeys.SUMMARY_OP, merge_all)
        if self._saver is None:
            self._saver = _default(GraphKeys.SAVERS, lambda: Saver(sharded=True, allow_empty=True))
        return self

    init_fn = property(lambda self: self._init_fn)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    local_init_feed_dict = property(lambda self: self._local_init_feed_dict)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)

    @staticmethod
    def default_local_init_op():
        from ..ops import variables
        from ..ops.array_ops import group
        return group(variables.local_variables_initializer())


class SessionCreator:
    """Makes the ``tf.Session`` a monitored session wraps."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for SessionCreator.")


def _uninitialized(sess, ready_op):
    names = sess.run(ready_op) if ready_op is not None else []
    return [n.decode() if isinstance(n, bytes) else str(n) for n in names]


class ChiefSessionCreator(SessionCreator):
    """A Session restored from ``checkpoint_filename_with_path`` or the latest checkpoint in
    ``checkpoint_dir`` when there is one, else initialized by the scaffold's ``init_op`` and
    ``init_fn``; then ``local_init_op`` runs and every variable must be initialized."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        from .saver import latest_checkpoint
        s = self._scaffold.finalize()
        sess = Session(self._master, graph=get_default_graph(), config=self._config)
        path = self._checkpoint_filename_with_path
        if path is None and self._checkpoint_dir:
            path = latest_checkpoint(self._checkpoint_dir)
        if path is not None:
            s.saver.restore(sess, path)
        else:
            if s.init_op is None and s.init_fn is None and s.local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if s.init_op is not None:
                sess.run(s.init_op, feed_dict=s.init_feed_dict)
            if s.init_fn is not None:
                s.init_fn(sess)
        if s.local_init_op is not None:
            sess.run(s.local_init_op, feed_dict=s.local_init_feed_dict)
        missing = _uninitialized(sess, s.ready_op)
        if missing:
            raise RuntimeError(f"Init operations did not make model ready.  Init op: "
                               f"{getattr(s.init_op, 'name', s.init_op)}, init fn: {s.init_fn}, "
                               f"local_init_op: {getattr(s.local_init_op, 'name', s.local_init_op)}, "
                               f"error: Variables not initialized: {', '.join(missing)}")
        return sess


class WorkerSessionCreator(ChiefSessionCreator):
    """A worker's session: in one process, the chief's (there are no other workers here)."""


class _MonitoredSession:
    """The loop logic shared by MonitoredSession and SingularMonitoredSession."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._stop_grace_period_secs = stop_grace_period_secs
        self._tf_sess = session_creator.create_session()
        self._coord = Coordinator()
        self._threads = start_queue_runners(sess=self._tf_sess, coord=self._coord)
        for h in self._hooks:
            h.after_create_session(self._tf_sess, self._coord)
        self._should_stop = False
        self._closed = False

    @property
    def graph(self):
        return self._tf_sess.graph

    def should_stop(self):
        return self._closed or self._should_stop or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """``Session.run`` with each hook's ``before_run`` fetches and feeds added, and its
        ``after_run`` called with their values; returns the caller's fetches only."""
        if self._closed:
            raise RuntimeError("Session is already closed.")
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict), self._tf_sess)
        requests = [h.before_run(context) for h in self._hooks]
        feeds = {}
        for r in requests:
            if r is not None and r.feed_dict:
                if set(map(id, feeds)) & set(map(id, r.feed_dict)):
                    raise RuntimeError("Same tensor is fed by two hooks.")
                feeds.update(r.feed_dict)
        if feed_dict and feeds:
            if set(map(id, feeds)) & set(map(id, feed_dict)):
                raise RuntimeError("Same tensor is fed by a SessionRunHook and user.")
        feeds.update(feed_dict or {})
        hook_fetches = {i: r.fetches for i, r in enumerate(requests)
                        if r is not None and r.fetches is not None}
        try:
            caller, hook_values = self._tf_sess.run([fetches, hook_fetches], feed_dict=feeds or None,
                                                    options=options, run_metadata=run_metadata)
        except Exception:
            self._coord.raise_requested_exception()
            raise
        for i, h in enumerate(self._hooks):
            h.after_run(context, SessionRunValues(hook_values.get(i), options, run_metadata))
        self._should_stop = self._should_stop or context.stop_requested
        return caller

    def run_step_fn(self, step_fn):
        """Calls ``step_fn(step_context)``: ``step_context.run_with_hooks(...)`` is this session's
        ``run``, ``step_context.session`` the raw session, ``request_stop()`` stops the loop."""
        return step_fn(_StepContext(self))

    def close(self):
        self._close_internal(None)

    def _close_internal(self, exception_type):
        if self._closed:
            raise RuntimeError("Session is already closed.")
        try:
            if exception_type is None:
                for h in self._hooks:
                    h.end(self._tf_sess)
        finally:
            self._closed = True
            self._coord.request_stop()
            try:
                self._coord.join(self._threads, stop_grace_period_secs=self._stop_grace_period_secs,
                                 ignore_live_threads=True)
            finally:
                self._tf_sess.close()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None


class _StepContext:
    def __init__(self, monitored):
        self._monitored = monitored

    @property
    def session(self):
        return self._monitored._tf_sess

    def run_with_hooks(self, *args, **kwargs):
        return self._monitored.run(*args, **kwargs)

    def request_stop(self):
        self._monitored._should_stop = True


class MonitoredSession(_MonitoredSession):
    """A Session that initializes or restores the model, runs hooks around every ``run`` and
    says when to stop (``should_stop()``); see the module docstring."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator or ChiefSessionCreator(), hooks, stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A MonitoredSession for one process, with the raw session available (``raw_session()``)."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, stop_grace_period_secs)

    def raw_session(self):
        return self._tf_sess


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,
                             hooks=None, chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT,
                             config=None, stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT, summary_dir=None,
                             save_graph_def=True):
    """A MonitoredSession with TF's standard chief hooks: with ``checkpoint_dir``, a checkpoint
    every 600 seconds (or ``save_checkpoint_steps``) and at the end, summaries every 100 steps
    and ``global_step/sec`` logged every 100 steps, written under ``summary_dir`` (default
    ``checkpoint_dir``); a restart resumes from the latest checkpoint there."""
    del max_wait_secs  # one process: the chief never waits for another
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master,
                                  config=config)
    if not is_chief:
        return MonitoredSession(creator, hooks=hooks or [], stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or []) + list(hooks or [])
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or \
                (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0)
                           or (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                             save_secs=save_checkpoint_secs, scaffold=scaffold,
                                             save_graph_def=save_graph_def))
    return MonitoredSession(creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)
