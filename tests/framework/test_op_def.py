"""OpDefBuilder: attr/arg spec parsing as TF's op_def_builder.cc, validation, OpDef text format.

Each test registers its ops under a unique name and unregisters them
afterwards, so the suite can be re-run in one process.
"""

import numpy as np
import pytest

import aicslib as aics
from aicslib.framework.op_def import parse_attr_spec



# ---------------------------------------------------------------------------
# Attr specs.

class TestAttrSpecParsing:
    @pytest.mark.parametrize("spec,attr_type", [
        ("a: int", "int"), ("a: float", "float"), ("a: bool", "bool"), ("a: string", "string"),
        ("a: type", "type"), ("a: shape", "shape"), ("a: tensor", "tensor"),
        ("a: list(int)", "list(int)"), ("a: list(type)", "list(type)"),
        ("a: list(float)", "list(float)"), ("a: list(string)", "list(string)"),
        ("a: list(shape)", "list(shape)"), ("a:int", "int"), ("  a :  list( bool )  ", "list(bool)")])
    def test_scalar_and_list_types(self, spec, attr_type):
        a = parse_attr_spec(spec)
        assert a.name == "a"
        assert a.type == attr_type
        assert not a.has_default
        assert a.allowed_values is None and a.minimum is None

    @pytest.mark.parametrize("spec,value", [
        ("x: int = 3", 3), ("x: int = -7", -7), ("x: float = 0.5", 0.5), ("x: bool = true", True),
        ("x: bool = false", False), ("x: string = 'SAME'", "SAME"), ('x: string = "VALID"', "VALID"),
        ("x: type = DT_FLOAT", aics.float32), ("x: type = float", aics.float32),
        ("x: list(int) = [1, 2, 3]", [1, 2, 3]), ("x: list(int) = []", []),
        ("x: list(float) = [0.5]", [0.5])])
    def test_defaults(self, spec, value):
        a = parse_attr_spec(spec)
        assert a.has_default
        assert a.default_value == value
        assert type(a.default_value) is type(value)

    def test_type_allowed_set(self):
        a = parse_attr_spec("T: {half, bfloat16, float, double, int32}")
        assert a.type == "type"
        assert a.allowed_values == [aics.float16, aics.bfloat16, aics.float32, aics.float64, aics.int32]

    def test_string_allowed_set_with_default(self):
        a = parse_attr_spec("padding: {'SAME', 'VALID'} = 'VALID'")
        assert a.type == "string"
        assert a.allowed_values == ["SAME", "VALID"]
        assert a.default_value == "VALID"

    def test_list_of_allowed_types(self):
        a = parse_attr_spec("Tlist: list({float, int32}) >= 1")
        assert a.type == "list(type)"
        assert a.allowed_values == [aics.float32, aics.int32]
        assert a.minimum == 1

    def test_type_default_inside_set(self):
        a = parse_attr_spec("Tidx: {int32, int64} = DT_INT64")
        assert a.default_value == aics.int64

    def test_minimums(self):
        assert parse_attr_spec("N: int >= 2").minimum == 2
        assert parse_attr_spec("N: int >= 0 = 4").default_value == 4
        assert parse_attr_spec("ksize: list(int) >= 4").minimum == 4

    def test_type_groups(self):
        a = parse_attr_spec("T: numbertype")
        assert a.type == "type"
        assert aics.float32 in a.allowed_values and aics.int8 in a.allowed_values
        assert aics.bool not in a.allowed_values
        b = parse_attr_spec("T: floatingpointtype")
        assert set(b.allowed_values) == {aics.float16, aics.bfloat16, aics.float32, aics.float64}

    @pytest.mark.parametrize("spec", [
        "no_colon_here",              # not name: type
        "1x: int",                    # bad attr name
        "x: integer",                 # unknown type
        "x: list(integer)",           # unknown list element type
        "x: {float, nosuchtype}",     # unknown type in a set
        "x: {'a', float}",            # mixed set
        "x: {}",                      # empty set
        "x: {float, int32",           # unterminated set
        "x: int =",                   # missing default
        "x: int = 1.5",               # default of the wrong type
        "x: bool = yes",              # not a bool
        "x: string = unquoted",       # strings need quotes
        "x: list(int) = 3",           # list default not a list
        "x: float >= 1",              # >= only for int and list
        "x: {'SAME', 'VALID'} = 'FULL'",  # default outside the allowed set
        "x: int >= 3 = 1",            # default below the minimum
    ])
    def test_bad_specs_raise_at_parse(self, spec):
        with pytest.raises((ValueError, TypeError)):
            parse_attr_spec(spec)


class TestBuilder:
    def test_bad_attr_spec_raises_at_the_attr_call(self, op_name):
        b = aics.register_op(op_name()).input("x: T").output("y: T")
        with pytest.raises(ValueError, match="integer"):
            b.attr("T: integer")

    def test_bad_input_spec_raises_at_the_input_call(self, op_name):
        b = aics.register_op(op_name())
        with pytest.raises(ValueError):
            b.input("x T")
        with pytest.raises(ValueError):
            b.input("x: 3 * T")

    def test_duplicate_attr_and_argument_names(self, op_name):
        b = aics.register_op(op_name()).attr("T: type")
        with pytest.raises(ValueError, match="twice"):
            b.attr("T: {float}")
        b.input("x: T")
        with pytest.raises(ValueError, match="twice"):
            b.output("x: T")

    def test_op_name_must_be_camel_case(self):
        with pytest.raises(ValueError, match="CamelCase"):
            aics.register_op("lowercase_op")

    def test_registering_twice_raises_key_error(self, op_name):
        n = op_name()
        aics.register_op(n).output("y: float")
        with pytest.raises(KeyError, match=n):
            aics.register_op(n)

    def test_undeclared_type_attr_is_reported(self, op_name):
        n = op_name()
        aics.register_op(n).input("x: T").output("y: T")
        with pytest.raises(ValueError, match="'T'"):
            aics.op_def_registry.get(n)

    def test_attr_declared_after_use_is_fine(self, op_name):
        n = op_name()
        aics.register_op(n).input("x: T").output("y: T").attr("T: {float, double}")
        od = aics.op_def_registry.get(n)
        assert od.input_arg[0].type_attr == "T"
        assert od.attr[0].allowed_values == [aics.float32, aics.float64]

    def test_number_attr_must_be_int(self, op_name):
        n = op_name()
        aics.register_op(n).input("xs: N * T").output("y: T").attr("N: float").attr("T: type")
        with pytest.raises(ValueError, match="int"):
            aics.op_def_registry.get(n)

    def test_arg_kinds(self, op_name):
        n = op_name()
        aics.register_op(n).input("a: float").input("b: N * T").input("c: Tlist") \
            .input("d: Ref(T)").output("o: int64").attr("N: int >= 1").attr("T: type") \
            .attr("Tlist: list(type)")
        od = aics.op_def_registry.get(n)
        a, b, c, d = od.input_arg
        assert a.type == aics.float32 and a.type_attr is None
        assert b.number_attr == "N" and b.type_attr == "T" and b.is_list
        assert c.type_list_attr == "Tlist" and c.is_list
        assert d.is_ref and d.type_attr == "T"
        assert od.output_arg[0].type == aics.int64

    def test_lookup_unknown_raises_not_found(self):
        assert aics.op_def_registry.get("NoSuchOpAnywhere") is None
        with pytest.raises(aics.errors.NotFoundError, match="NoSuchOpAnywhere"):
            aics.op_def_registry.lookup("NoSuchOpAnywhere")

    def test_unknown_op_type_in_raw_ops(self):
        with pytest.raises(AttributeError, match="NoSuchOpAnywhere"):
            aics.raw_ops.NoSuchOpAnywhere

    def test_list_ops_contains_core(self):
        ops = aics.op_def_registry.list_ops()
        assert {"MatMul", "AddV2", "Const", "Placeholder", "ConcatV2"} <= set(ops)
        assert ops == sorted(ops)


# ---------------------------------------------------------------------------
# Attr values checked when a node is built.

class TestAttrValuesAtConstruction:
    @pytest.fixture
    def clip_op(self, op_name):
        n = op_name("Clip")
        aics.register_op(n).input("x: T").output("y: T").attr("T: {float, double}") \
            .attr("mode: {'low', 'high'} = 'low'").attr("k: int >= 1 = 1").attr("scale: float = 1.0") \
            .attr("axes: list(int) >= 1 = [0]").attr("flag: bool = false")

        @aics.register_kernel(n, type_constraint={"T": [aics.float32, aics.float64]})
        def _k(x, mode, k, scale, axes, flag):
            return (x * k * scale).astype(x.dtype)
        return n

    def test_defaults_are_filled_in(self, clip_op):
        with aics.Graph().as_default():
            y = getattr(aics.raw_ops, clip_op)(x=np.float32(2.0))
            op = y.op
            assert op.get_attr("mode") == "low"
            assert op.get_attr("k") == 1
            assert op.get_attr("scale") == 1.0
            assert op.get_attr("axes") == [0]
            assert op.get_attr("flag") is False
            assert op.get_attr("T") == aics.float32

    @pytest.mark.parametrize("attrs,exc,pattern", [
        ({"mode": "middle"}, TypeError, "allowed values"),
        ({"k": 0}, ValueError, "minimum"),
        ({"k": 1.5}, TypeError, "int"),
        ({"k": True}, TypeError, "int"),
        ({"scale": "big"}, TypeError, "float"),
        ({"axes": []}, ValueError, "at least 1"),
        ({"axes": 3}, TypeError, "list"),
        ({"flag": 1}, TypeError, "bool"),
        ({"unknown_attr": 1}, TypeError, "unexpected attr"),
    ])
    def test_wrong_values_raise_when_the_node_is_built(self, clip_op, attrs, exc, pattern):
        g = aics.Graph()
        with g.as_default():
            with pytest.raises(exc, match=pattern):
                getattr(aics.raw_ops, clip_op)(x=np.float32(2.0), **attrs)
        # Nothing named after the op was added: the error came before the node existed.
        assert not [o for o in g.get_operations() if o.type == clip_op]

    def test_wrong_values_raise_eagerly_too(self, clip_op):
        with pytest.raises(TypeError, match="allowed values"):
            getattr(aics.raw_ops, clip_op)(x=np.float32(2.0), mode="middle")

    def test_dtype_outside_allowed_set(self, clip_op):
        with aics.Graph().as_default():
            with pytest.raises(TypeError, match="int32"):
                getattr(aics.raw_ops, clip_op)(x=np.int32(2))

    def test_error_names_the_attr_and_op(self, clip_op):
        with aics.Graph().as_default():
            with pytest.raises(TypeError) as ei:
                getattr(aics.raw_ops, clip_op)(x=np.float32(2.0), mode="middle")
        assert "'mode'" in str(ei.value) and clip_op in str(ei.value)

    def test_core_op_wrong_attr(self):
        with aics.Graph().as_default():
            a = aics.constant([[1.0]])
            with pytest.raises(TypeError, match="transpose_a"):
                aics.raw_ops.MatMul(a=a, b=a, transpose_a="yes")
            with pytest.raises(TypeError, match="bool"):
                aics.matmul(aics.constant([[True]]), aics.constant([[True]]))

    def test_good_values_run(self, clip_op):
        y = getattr(aics.raw_ops, clip_op)(x=np.float32(2.0), k=3, scale=0.5, mode="high")
        assert float(y) == 3.0


class TestListInputs:
    def test_n_times_t_infers_n_and_t(self):
        with aics.Graph().as_default():
            xs = [aics.constant([1.0, 2.0]), aics.constant([3.0, 4.0]), aics.constant([5.0, 6.0])]
            s = aics.add_n(xs)
            assert s.op.get_attr("N") == 3
            assert s.op.get_attr("T") == aics.float32
            assert len(s.op.inputs) == 3
            with aics.Session() as sess:
                np.testing.assert_array_equal(sess.run(s), [9.0, 12.0])

    def test_n_times_t_mixed_types_rejected(self):
        with aics.Graph().as_default():
            with pytest.raises(TypeError, match="AddN"):
                aics.add_n([aics.constant([1.0]), aics.constant([1], dtype=aics.int32)])

    def test_n_minimum_enforced(self, op_name):
        n = op_name("AtLeastTwo")
        aics.register_op(n).input("xs: N * T").output("y: T").attr("N: int >= 2").attr("T: {float}")
        with aics.Graph().as_default():
            with pytest.raises(ValueError, match="at least minimum 2"):
                getattr(aics.raw_ops, n)(xs=[aics.constant(1.0)])

    def test_list_input_must_be_a_list(self):
        with aics.Graph().as_default():
            with pytest.raises(TypeError, match="Expected list"):
                aics.raw_ops.AddN(inputs=aics.constant([1.0]))

    def test_type_list_attr(self):
        with aics.Graph().as_default():
            outs = aics.identity_n([aics.constant(1.0), aics.constant(2), aics.constant(True)])
            op = outs[0].op
            assert op.get_attr("T") == [aics.float32, aics.int32, aics.bool]
            assert [o.dtype for o in outs] == [aics.float32, aics.int32, aics.bool]


# ---------------------------------------------------------------------------
# OpDef text format (what tf.raw_ops / op_def_registry.get print in TF).

class TestOpDefText:
    def test_matmul_text_matches_tf_layout(self):
        text = str(aics.op_def_registry.get("MatMul"))
        expected_head = "\n".join([
            'name: "MatMul"',
            "input_arg {", '  name: "a"', '  type_attr: "T"', "}",
            "input_arg {", '  name: "b"', '  type_attr: "T"', "}",
            "output_arg {", '  name: "product"', '  type_attr: "T"', "}",
            "attr {", '  name: "transpose_a"', '  type: "bool"', "  default_value {", "    b: false",
            "  }", "}"])
        assert text.startswith(expected_head)
        assert "\n".join(["attr {", '  name: "T"', '  type: "type"', "  allowed_values {", "    list {",
                          "      type: DT_HALF", "      type: DT_BFLOAT16", "      type: DT_FLOAT",
                          "      type: DT_DOUBLE", "      type: DT_INT32"]) in text

    def test_number_attr_and_minimum(self):
        text = str(aics.op_def_registry.get("AddN"))
        assert 'input_arg {\n  name: "inputs"\n  type_attr: "T"\n  number_attr: "N"\n}' in text
        assert 'attr {\n  name: "N"\n  type: "int"\n  has_minimum: true\n  minimum: 1\n}' in text

    def test_list_default_minimum_zero_and_stateful(self, op_name):
        n = op_name("TextOp")
        aics.register_op(n).input("x: T").output("y: T").attr("T: list(type) >= 0") \
            .attr("dims: list(int) = [1, 2]").attr("pad: {'SAME', 'VALID'} = 'SAME'") \
            .attr("end: string = '\n'").attr("alpha: float = 0.25").set_is_stateful()
        text = str(aics.op_def_registry.get(n))
        assert 'type_list_attr: "T"' in text
        # proto3 text leaves out a zero minimum but keeps has_minimum.
        assert 'name: "T"\n  type: "list(type)"\n  has_minimum: true\n}' in text
        assert "default_value {\n    list {\n      i: 1\n      i: 2\n    }\n  }" in text
        assert 'allowed_values {\n    list {\n      s: "SAME"\n      s: "VALID"\n    }\n  }' in text
        assert 'default_value {\n    s: "\\n"\n  }' in text  # escaped, as protobuf text format does
        assert "f: 0.25" in text
        assert text.endswith("is_stateful: true")

    def test_to_dict_is_json_serialisable(self):
        import json
        d = aics.op_def_registry.get("ConcatV2").to_dict()
        back = json.loads(json.dumps(d))
        assert back["name"] == "ConcatV2"
        assert back["input_arg"][0] == {"name": "values", "type_attr": "T", "number_attr": "N"}
