"""Module boundaries the source tree promises (ARCHITECTURE.md): kernels and ops depend on
the framework, never on each other; the framework imports nothing above it (no kernel, reference
or speed layer's); the reference kernels never import the speed layer; the core packages import
in no circle; no private name is imported, or private attribute read, across modules.

Checked on the source with the ast module, so an import hidden inside a function counts too.
"""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "aicslib"


def _modules(subdir=""):
    return sorted((PACKAGE / subdir).rglob("*.py"))


def _imports(path, source=None):
    """(absolute module imported, names imported from it) for each import in ``path`` (or in
    ``source``, read as if it were that file)."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"), str(path))
    package = ["aicslib"] + list(path.relative_to(PACKAGE).parent.parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


def _targets(module, names):
    """The aicslib modules an import statement reaches (``from . import x`` names modules)."""
    out = [module]
    for n in names:
        if (PACKAGE.parent / (module.replace(".", "/") + f"/{n}.py")).exists():
            out.append(f"{module}.{n}")
    return out


def _rel(path):
    return str(path.relative_to(PACKAGE.parent))


@pytest.mark.parametrize("path", _modules("kernels"), ids=_rel)
def test_kernels_do_not_import_ops(path):
    for module, names in _imports(path):
        for target in _targets(module, names):
            assert not target.startswith(("aicslib.ops", "aicslib.train", "aicslib.nn")), \
                f"{_rel(path)} imports {target}: kernels depend only on aicslib.framework"


@pytest.mark.parametrize("path", _modules("framework"), ids=_rel)
def test_framework_imports_no_kernels(path):
    for module, names in _imports(path):
        for target in _targets(module, names):
            assert not target.startswith(("aicslib.kernels", "aicslib.accel")), \
                f"{_rel(path)} imports {target}: the framework reaches kernels through the kernel registry"


@pytest.mark.parametrize("path", _modules("kernels"), ids=_rel)
def test_reference_kernels_do_not_import_the_speed_layer(path):
    for module, names in _imports(path):
        for target in _targets(module, names):
            assert not target.startswith("aicslib.accel"), \
                f"{_rel(path)} imports {target}: the reference kernels stand without the speed layer"


@pytest.mark.parametrize("path", _modules("ops"), ids=_rel)
def test_ops_do_not_import_kernels(path):
    for module, names in _imports(path):
        for target in _targets(module, names):
            assert not target.startswith("aicslib.kernels"), \
                f"{_rel(path)} imports {target}: ops reach kernels only through the kernel registry"


@pytest.mark.parametrize("path", _modules(), ids=_rel)
def test_no_private_name_imported_across_modules(path):
    for module, names in _imports(path):
        if not module.startswith("aicslib"):
            continue
        private = [n for n in names if n.startswith("_") and not n.startswith("__")]
        assert not private, f"{_rel(path)} imports private {private} from {module}"


def test_the_checks_see_imports():
    # The scanner itself must find what it is looking for, or the tests above prove nothing.
    found = dict(_imports(PACKAGE / "framework" / "session.py"))
    assert "aicslib.framework.execute" in found and "KernelCall" in found["aicslib.framework.execute"]
    assert any(t.startswith("aicslib.kernels.conv_ops")
               for m, n in _imports(PACKAGE / "kernels" / "__init__.py") for t in _targets(m, n))


# ---------------------------------------------------------------------------
# Dependencies one way (ARCHITECTURE.md, "Layers"): the framework is the bottom layer.

FRAMEWORK_MUST_NOT_IMPORT = ("aicslib.ops", "aicslib.kernels", "aicslib.accel", "aicslib.grappler",
                             "aicslib.eager")


def _aicslib_targets(path):
    for module, names in _imports(path):
        if module == "aicslib" or module.startswith("aicslib."):
            yield from _targets(module, names)


@pytest.mark.parametrize("path", _modules("framework"), ids=_rel)
def test_framework_imports_nothing_above_it(path):
    # ast.walk sees imports inside functions too: a deferred import is still a dependency
    for target in _aicslib_targets(path):
        assert not target.startswith(FRAMEWORK_MUST_NOT_IMPORT), \
            f"{_rel(path)} imports {target}: the framework reaches ops, kernels and rewriters only " \
            f"through registries and registration hooks"


def _package_of(module):
    """``aicslib.framework.ops`` -> ``framework``; a top-level module is its own package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _package_graph():
    """Package -> {package it imports: first file doing so}, ``aicslib/__init__`` left out (it
    imports everything to build the public namespace)."""
    graph = {}
    for path in _modules():
        rel = path.relative_to(PACKAGE)
        if rel.parts == ("__init__.py",):
            continue
        src = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for target in _aicslib_targets(path):
            dst = _package_of(target)
            if dst is not None and dst != src:
                graph.setdefault(src, {}).setdefault(dst, _rel(path))
    return graph


def _cycles(graph):
    """The strongly connected components with more than one package (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)
    for v in list(graph):
        if v not in index:
            visit(v)
    return found


# The core and runtime layers must form no cycle. The API layer (train, summary, compat, keras,
# models, distribute) still imports in circles through train <-> summary <-> compat.v1 and the
# top-level namespace; that is outside these layers and tracked separately.
CORE_AND_RUNTIME = {"framework", "ops", "kernels", "accel", "native", "grappler", "eager", "autograph",
                    "config", "flags"}


def test_core_packages_form_no_import_cycle():
    graph = _package_graph()
    for component in _cycles(graph):
        core = component & CORE_AND_RUNTIME
        assert not core, f"import cycle through {sorted(component)}: " + "; ".join(
            f"{a} -> {b} ({graph[a][b]})" for a in sorted(component) for b in sorted(graph.get(a, {}))
            if b in component)


def test_layers_point_down():
    graph = _package_graph()
    below = {"framework": set(), "ops": {"framework"}, "grappler": {"framework"},
             "eager": {"framework", "ops", "autograph", "config"}}
    for package, allowed in below.items():
        reached = set(graph.get(package, {})) - {"flags"}
        assert reached <= allowed, f"{package} imports {sorted(reached - allowed)}: " + ", ".join(
            graph[package][p] for p in sorted(reached - allowed))


# ---------------------------------------------------------------------------
# No reads of another module's private attributes: a module uses what others offer publicly.

# name -> why reaching it from another module is right
PRIVATE_ACCESS_ALLOWED = {
    "_as_graph_element": "TF's protocol for objects that stand for a graph element (a Variable)",
    "_create_slots": "TF's Optimizer hook, overridden by subclasses and called by wrappers",
    "_flat_numpy_iterator": "Dataset's protocol with its iterator kernel; kernels/ is outside "
                            "this layer's change and moves with the speed layer",
    "_session_closed": "the hook a session resource (a queue, a dataset iterator kernel's state) "
                       "implements to hear its Session close, as TF's ResourceMgr clears resources",
    "_hyper_cache": "the wrapped optimizer's per-graph hyperparameter cache, which a loss-scale "
                    "optimizer must forget entries of after a cond (keras/ API layer)",
}


def _private_names_defined(tree):
    """Private names a module defines: its classes' attributes (assigned on self/cls, in the
    class body or ``__slots__``) and its own top-level names."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(item.name)
                elif isinstance(item, ast.Assign):
                    for target in item.targets:
                        if isinstance(target, ast.Name):
                            names.add(target.id)
                            if target.id == "__slots__" and isinstance(item.value, (ast.Tuple, ast.List)):
                                names.update(e.value for e in item.value.elts if isinstance(e, ast.Constant))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            names.add(node.attr)
    for item in tree.body:
        if isinstance(item, (ast.FunctionDef, ast.ClassDef)):
            names.add(item.name)
        elif isinstance(item, ast.Assign):
            names.update(n.id for t in item.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _trees():
    return {path: ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in _modules()}


TREES = _trees()
DEFINED = {path: _private_names_defined(tree) for path, tree in TREES.items()}
DEFINED_ANYWHERE = set().union(*DEFINED.values())


def _foreign_private_accesses(path):
    """``obj._name`` where ``_name`` is defined by another aicslib module, not by this one
    (``self._x`` and ``cls._x`` are the class's own business)."""
    for node in ast.walk(TREES[path]):
        if isinstance(node, ast.Attribute):
            obj, name = node.value, node.attr
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BY_NAME \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
            obj, name = node.args[0], node.args[1].value  # getattr(op, "_inputs") is the same read
        else:
            continue
        if not isinstance(name, str) or not name.startswith("_") or name.startswith("__"):
            continue
        if isinstance(obj, ast.Name) and obj.id in ("self", "cls"):
            continue
        if name in DEFINED[path] or name not in DEFINED_ANYWHERE:
            continue  # its own, or not aicslib's (sys._getframe, a namedtuple's _fields)
        if name not in PRIVATE_ACCESS_ALLOWED:
            yield node.lineno, name


_BY_NAME = ("getattr", "hasattr", "setattr", "delattr")


@pytest.mark.parametrize("path", _modules(), ids=_rel)
def test_no_private_attribute_of_another_module(path):
    found = list(_foreign_private_accesses(path))
    assert not found, f"{_rel(path)} reaches into other modules' private attributes: " + ", ".join(
        f"line {line}: .{name}" for line, name in found)


def test_the_boundary_checks_see_violations():
    # Each checker must flag what it exists to flag, or its passing proves nothing.
    probe = PACKAGE / "framework" / "probe.py"  # not on disk: its source is given
    source = "def f(op):\n    from ..ops import math_ops\n    return op._inputs\n"
    assert any(t.startswith("aicslib.ops") for m, n in _imports(probe, source) for t in _targets(m, n))
    assert "_inputs" not in _private_names_defined(ast.parse(source)) and "_inputs" in DEFINED_ANYWHERE
    assert _cycles({"a": {"b": ""}, "b": {"a": ""}, "c": {"a": ""}}) == [{"a", "b"}]
