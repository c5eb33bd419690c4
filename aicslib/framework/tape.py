"""The tapes currently recording eager ops (innermost last).

Kept apart from GradientTape (``aicslib/eager/backprop.py``) so the op
dispatcher can check ``active`` (one list truthiness test per op) without the
gradient machinery, which is built on the ops.
"""
import contextlib

active = []


def push(t):
    active.append(t)


def pop(t):
    if t in active:
        active.remove(t)


def record_operation(op):
    """Offers one executed eager op to every recording tape."""
    for t in list(active):
        t.record_operation(op)


def should_record(tensors):
    """True when some recording tape watches one of ``tensors`` (would keep their op)."""
    return any(t.watches_any(tensors) for t in active)


def variable_accessed(variable):
    """A variable was read: tapes that watch accessed variables start watching it."""
    if not variable.trainable:
        return
    for t in active:
        t.variable_accessed(variable)


@contextlib.contextmanager
def paused():
    """No tape records the ops run inside (a custom gradient's forward function)."""
    saved = active[:]
    active.clear()
    try:
        yield
    finally:
        active.extend(saved)
