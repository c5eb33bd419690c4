"""Seams: library functions that another implementation (a student's lab) can replace.

A :class:`Seam` is called like the function it stands for; ``seam.use(fn)``
puts ``fn`` in its place for the duration of a ``with`` block, so every caller
(not only the one that asked) uses it. The seams and their contracts:
``session.planner`` (``planner.py``) and ``ops/gradients_impl.implementation``;
``aics.experimental`` has a switch for each.
"""
import contextlib


class Seam:
    """One replaceable function: ``current`` is what a call runs, ``default`` the library's."""

    def __init__(self, name, default, signature):
        self.name = name
        self.signature = signature
        self.default = default
        self.current = default

    def __call__(self, *args, **kwargs):
        return self.current(*args, **kwargs)

    @contextlib.contextmanager
    def use(self, fn):
        """``fn`` is this seam's function inside the block; the previous one comes back after."""
        if not callable(fn):
            raise TypeError(f"The {self.name} seam takes a function {self.signature}, got {fn!r}.")
        saved, self.current = self.current, fn
        try:
            yield fn
        finally:
            self.current = saved

    def __repr__(self):
        return f"<seam {self.name}: {self.signature}, now {getattr(self.current, '__qualname__', self.current)}>"
