"""The default graph and the scopes that add to it (names, control dependencies, devices,
collections), for whichever mode is current: in eager mode the scopes are no-ops or set
the eager device."""
import contextlib
import threading

from . import context
from .device import canonical_device, eager_device
from .graph import Graph


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"
    QUEUE_RUNNERS = "queue_runners"
    GLOBAL_STEP = "global_step"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    INIT_OP = "init_op"
    # Scaffold's defaults for monitored sessions (TF1): found here before being made.
    SAVERS = "savers"
    SUMMARIES = "summaries"
    SUMMARY_OP = "summary_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    LOCAL_INIT_OP = "local_init_op"


_default_graph = None
_default_graph_lock = threading.Lock()


def get_default_graph():
    """The innermost graph entered with as_default(), else the global default graph."""
    stack = context.thread_state().graph_stack
    if stack:
        return stack[-1]
    global _default_graph
    with _default_graph_lock:
        if _default_graph is None:
            _default_graph = Graph()
        return _default_graph


def reset_default_graph():
    global _default_graph
    if context.thread_state().graph_stack:
        raise AssertionError("Do not use reset_default_graph() inside a 'with g.as_default()' block.")
    _default_graph = Graph()


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """A name scope for ops created inside (a no-op prefix in eager mode)."""
    name = name if name is not None else default_name
    if context.executing_eagerly():
        yield (name + "/") if name else ""
        return
    with get_default_graph().name_scope(name) as scope:
        yield scope


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Ops created inside run after ``control_inputs`` (eager runs in order anyway)."""
    if context.executing_eagerly():
        yield
        return
    with get_default_graph().control_dependencies(control_inputs):
        yield


@contextlib.contextmanager
def device(device_name):
    """Places ops created inside on ``device_name`` ('/cpu:0', '/gpu:0', '/mlu:0')."""
    if context.executing_eagerly():
        st = context.thread_state().device_stack
        st.append(eager_device(canonical_device(device_name)))
        try:
            yield
        finally:
            st.pop()
        return
    with get_default_graph().device(device_name):
        yield


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def get_collection(name, scope=None):
    return get_default_graph().get_collection(name, scope)


