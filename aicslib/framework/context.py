"""Execution mode: eager (on by default, as TF2) or graph building.

Eager mode is a process-wide switch; the stack of graphs being built is per
thread. ``executing_eagerly()`` is true when eager is on and no graph has been
entered with ``Graph.as_default()`` (or by ``aics.function`` tracing).
"""
import threading

_eager_enabled = True


class _ThreadState(threading.local):
    def __init__(self):
        self.graph_stack = []       # graphs entered with as_default()
        self.device_stack = []      # eager device scopes, as parsed DeviceSpecs
        self.session_stack = []     # default sessions


_state = _ThreadState()


def executing_eagerly():
    """True when ops run at once (eager) rather than being added to a graph."""
    return _eager_enabled and not _state.graph_stack


def enable_eager_execution():
    global _eager_enabled
    _eager_enabled = True


def disable_eager_execution():
    """Switches to TF1 behaviour: ops are added to the default graph and run in a Session."""
    global _eager_enabled
    _eager_enabled = False


def eager_enabled():
    return _eager_enabled


def eager_device():
    """The device eager ops run on: the innermost ``aics.device`` scope, else the CPU."""
    for d in reversed(_state.device_stack):
        if d:
            return d
    return "/device:CPU:0"


def thread_state():
    return _state


def get_default_session():
    """The innermost session entered with ``as_default()`` on this thread, else None."""
    st = _state.session_stack
    return st[-1] if st else None


def get_default_session_or_raise(what):
    sess = get_default_session()
    if sess is None:
        raise ValueError(f"Cannot {what}: no default session is registered. Use `with "
                         f"sess.as_default()` or pass an explicit session.")
    return sess
