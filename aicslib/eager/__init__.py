"""Eager execution's Python side above the ops (TF's python/eager): the gradient tape
(``backprop.py``), ``aics.function`` (``def_function.py``, tracing into ``function.py``'s
FuncGraph and ConcreteFunction), and the numerical gradient check.

Running one op eagerly is the framework's (``framework/execute.py``), below the ops,
which call it; what is here is built on the ops, so it sits above them:
``framework`` <- ``ops`` <- ``eager``.
"""
