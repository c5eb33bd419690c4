"""Every registration records the line that defines it (exercises 5.5-5.7).

The library's registries are dumped by a fresh interpreter that imports every
module of the package (so nothing another test registered is mixed in), and
each entry is checked against the source file itself, read with ``ast`` and
``tokenize`` rather than with the helpers the registries use:

* a kernel or a gradient records where its function (or class) is defined: the
  ``def``/``class`` line of that name, or one of the decorator lines above it; a kernel
  of an elementwise op records the op's row in the elementwise table
  (``framework/cwise_table.py``), which names the op first and holds that very function;
* an op definition or a ``no_gradient`` mark, which has no function, records a
  line whose first string literal is the op's name (``register_op("Sin")``,
  ``no_gradient("Shape")``, or a helper call such as ``_pool_op("MaxPool", ...)``).
"""
import ast
import functools
import io
import json
import os
import subprocess
import sys
import textwrap
import tokenize

import pytest

import aicslib as aics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(aics.__file__)))

_DUMP = textwrap.dedent("""
    import importlib, inspect, json, pkgutil, sys
    import aicslib
    for m in pkgutil.walk_packages(aicslib.__path__, "aicslib."):
        try:
            importlib.import_module(m.name)
        except ModuleNotFoundError as e:   # an optional dependency (mpi4py...) is missing
            if e.name.split(".")[0] == "aicslib":
                raise
    from aicslib.framework.cwise_table import BY_OP
    from aicslib.framework.gradient_registry import gradient_registry
    from aicslib.framework.kernel_registry import kernel_registry
    from aicslib.framework.op_def import op_def_registry

    def impl_info(fn):
        fn = inspect.unwrap(fn)
        return {"name": fn.__name__, "is_class": inspect.isclass(fn),
                "file": sys.modules[fn.__module__].__file__}

    out = {"ops": [], "kernels": [], "gradients": [], "no_gradient": []}
    for name in op_def_registry.list_ops():
        out["ops"].append({"op": name, "at": op_def_registry.get(name).registered_at})
    for kd in kernel_registry.all_kernels():
        row = BY_OP.get(kd.op_type)
        out["kernels"].append({"op": kd.op_type, "device": kd.device, "at": kd.location,
                               "impl": impl_info(kd.impl),
                               "row_fn": row is not None and kd.impl in (row.fn, row.complex_fn),
                               "row_at": row and row.location})
    for name in gradient_registry.differentiable_ops():
        out["gradients"].append({"op": name, "at": gradient_registry.location(name),
                                 "impl": impl_info(gradient_registry.function(name))})
    for name in gradient_registry.non_differentiable_ops():
        out["no_gradient"].append({"op": name, "at": gradient_registry.location(name)})
    print(json.dumps(out))
""")


@functools.lru_cache(maxsize=None)
def library_registrations():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", _DUMP], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@functools.lru_cache(maxsize=None)
def _source(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def _definition_lines(path):
    """{name: set of lines} where each def/class of that name may be said to be: its
    def/class line and every line of the decorators directly above it."""
    out = {}
    for node in ast.walk(ast.parse(_source(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            out.setdefault(node.name, set()).update(range(first, node.lineno + 1))
    return out


@functools.lru_cache(maxsize=None)
def _first_string_per_line(path):
    """{line: value of the first string literal that starts on that line}."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(_source(path)).readline):
        if tok.type == tokenize.STRING and tok.start[0] not in out:
            try:
                out[tok.start[0]] = ast.literal_eval(tok.string)
            except ValueError:  # an f-string: not a literal name
                out[tok.start[0]] = None
    return out


def _rel(path):
    return os.path.relpath(os.path.abspath(path), ROOT).replace(os.sep, "/")


def check_defined_at(entry):
    """Problem with a kernel/gradient entry's location, or None."""
    (path, line), impl = entry["at"], entry["impl"]
    if entry.get("row_at") and entry["at"] == entry["row_at"]:   # an elementwise table row
        if not entry["row_fn"]:
            return f"{_rel(path)}:{line} is {entry['op']}'s row, but its kernel is not the row's function"
        return check_names_op(entry)
    if os.path.abspath(path) != os.path.abspath(impl["file"]):
        return f"recorded in {_rel(path)}, but {impl['name']} is defined in {_rel(impl['file'])}"
    if impl["name"] == "<lambda>":
        ok = "lambda" in _source(path).splitlines()[line - 1]
    else:
        ok = line in _definition_lines(path).get(impl["name"], ())
    if not ok:
        kind = "class" if impl["is_class"] else "def"
        text = _source(path).splitlines()[line - 1].strip() if line >= 1 else "<no line>"
        return f"{_rel(path)}:{line} is not the {kind} {impl['name']} (or its decorators): {text!r}"
    return None


def check_names_op(entry):
    """Problem with an op definition's / no_gradient mark's location, or None."""
    path, line = entry["at"]
    first = _first_string_per_line(path).get(line)
    if first != entry["op"]:
        text = _source(path).splitlines()[line - 1].strip() if line >= 1 else "<no line>"
        return f"{_rel(path)}:{line} does not name '{entry['op']}' first: {text!r}"
    return None


def _by_file(kind):
    return sorted({_rel(e["at"][0]) for e in library_registrations()[kind]})


def test_the_dump_covers_the_library():
    reg = library_registrations()
    assert len(reg["ops"]) > 150 and len(reg["kernels"]) > 150
    assert len(reg["gradients"]) > 80 and len(reg["no_gradient"]) > 40
    assert {"Conv2D", "MaxPool", "FIFOQueueV2", "ResourceApplyAdam"} <= {e["op"] for e in reg["ops"]}
    # Every recorded file is one of the library's sources.
    for kind in reg:
        for e in reg[kind]:
            assert _rel(e["at"][0]).startswith("aicslib/"), (kind, e)


@pytest.mark.parametrize("path", _by_file("kernels"))
def test_kernels_point_at_their_definition(path):
    problems = [f"{e['op']} ({e['device']}): {p}" for e in library_registrations()["kernels"]
                if _rel(e["at"][0]) == path and (p := check_defined_at(e))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", _by_file("gradients"))
def test_gradients_point_at_their_definition(path):
    problems = [f"{e['op']}: {p}" for e in library_registrations()["gradients"]
                if _rel(e["at"][0]) == path and (p := check_defined_at(e))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", _by_file("ops"))
def test_op_definitions_name_the_op(path):
    problems = [p for e in library_registrations()["ops"]
                if _rel(e["at"][0]) == path and (p := check_names_op(e))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", _by_file("no_gradient"))
def test_no_gradient_marks_name_the_op(path):
    problems = [p for e in library_registrations()["no_gradient"]
                if _rel(e["at"][0]) == path and (p := check_names_op(e))]
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------
# Registrations made by user code, in the ways a notebook writes them.

def _kernel_location(op_type):
    (kd,) = aics.kernel_registry.kernels_for(op_type)
    return kd.location


def _check_here(location, name):
    path, line = location
    assert os.path.abspath(path) == os.path.abspath(__file__)
    assert line in _definition_lines(__file__)[name], (line, name)


class TestUserRegistrations:
    @pytest.fixture
    def ops(self):
        names = []

        def make(name):
            aics.register_op(name).input("x: float").output("y: float")
            names.append(name)
            return name
        yield make
        for name in names:
            aics.op_def_registry.unregister(name)
            aics.kernel_registry.unregister(name)
            aics.gradient_registry.unregister(name)

    def test_decorated_kernel_and_gradient(self, ops):
        op = ops("LocationTestDecorated")

        @aics.register_kernel(op)
        def _decorated_kernel(x):
            return x

        @aics.RegisterGradient(op)
        def _decorated_grad(o, grad):
            return grad
        _check_here(_kernel_location(op), "_decorated_kernel")
        _check_here(aics.gradient_registry.location(op), "_decorated_grad")

    def test_kernel_registered_away_from_its_definition(self, ops):
        op = ops("LocationTestLater")

        def _defined_here(x):
            return x

        aics.register_kernel(op, device="MLU")(_defined_here)   # called on another line
        _check_here(_kernel_location(op), "_defined_here")

    def test_kernels_registered_in_a_loop(self, ops):
        def _first_impl(x):
            return x

        def _second_impl(x):
            return x + 1

        pairs = [(ops("LocationTestLoopA"), _first_impl), (ops("LocationTestLoopB"), _second_impl)]
        for op, fn in pairs:
            aics.register_kernel(op)(fn)
        _check_here(_kernel_location("LocationTestLoopA"), "_first_impl")
        _check_here(_kernel_location("LocationTestLoopB"), "_second_impl")

    def test_class_kernel(self, ops):
        op = ops("LocationTestClass")

        @aics.register_kernel(op)
        class _ClassKernel:
            def __init__(self, attrs):
                pass

            def compute(self, ctx, x):
                return x
        _check_here(_kernel_location(op), "_ClassKernel")

    def test_op_and_no_gradient_point_at_the_call(self, ops):
        op = ops("LocationTestOp")  # registered inside the fixture: points there
        path, line = aics.op_def_registry.get(op).registered_at
        assert os.path.abspath(path) == os.path.abspath(__file__)
        assert "aics.register_op(name)" in _source(__file__).splitlines()[line - 1]
        aics.no_gradient("LocationTestOp")
        path, line = aics.gradient_registry.location(op)
        assert 'aics.no_gradient("LocationTestOp")' in _source(__file__).splitlines()[line - 1]
