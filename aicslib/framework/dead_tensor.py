"""The value of a dead tensor (TF's executor marks tensors "dead", not absent).

A ``Switch`` sends its input to one output and ``DEAD`` to the other; nodes
downstream of a dead input do not run (their outputs are dead too), except a
``Merge``, which takes the live one. Kernels see ``DEAD`` only as a Merge's
input or a Switch's output; the execution contract passes it through
unchecked.
"""


class _Dead:
    __slots__ = ()

    def __repr__(self):
        return "DEAD"

    def __bool__(self):
        return False


DEAD = _Dead()
