"""aics.introspect: where an op is defined, computed and differentiated; registry listings."""
import os
import re

import pytest

import aicslib as aics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(aics.__file__)))


def source_line(loc):
    """The text of ``path:line`` (path relative to the repository or absolute)."""
    path, line = loc.rsplit(":", 1)
    full = path if os.path.isabs(path) else os.path.join(ROOT, path)
    with open(full, encoding="utf-8") as f:
        lines = f.read().splitlines()
    n = int(line)
    assert 1 <= n <= len(lines), loc
    return lines[n - 1]


class TestWhere:
    def test_sin(self):
        # An elementwise op: its definition and its kernel are one row of the elementwise table.
        w = aics.introspect.where("Sin")
        assert w["op"].startswith("aicslib/framework/cwise_table.py:")
        assert source_line(w["op"]).lstrip().startswith('Row("Sin", 1, FLOAT, lambda x')
        cpu = [k for k in w["kernels"] if k["device"] == "CPU"]
        assert len(cpu) == 1
        assert cpu[0]["location"] == w["op"]
        assert set(cpu[0]["type_constraint"]["T"]) == {"float16", "bfloat16", "float32", "float64"}
        assert "np.sin(x, out=out)" in aics.introspect.kernel_source("Sin")
        assert w["gradient"].startswith("aicslib/ops/math_grad.py:")
        assert 'RegisterGradient("Sin")' in source_line(w["gradient"])

    def test_elementwise_rows(self):
        # Every row of the table is where its op (unless defined elsewhere) and each of its kernels
        # point, and the kernels registered there are the row's own functions.
        from aicslib.framework import cwise_table
        for row in cwise_table.ROWS:
            at = f"{os.path.relpath(row.location[0], ROOT)}:{row.location[1]}".replace(os.sep, "/")
            assert source_line(at).lstrip().startswith(f'Row("{row.op}", {row.arity}, '), (row, at)
            w = aics.introspect.where(row.op)
            assert (w["op"] == at) == row.define, (row.op, w["op"])
            kernels = [kd for kd in aics.kernel_registry.kernels_for(row.op) if kd.priority == 0]
            assert kernels and all(kd.location == row.location for kd in kernels), row.op
            assert {kd.impl for kd in kernels} <= {row.fn, row.complex_fn}, row.op
            assert {t for kd in kernels for t in kd.type_constraint.get("T", ())} == set(row.types or ()), row.op

    def test_matmul(self):
        w = aics.introspect.where("MatMul")
        assert 'register_op("MatMul")' in source_line(w["op"])
        assert any('"MatMul"' in source_line(k["location"]) for k in w["kernels"])
        assert 'RegisterGradient("MatMul")' in source_line(w["gradient"])

    def test_not_differentiable_op(self):
        w = aics.introspect.where("Shape")
        assert w["gradient"].startswith("not differentiable (no_gradient) at aicslib/ops/")
        assert "no_gradient" in source_line(w["gradient"].split(" at ")[1])

    def test_tan_has_no_gradient(self):
        assert aics.introspect.where("Tan")["gradient"] is None
        assert "Tan" in aics.introspect.ops_without_gradient()

    def test_unknown_op(self):
        with pytest.raises(aics.errors.NotFoundError, match="NoSuchOp"):
            aics.introspect.where("NoSuchOp")

    def test_every_registration_points_at_a_registration_line(self):
        pattern = re.compile(r"register|RegisterGradient|no_gradient|NotDifferentiable", re.I)
        for op in aics.introspect.list_ops():
            w = aics.introspect.where(op)
            locs = [w["op"]] + [k["location"] for k in w["kernels"]]
            if w["gradient"]:
                locs.append(w["gradient"].split(" at ")[-1])
            for loc in locs:
                line = source_line(loc)
                # Either the registration call itself or the module-level helper call naming the op.
                assert pattern.search(line) or f'"{op}"' in line, (op, loc, line)

    def test_user_registration_points_at_this_file(self):
        name = "IntrospectTestOp"
        aics.register_op(name).input("x: float").output("y: float")
        try:
            aics.register_kernel(name)(lambda x: x)
            w = aics.introspect.where(name)
            assert w["op"].endswith("test_introspection.py:" + str(_line_of('register_op(name)')))
            assert w["kernels"][0]["location"].endswith(":" + str(_line_of("register_kernel(name)")))
        finally:
            aics.op_def_registry.unregister(name)
            aics.kernel_registry.unregister(name)


def _line_of(snippet):
    with open(__file__, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if snippet in line and "_line_of" not in line:
                return i
    raise AssertionError(snippet)


class TestListings:
    def test_list_ops(self):
        ops = aics.introspect.list_ops()
        assert ops == sorted(ops)
        assert {"Sin", "MatMul", "AddV2", "Placeholder", "VarHandleOp"} <= set(ops)
        assert ops == aics.op_def_registry.list_ops()

    def test_list_kernels(self):
        ks = aics.introspect.list_kernels()
        assert ("Sin", "CPU", {"T": ["float16", "bfloat16", "float32", "float64"]}) in ks
        assert ks == sorted(ks, key=lambda k: (k[0], k[1]))
        mm = aics.introspect.list_kernels("MatMul")
        assert all(k[0] == "MatMul" for k in mm) and ("CPU" in {k[1] for k in mm})
        assert len(ks) == len(aics.kernel_registry.all_kernels())

    def test_list_gradients(self):
        diff, nondiff = aics.introspect.list_gradients()
        assert {"Sin", "MatMul", "AddV2", "Sum"} <= set(diff)
        assert {"Shape", "ArgMax", "Equal"} <= set(nondiff)
        assert "Tan" not in diff and "Tan" not in nondiff
        assert not set(diff) & set(nondiff)

    def test_sources(self):
        src = aics.introspect.gradient_source("Sin")
        assert src.lstrip().startswith('@RegisterGradient("Sin")')
        assert "cos" in src
        ksrc = aics.introspect.kernel_source("Sin")
        assert "np.sin" in ksrc
        with pytest.raises(LookupError):
            aics.introspect.gradient_source("Tan")
        with pytest.raises(LookupError):
            aics.introspect.kernel_source("Sin", device="GPU")

    def test_summary(self):
        text = aics.introspect.summary("Sin")
        assert text.startswith("== Sin ==")
        assert 'name: "Sin"' in text
        assert "math_grad.py" in text
        assert "tensorflow/python/ops" in aics.introspect.TF_SOURCE_MAP["gradients"]
