"""Malformed GraphDefs (issue 17): validated before anything is built, with TF's error
classes (InvalidArgumentError, also a ValueError as TF's Python import_graph_def raises;
NotFoundError for unknown ops) naming the node. Messages follow TF's graph importer
("Duplicate node name in graph", "Connecting to invalid output 7 of source node mul
which has 1 outputs", "Input 0 of node ... was passed int32 ... incompatible with
expected float").
"""
import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import aicslib as aics
from aicslib.framework.graph_io import validate_graph_def


def _graph_def():
    with aics.Graph().as_default() as g:
        x = aics.placeholder(aics.float32, [None, 2], name="x")
        w = aics.constant(np.ones((2, 2), np.float32), name="w")
        m = aics.matmul(x, w, name="mm")
        aics.multiply(m, 2.0, name="mul")
        aics.constant([b"a\0", b"bc"], name="names")
    return g.as_graph_def()


def _import(gd, **kw):
    with aics.Graph().as_default() as g:
        aics.import_graph_def(gd, **kw)
    return g


def test_valid_graph_def_round_trips_with_string_constants():
    gd = _graph_def()
    g = _import(json.loads(json.dumps(gd)))
    with aics.Session(graph=g) as sess:
        out, names = sess.run(["import/mul:0", "import/names:0"],
                              {"import/x:0": np.ones((1, 2), np.float32)})
    np.testing.assert_allclose(out, [[4.0, 4.0]])
    assert list(names) == [b"a\0", b"bc"]


def _node(gd, name):
    return next(n for n in gd["node"] if n["name"] == name)


def test_output_index_out_of_range_names_the_node():
    gd = _graph_def()
    _node(gd, "mul")["input"][0] = "mm:7"
    # TF's words, after the field they are about: the node's input 0
    with pytest.raises(aics.errors.InvalidArgumentError,
                       match="Node 'mul': input 0 'mm:7': Connecting to invalid output 7 of source "
                             "node mm which has 1 outputs"):
        _import(gd)


@pytest.mark.parametrize("claimed", ["DT_INT32", "DT_DOUBLE"])
def test_const_whose_dtype_attr_disagrees_with_its_value_is_refused(claimed):
    # TF 2.21 imports such a node and fails when it runs ("Type mismatch between value (float)
    # and dtype (int32)"), or at the consumer's dtype check; here the import names the node
    gd = _graph_def()
    _node(gd, "w")["attr"]["dtype"] = {"type": claimed}
    shown = {"DT_INT32": ("int32", "int32"), "DT_DOUBLE": ("double", "float64")}[claimed]
    with pytest.raises(aics.errors.InvalidArgumentError,
                       match=rf"Node 'w': Type mismatch between value \(float\) and dtype "
                             rf"\({shown[0]}\): attr 'value' holds a float32 tensor, attr 'dtype' "
                             rf"says {shown[1]}\.") as info:
        _import(gd)
    assert isinstance(info.value, ValueError)
    with aics.Graph().as_default() as g:
        with pytest.raises(ValueError, match="Node 'names': Type mismatch"):
            bad = _graph_def()
            _node(bad, "names")["attr"]["dtype"] = {"type": "DT_FLOAT"}
            aics.import_graph_def(bad)
        assert g.get_operations() == []        # nothing was added


def test_duplicate_node_names_are_refused():
    gd = _graph_def()
    gd["node"].append(copy.deepcopy(_node(gd, "w")))
    with pytest.raises(aics.errors.InvalidArgumentError, match="Duplicate node name in graph: 'w'"):
        _import(gd)


def test_int32_input_into_a_float_op_is_refused():
    gd = _graph_def()
    _node(gd, "w")["attr"]["dtype"] = {"type": "DT_INT32"}
    _node(gd, "w")["attr"]["value"]["tensor"].update(dtype="DT_INT32", values=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="Input 1 of node mm was passed int32 from import/w:0 "
                                         "incompatible with expected float32"):
        _import(gd)


def test_input_map_of_the_wrong_dtype_is_refused():
    gd = _graph_def()
    with aics.Graph().as_default():
        ints = aics.constant(np.ones((1, 2), np.int32))
        with pytest.raises(aics.errors.InvalidArgumentError, match="Input 0 of node mm was passed int32"):
            aics.import_graph_def(gd, input_map={"x:0": ints})
        with pytest.raises(ValueError, match=r"not found in graph_def: \[nothere:0\]"):
            aics.import_graph_def(gd, input_map={"nothere:0": ints})


@pytest.mark.parametrize("shape,match", [([-1, 2], "negative dimension"),
                                         ([1 << 20, 1 << 20], "OOM when allocating tensor with shape"),
                                         ([3], "has 4 values for shape")])
def test_const_shapes_are_checked(shape, match):
    gd = _graph_def()
    _node(gd, "w")["attr"]["value"]["tensor"]["shape"] = shape
    with pytest.raises((aics.errors.InvalidArgumentError, aics.errors.ResourceExhaustedError),
                       match=f"(?s)'w'.*{match}|{match}.*'w'"):
        _import(gd)


def test_unknown_op_is_not_found():
    gd = _graph_def()
    _node(gd, "mul")["op"] = "NoSuchOp"
    with pytest.raises(aics.errors.NotFoundError, match="Op type not registered 'NoSuchOp' in node 'mul'"):
        _import(gd)


def test_deeply_nested_json_is_invalid_argument():
    text = '{"node": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(aics.errors.InvalidArgumentError, match="nested too deeply"):
        _import(text)


def test_missing_input_and_control_order():
    gd = _graph_def()
    _node(gd, "mul")["input"] = ["ghost"]
    with pytest.raises(aics.errors.InvalidArgumentError, match="Node 'mul': Unknown input node 'ghost'"):
        _import(gd)
    gd = _graph_def()
    _node(gd, "mul")["input"] = ["^x"] + _node(gd, "mul")["input"]
    with pytest.raises(aics.errors.InvalidArgumentError, match="Control dependencies must come after"):
        _import(gd)


def test_undeclared_attr_and_return_elements():
    gd = _graph_def()
    _node(gd, "mm")["attr"]["bogus"] = {"i": 1}
    with pytest.raises(aics.errors.InvalidArgumentError, match="NodeDef mentions attr 'bogus'"):
        _import(gd)
    with pytest.raises(ValueError, match="return_element 'nope:0' not found"):
        _import(_graph_def(), return_elements=["nope:0"])


def test_validation_is_callable_on_a_parsed_graph_def():
    validate_graph_def(_graph_def())   # a valid one passes
    with pytest.raises(aics.errors.InvalidArgumentError, match="invalid node name"):
        validate_graph_def({"node": [{"name": "", "op": "NoOp"}]})


_json = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats()
                     | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
_FIELDS = [("name",), ("op",), ("input",), ("input", 0), ("attr",), ("attr", "T"),
           ("attr", "transpose_a"), ("attr", "T", "type"), ("device",)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node=st.sampled_from(["mm", "mul", "w", "x"]), field=st.sampled_from(_FIELDS), value=_json)
def test_any_corrupted_field_gives_a_tf_error_naming_the_node(node, field, value):
    gd = _graph_def()
    target = _node(gd, node)
    parent = target
    for key in field[:-1]:
        if isinstance(parent, dict) and key in parent:
            parent = parent[key]
        elif isinstance(parent, list) and isinstance(key, int) and key < len(parent):
            parent = parent[key]
        else:
            return
    if isinstance(parent, list) and isinstance(field[-1], int) and field[-1] >= len(parent):
        return
    parent[field[-1]] = value
    try:
        _import(gd)
    except (aics.errors.InvalidArgumentError, aics.errors.NotFoundError,
            aics.errors.ResourceExhaustedError) as e:
        assert node in str(e) or "node #" in str(e) or "Duplicate" in str(e) \
            or "import/" in str(e), str(e)
