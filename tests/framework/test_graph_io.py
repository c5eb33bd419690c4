"""GraphDef as JSON: as_graph_def, write_graph / read_graph, import_graph_def, cross-process runs."""
import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import aicslib as aics


def _build_model():
    """y = relu-free tiny MLP with a placeholder, constants, a control edge and a device scope."""
    x = aics.placeholder(aics.float32, [None, 3], name="x")
    w = aics.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
    b = aics.constant(np.array([0.5, -0.5], np.float32), name="b")
    with aics.name_scope("layer"):
        with aics.device("/cpu:0"):
            h = aics.matmul(x, w, name="mm")
        marker = aics.no_op(name="marker")
        with aics.control_dependencies([marker]):
            y = aics.add(h, b, name="y")
    parts = aics.split(y, 2, axis=1, name="parts")
    out = aics.multiply(parts[1], 2.0, name="out")
    return x, y, out


def _reference(xv):
    w = np.arange(6, dtype=np.float64).reshape(3, 2) / 10
    y = xv @ w + np.array([0.5, -0.5])
    return y, y[:, 1:] * 2.0


@pytest.fixture
def model_graph():
    g = aics.Graph()
    with g.as_default():
        tensors = _build_model()
    return g, tensors


class TestGraphDef:
    def test_json_serialisable(self, model_graph):
        g, _ = model_graph
        gd = g.as_graph_def()
        text = json.dumps(gd)
        back = json.loads(text)
        assert back == gd
        names = [n["name"] for n in gd["node"]]
        assert names == [op.name for op in g.get_operations()]

    def test_node_defs(self, model_graph):
        g, _ = model_graph
        nodes = {n["name"]: n for n in g.as_graph_def()["node"]}
        assert nodes["layer/mm"]["op"] == "MatMul"
        assert nodes["layer/mm"]["input"] == ["x", "w"]
        assert nodes["layer/mm"]["device"] == "/device:CPU:0"
        assert nodes["layer/y"]["input"] == ["layer/mm", "b", "^layer/marker"]
        assert nodes["out"]["input"][0] == "parts:1"
        assert nodes["w"]["attr"]["value"]["tensor"]["shape"] == [3, 2]
        assert nodes["x"]["attr"]["dtype"] == {"type": "DT_FLOAT"}

    def test_import_round_trip_runs(self, model_graph):
        g, _ = model_graph
        gd = json.loads(json.dumps(g.as_graph_def()))
        xv = np.random.RandomState(0).randn(4, 3).astype(np.float32)
        with aics.Graph().as_default() as g2:
            aics.import_graph_def(gd, name="imp")
            assert g2.get_operation_by_name("imp/layer/mm").device == "/device:CPU:0"
            assert [c.name for c in g2.get_operation_by_name("imp/layer/y").control_inputs] == ["imp/layer/marker"]
            with aics.Session() as s:
                y, out = s.run(["imp/layer/y:0", "imp/out:0"], {"imp/x:0": xv})
        ry, rout = _reference(xv.astype(np.float64))
        np.testing.assert_allclose(y, ry, rtol=1e-5)
        np.testing.assert_allclose(out, rout, rtol=1e-5)

    def test_import_default_scope_and_shapes(self, model_graph):
        g, _ = model_graph
        with aics.Graph().as_default() as g2:
            aics.import_graph_def(g.as_graph_def())
            x = g2.get_tensor_by_name("import/x:0")
            assert x.shape.as_list() == [None, 3]
            assert g2.get_tensor_by_name("import/layer/y:0").shape.as_list() == [None, 2]

    def test_input_map_and_return_elements(self, model_graph):
        g, _ = model_graph
        with aics.Graph().as_default():
            new_x = aics.constant(np.ones((1, 3), np.float32), name="fixed_x")
            y, op = aics.import_graph_def(g.as_graph_def(), input_map={"x:0": new_x},
                                          return_elements=["layer/y:0", "out"], name="m")
            assert y.name == "m/layer/y:0" and op.name == "m/out"
            with aics.Session() as s:
                got = s.run(y)
        np.testing.assert_allclose(got, _reference(np.ones((1, 3)))[0], rtol=1e-6)

    def test_import_twice_gets_unique_scopes(self, model_graph):
        g, _ = model_graph
        with aics.Graph().as_default() as g2:
            aics.import_graph_def(g.as_graph_def(), name="m")
            aics.import_graph_def(g.as_graph_def(), name="m")
            names = {op.name for op in g2.get_operations()}
        assert "m/out" in names and "m_1/out" in names

    def test_unknown_op_type_in_graph_def(self):
        gd = {"node": [{"name": "a", "op": "NoSuchOpType", "input": [], "attr": {}}]}
        with aics.Graph().as_default():
            with pytest.raises(aics.errors.NotFoundError, match="NoSuchOpType"):
                aics.import_graph_def(gd)

    def test_missing_input(self):
        gd = {"node": [{"name": "a", "op": "Identity", "input": ["ghost"], "attr": {"T": {"type": "DT_FLOAT"}}}]}
        with aics.Graph().as_default():
            with pytest.raises(ValueError, match="ghost"):
                aics.import_graph_def(gd)

    def test_bad_attr_value_rejected_on_import(self):
        gd = {"node": [{"name": "m", "op": "MatMul", "input": [],
                        "attr": {"T": {"type": "DT_BOOL"}}}]}
        with aics.Graph().as_default():
            with pytest.raises(TypeError, match="allowed values"):
                aics.import_graph_def(gd)


class TestFiles:
    def test_write_and_read_graph(self, model_graph, tmp_path):
        g, _ = model_graph
        path = aics.io.write_graph(g, str(tmp_path), "model.json")
        assert path == os.path.join(str(tmp_path), "model.json")
        with open(path, encoding="utf-8") as f:
            on_disk = json.load(f)  # plain JSON
        assert on_disk == g.as_graph_def()
        assert aics.io.read_graph(path) == on_disk
        assert [p.name for p in tmp_path.iterdir()] == ["model.json"]  # no temp files left over

    def test_no_pickle_used(self, model_graph, tmp_path, monkeypatch):
        def refuse(*a, **k):
            raise AssertionError("pickle must not be used for graphs")
        for name in ("dump", "dumps", "load", "loads"):
            monkeypatch.setattr(pickle, name, refuse)
        g, _ = model_graph
        path = aics.io.write_graph(g, str(tmp_path), "g.json")
        with aics.Graph().as_default():
            aics.import_graph_def(aics.io.read_graph(path))
        with open(path, "rb") as f:
            assert f.read(1) == b"{"

    def test_runs_in_another_process(self, model_graph, tmp_path):
        g, _ = model_graph
        path = aics.io.write_graph(g, str(tmp_path), "model.json")
        xv = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]], np.float32)
        script = textwrap.dedent(f"""
            import json, sys
            import numpy as np
            import aicslib as aics
            with aics.Graph().as_default():
                aics.import_graph_def(aics.io.read_graph({path!r}), name="")
                with aics.Session() as s:
                    out = s.run("out:0", {{"x:0": np.array({xv.tolist()!r}, np.float32)}})
            json.dump(out.tolist(), sys.stdout)
        """)
        repo = os.path.dirname(os.path.dirname(os.path.abspath(aics.__file__)))
        res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=repo,
                             timeout=60)
        assert res.returncode == 0, res.stderr
        got = np.array(json.loads(res.stdout))
        np.testing.assert_allclose(got, _reference(xv.astype(np.float64))[1], rtol=1e-5)

    def test_string_input_to_import(self, model_graph):
        g, _ = model_graph
        with aics.Graph().as_default() as g2:
            aics.import_graph_def(json.dumps(g.as_graph_def()))
            assert len(g2.get_operations()) == len(g.get_operations())
