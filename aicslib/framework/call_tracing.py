"""Which aicslib functions a piece of Python code calls, seen with ``sys.setprofile``.

Two questions the workbook asks of running code rather than of its source:

* ``call_path(run, target)``: the chain of aicslib functions on the stack when
  ``run()`` reaches ``target`` (notebook 09 shows the path from an op wrapper to
  its kernel this way, measured rather than written down);
* ``library_calls(fn, *args)``: the aicslib functions ``fn`` calls directly
  (graded exercises check that an answer is written with NumPy, not by calling
  the library's own implementation); ``direct_calls(run, inside)`` the same for
  any set of files (the workbook adds its own references).
"""
import os
import sys

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
REPO_DIR = os.path.dirname(os.path.dirname(PACKAGE_DIR))


def _in_package(code):
    return code.co_filename.startswith(PACKAGE_DIR)


def _profiled(fn, profiler):
    old = sys.getprofile()
    sys.setprofile(profiler)
    try:
        return fn()
    finally:
        sys.setprofile(old)


def call_path(run, target):
    """The aicslib functions on the stack when ``run()`` first calls ``target``, outermost
    first, as ``(path relative to the repository, first line, function name)``; empty when
    ``target`` is never reached."""
    stack, seen = [], []

    def profiler(frame, event, arg):
        if event == "call":
            stack.append(frame.f_code)
            if frame.f_code is target.__code__ and not seen:
                seen.extend(stack)
        elif event == "return" and stack:
            stack.pop()
    _profiled(run, profiler)
    return [(os.path.relpath(c.co_filename, REPO_DIR), c.co_firstlineno, c.co_name)
            for c in seen if _in_package(c)]


def direct_calls(run, inside):
    """Runs ``run()``; returns (its result, the names of the functions whose code ``inside(code)``
    accepts that code outside them called directly). A ``__del__`` is left out: the garbage
    collector finishing an object made earlier, whenever it happens to run, is not ``run``'s call."""
    called = set()

    def profiler(frame, event, arg):
        if event == "call" and inside(frame.f_code):
            caller = frame.f_back
            if (caller is None or not inside(caller.f_code)) and frame.f_code.co_name != "__del__":
                called.add(frame.f_code.co_name)
    result = _profiled(run, profiler)
    return result, called


def library_calls(fn, *args, **kwargs):
    """Runs ``fn(*args, **kwargs)``; returns (its result, the names of the aicslib functions
    it called directly, i.e. from code outside the package)."""
    return direct_calls(lambda: fn(*args, **kwargs), _in_package)
