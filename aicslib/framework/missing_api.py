"""Clear errors for TensorFlow names that aicslib does not implement.

A program written for TensorFlow that reaches a name aicslib lacks should learn
exactly that, and what to use instead where there is something, rather than
Python's "did you mean" pointing at a private helper. Each public namespace
module installs ``module_getattr(__name__)`` as its module-level ``__getattr__``.
"""
import difflib
import sys

# TF names with a known replacement (or a reason they are absent), by bare name.
_INSTEAD = {
    "contrib": "tf.contrib was removed in TF2; use tf.compat.v1.layers, tf.keras or the "
               "aicslib module named after the contrib package's function",
    "estimator": "aicslib has no Estimator API; write the training loop with a Session "
                 "(tf.compat.v1) or tf.GradientTape",
    "py_func": "aicslib has no py_func; compute with NumPy outside the graph and feed the result",
    "numpy_function": "aicslib has no numpy_function; compute with NumPy and feed the result",
    "lite": "aicslib has no TF Lite converter",
    "tpu": "aicslib runs on CPU (and simulated MLU); it has no TPU support",
    "mul": "tf.mul was renamed tf.multiply in TF 1.0",
    "sub": "tf.sub was renamed tf.subtract in TF 1.0",
    "neg": "tf.neg was renamed tf.negative in TF 1.0",
    "initialize_local_variables": "use tf.compat.v1.local_variables_initializer()",
}


def _public(module):
    return [n for n in dir(module) if not n.startswith("_")]


def not_implemented_error(module_name, name):
    """The AttributeError for ``module_name.name``: says it is missing from aicslib, with a hint."""
    module = sys.modules.get(module_name)
    msg = f"module '{module_name}' has no attribute '{name}': it is not implemented in aicslib"
    hint = _INSTEAD.get(name)
    if hint:
        msg += f" ({hint})"
    elif module is not None:
        close = difflib.get_close_matches(name, [n for n in _public(module) if n != name], n=1,
                                          cutoff=0.8)
        if close:
            msg += f". Did you mean '{close[0]}'?"
    return AttributeError(msg)


def module_getattr(module_name, fallback=None):
    """A module ``__getattr__``: tries ``fallback(name)`` (a wider namespace), else the clear error.

    Dunder lookups (``__path__``, ``__wrapped__``...) fail the ordinary way so that
    importlib, doctest and inspect keep working.
    """
    def __getattr__(name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        if fallback is not None and not name.startswith("_"):
            try:
                return fallback(name)
            except AttributeError:
                pass
        raise not_implemented_error(module_name, name)
    return __getattr__


class _Unsupported:
    """A TF API aicslib deliberately lacks: calling it (or anything reached from it) raises
    NotImplementedError naming the API, so a program stops at the first line that needs it."""

    def __init__(self, path, reason):
        self._path, self._reason = path, reason

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Unsupported(f"{self._path}.{name}", self._reason)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"{self._path} is not implemented in aicslib: {self._reason}")

    def __instancecheck__(self, instance):
        return False  # isinstance(x, tf.RaggedTensor): nothing here is one

    def __repr__(self):
        return f"<{self._path}: not implemented in aicslib>"


def unsupported_namespace(path, reason):
    """A stand-in for a whole TF namespace that is out of scope (``tf.ragged``, ``tf.saved_model``,
    ``tf.profiler``): any function in it raises NotImplementedError with ``reason``."""
    return _Unsupported(path, reason)
