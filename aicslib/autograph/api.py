"""Converting a Python function: source -> AST -> converted AST -> a new function
(TF's python/autograph/impl/api.py and pyct/transpiler.py, in brief).

The converted function is compiled from the converted source, in a namespace
that holds ``ag__`` (``operators.py``) and a snapshot of the original
function's globals; its closure variables are passed in by a factory
function, so a converted inner function still sees the values it closed over.
"""
import ast
import functools
import inspect
import textwrap
import warnings

from . import converter, operators

_CONVERTED = "__aics_autograph_converted__"
_DO_NOT_CONVERT = "__aics_autograph_do_not_convert__"


class ConversionError(Exception):
    """The function's source could not be read or converted."""


def _function_def(f):
    try:
        src = textwrap.dedent(inspect.getsource(f))
    except (OSError, TypeError) as e:
        raise ConversionError(f"Cannot convert {getattr(f, '__name__', f)!r}: its source is not "
                              f"available ({e}).") from None
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == f.__name__:
            return node
    raise ConversionError(f"Cannot convert {f.__name__!r}: it is not defined by a def statement "
                          f"(lambdas are not converted).")


def _converted_def(f):
    return converter.convert_function_def(_function_def(f))


def _located(module, offset):
    """Line numbers for compiling: original statements keep theirs (shifted to the file's, so
    tracebacks point at the user's source); generated ones take their parent's."""
    for node in ast.walk(module):
        if getattr(node, "lineno", None) == 0:
            del node.lineno
            for attr in ("end_lineno", "col_offset", "end_col_offset"):
                if hasattr(node, attr):
                    delattr(node, attr)
    ast.increment_lineno(module, offset)
    ast.fix_missing_locations(module)
    for node in ast.walk(module):
        if getattr(node, "end_lineno", None) is not None and node.end_lineno < node.lineno:
            node.end_lineno = node.lineno
    return module


def to_code(entity, recursive=True, experimental_optional_features=None):
    """The source of the converted function, as ``tf.autograph.to_code``."""
    f = _python_function(entity)
    return ast.unparse(_converted_def(f)) + "\n"


def _python_function(entity):
    f = getattr(entity, "python_function", entity)  # an aics.function: convert what it wraps
    if inspect.ismethod(f):
        f = f.__func__
    if not inspect.isfunction(f):
        raise TypeError(f"Expected a Python function, got {type(entity).__name__}.")
    return f


def convert_function(f):
    """The converted version of Python function ``f`` (cached on ``f``)."""
    hit = getattr(f, _CONVERTED, None)
    if hit is not None:
        return hit
    fdef = _converted_def(f)
    freevars = list(f.__code__.co_freevars)
    factory = ast.FunctionDef(name="__aics_factory",
                              args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in freevars],
                                                 vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                 defaults=[]),
                              body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
                              decorator_list=[], returns=None, lineno=1)
    module = _located(ast.Module(body=[factory], type_ignores=[]), f.__code__.co_firstlineno - 1)
    namespace = dict(f.__globals__)
    namespace["ag__"] = operators
    filename = f.__code__.co_filename  # tracebacks show the user's own lines
    exec(compile(module, filename, "exec"), namespace)
    cells = [c.cell_contents for c in (f.__closure__ or ())]
    new = namespace["__aics_factory"](*cells)
    new.__defaults__ = f.__defaults__
    new.__kwdefaults__ = f.__kwdefaults__
    functools.update_wrapper(new, f)
    try:
        setattr(f, _CONVERTED, new)
    except AttributeError:
        pass
    return new


def convert_or_keep(f):
    """``convert_function(f)``, or ``f`` itself (with a warning) when it cannot be converted."""
    if getattr(f, _DO_NOT_CONVERT, False) or getattr(f, "__name__", "") == "<lambda>":
        return f  # a lambda has no statements to convert (and often no source of its own)
    try:
        return convert_function(f)
    except (ConversionError, NotImplementedError) as e:
        warnings.warn(f"AutoGraph could not convert {getattr(f, '__name__', f)!r} and will run it as is: {e}",
                      stacklevel=3)
        return f


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """The converted function (``tf.autograph.to_graph``)."""
    f = _python_function(entity)
    return convert_function(f)


def do_not_convert(func=None):
    """Decorator: ``aics.function`` runs this function as written (no AutoGraph)."""
    if func is None:
        return do_not_convert
    setattr(func, _DO_NOT_CONVERT, True)
    return func

