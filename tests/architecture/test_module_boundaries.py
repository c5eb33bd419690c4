"""Module boundaries the source tree promises (ARCHITECTURE.md): kernels and ops depend on
the framework, never on each other; the framework on no kernel (reference or speed
layer's); the reference kernels never on the speed layer; and no private name is imported
across modules.

Checked on the source with the ast module, so an import hidden inside a function counts too.
"""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "aicslib"


def _modules(subdir=""):
    return sorted((PACKAGE / subdir).rglob("*.py"))


def _imports(path):
    """(absolute module imported, names imported from it) for each import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
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


#: Reference-kernel modules that only re-export the speed layer's names for a notebook that
#: imports them from here (notebook 05: ``from aicslib.kernels import work_sharder``).
NOTEBOOK_ALIASES = {"aicslib/kernels/work_sharder.py"}


@pytest.mark.parametrize("path", _modules("kernels"), ids=_rel)
def test_reference_kernels_do_not_import_the_speed_layer(path):
    if _rel(path) in NOTEBOOK_ALIASES:
        assert all(not n.startswith("def ") for n in path.read_text().splitlines()), "an alias defines nothing"
        return
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
