"""The hook protocol of ``MonitoredSession`` (TF's python/training/session_run_hook.py).

A hook sees every ``run`` of a monitored session: ``before_run`` may add
fetches and feeds (a ``SessionRunArgs``) to the caller's run, ``after_run``
receives their values (``SessionRunValues.results``) and may ``request_stop()``
through the ``SessionRunContext``. ``begin`` is called once before the session
exists (create ops there), ``after_create_session`` once it is initialized,
``end`` when the session closes without an error.
"""
import collections


class SessionRunHook:
    """Base class: every method is a no-op; subclasses override what they need."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to a run: ``fetches`` (any structure ``Session.run`` takes), a
    ``feed_dict``, and ``RunOptions``."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The run in progress: the caller's ``original_args``, the ``session``, and the stop flag."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        """Asks the monitored session to stop: ``should_stop()`` is True after this run."""
        self._stop_requested = True


SessionRunValues = collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])
SessionRunValues.__doc__ = "What a hook's fetches evaluated to (``results``), with the run's options."
