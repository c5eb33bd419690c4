"""``aics.autograph``: Python control flow over tensors, converted to graph control flow
(TF's tf.autograph). ``aics.function`` converts the functions it traces; ``to_code(f)``
shows what the conversion makes of ``f``.

Modules: ``converter.py`` (the AST transformation), ``operators.py`` (``ag__``: what
converted code calls), ``api.py`` (source -> converted function).
"""
from .api import ConversionError, do_not_convert, to_code, to_graph
from .operators import Undefined
