"""Binary GraphDef (.pb) and text (.pbtxt): written with TensorFlow's GraphDef message (from the
tensorboard package), read back, imported and run; NodeDef fields checked against TF's names."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from tensorboard.compat.proto import graph_pb2, types_pb2

import aicslib as aics


def _model():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [None, 3], name="x")
        w = aics.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 5.0, name="w")
        b = aics.constant(np.array([0.5, -1.0], np.float32), name="b")
        y = aics.nn.relu(aics.matmul(x, w) + b, name="y") if hasattr(aics, "nn") else aics.matmul(x, w) + b
        aics.identity(y, name="out")
    return g


def test_binary_pb_is_a_real_graph_def(tmp_path):
    g = _model()
    path = aics.io.write_graph(g, str(tmp_path), "model.pb", as_text=False)
    proto = graph_pb2.GraphDef()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    nodes = {n.name: n for n in proto.node}
    assert nodes["x"].op == "Placeholder"
    assert nodes["x"].attr["dtype"].type == types_pb2.DT_FLOAT
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [-1, 3]
    assert nodes["w"].op == "Const"
    t = nodes["w"].attr["value"].tensor
    assert t.dtype == types_pb2.DT_FLOAT and [d.size for d in t.tensor_shape.dim] == [3, 2]
    np.testing.assert_array_equal(np.frombuffer(t.tensor_content, "<f4").reshape(3, 2),
                                  np.arange(6, dtype=np.float32).reshape(3, 2) / 5.0)
    assert nodes["MatMul"].op == "MatMul" and list(nodes["MatMul"].input) == ["x", "w"]
    assert nodes["MatMul"].attr["transpose_a"].b is False


def test_pb_and_pbtxt_round_trip_and_run(tmp_path):
    g = _model()
    xv = np.array([[1.0, -2.0, 3.0], [0.5, 0.5, 0.5]], np.float32)
    with aics.Session(graph=g) as sess:
        want = sess.run("out:0", {"x:0": xv})
    for name, as_text in (("m.pb", False), ("m.pbtxt", True)):
        path = aics.io.write_graph(g, str(tmp_path), name, as_text=as_text)
        assert aics.io.read_graph(path) == g.as_graph_def() if not as_text else True
        g2 = aics.Graph()
        with g2.as_default():
            aics.import_graph_def(aics.io.read_graph(path), name="")
            with aics.Session() as sess:
                np.testing.assert_allclose(sess.run("out:0", {"x:0": xv}), want)
    with open(tmp_path / "m.pb", "rb") as f:  # import_graph_def also takes the bytes
        data = f.read()
    with aics.Graph().as_default():
        out, = aics.import_graph_def(data, return_elements=["out:0"], name="imported")
        assert out.name == "imported/out:0"


@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from(["float32", "float64", "int32", "int64", "bool", "uint8", "float16", "bfloat16"]),
       shape=st.lists(st.integers(0, 3), max_size=3), seed=st.integers(0, 1000))
def test_const_tensors_survive_the_proto(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dt = aics.as_dtype(dtype)
    value = rng.uniform(-100, 100, size=shape)
    if dt.is_bool:
        value = value > 0
    elif dt.is_integer:
        value = np.clip(value, 0 if dtype == "uint8" else -100, 100).astype(dt.as_numpy_dtype)
    g = aics.Graph()
    with g.as_default():
        aics.constant(value, dtype=dt, name="c")
    from aicslib.framework.graph_def_proto import graph_def_to_proto, proto_to_graph_def
    back = proto_to_graph_def(graph_def_to_proto(g).SerializeToString())
    g2 = aics.Graph()
    with g2.as_default():
        aics.import_graph_def(back, name="")
        with aics.Session() as sess:
            got = sess.run("c:0")
    with aics.Session(graph=g) as sess:
        np.testing.assert_array_equal(got, sess.run("c:0"))


def test_string_constants_and_list_attrs():
    g = aics.Graph()
    with g.as_default():
        aics.constant([b"ab", b"\xff\x00"], name="s")
        aics.transpose(aics.ones([2, 3]), [1, 0], name="t")
    from aicslib.framework.graph_def_proto import graph_def_to_proto, proto_to_graph_def
    proto = graph_def_to_proto(g)
    s = next(n for n in proto.node if n.name == "s")
    assert list(s.attr["value"].tensor.string_val) == [b"ab", b"\xff\x00"]
    assert proto_to_graph_def(proto) == g.as_graph_def()


def test_garbage_bytes_are_rejected_clearly():
    with aics.Graph().as_default():
        with pytest.raises(aics.errors.InvalidArgumentError, match="binary GraphDef"):
            aics.import_graph_def(b"\x0a\xff\xff\xff\xff\xff")


@settings(max_examples=8)
@given(n=st.integers(0, 6), x=st.floats(-2.0, 2.0, allow_nan=False, width=32),
       as_binary=st.booleans())
def test_a_while_loop_survives_export_and_import(tmp_path_factory, n, x, as_binary):
    """The NextIteration -> Merge back edge is the one cycle a GraphDef may hold: imported
    (from JSON or a binary .pb) it is wired after the loop's other nodes, and the loop still
    computes x**n as a Python loop does."""
    g = aics.Graph()
    with g.as_default():
        xp = aics.placeholder(aics.float32, shape=[], name="x")
        _, acc = aics.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * xp),
                                 [aics.constant(0), aics.constant(1.0)])
        aics.identity(acc, name="out")
    if as_binary:
        d = tmp_path_factory.mktemp("pb")
        aics.io.write_graph(g, str(d), "loop.pb", as_text=False)
        exported = (d / "loop.pb").read_bytes()
    else:
        exported = g.as_graph_def()
    expected = np.float32(1.0)
    for _ in range(n):
        expected = np.float32(expected * np.float32(x))
    g2 = aics.Graph()
    with g2.as_default():
        aics.import_graph_def(exported, name="imp")
        with aics.Session() as sess:
            got = sess.run("imp/out:0", feed_dict={"imp/x:0": x})
    np.testing.assert_allclose(got, expected, rtol=1e-6)
