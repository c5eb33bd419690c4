"""Elementwise-chain fusion: the pass groups the right ops, and the tiled one-pass kernel gives
exactly what the unfused kernels give, for any broadcasting and any tile size."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib.framework.execute import apply_op
from aicslib.accel import fused_elementwise as cwise_ops_fused

from accel_switch import accel_on_off  # noqa: F401

RC = aics.RewriterConfig
OFF = aics.ConfigProto(graph_options=aics.GraphOptions(rewrite_options=RC(disable_meta_optimizer=True)))
NO_FUSION = aics.ConfigProto(graph_options=aics.GraphOptions(rewrite_options=RC(elementwise_fusion=RC.OFF)))

UNARY = ["Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Reciprocal", "Exp", "Log", "Tanh", "Sin", "Cos",
         "Sigmoid", "Relu", "Relu6"]
BINARY = ["AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference"]


def test_the_fusion_tables_are_the_elementwise_rows():
    # One table (framework/cwise_table.py): what a program may use is its fusable rows, for the
    # op definition, Grappler's groups and both kernels; each instruction is the function the
    # unfused op's reference kernel runs.
    from aicslib.grappler import op_types
    from aicslib.kernels import cwise_ops_fused as reference
    from aicslib.ops.fused_ops import ELEMENTWISE_PROGRAM_OPS
    assert set(ELEMENTWISE_PROGRAM_OPS) == set(UNARY) | set(BINARY)
    assert set(reference.UNARY) == set(cwise_ops_fused.UNARY) == set(op_types.ELEMENTWISE_UNARY) == set(UNARY)
    assert set(reference.BINARY) == op_types.ELEMENTWISE_BINARY - {"Add", "BiasAdd"} == set(BINARY)
    for op, fn in {**reference.UNARY, **reference.BINARY}.items():
        (kd,) = [kd for kd in aics.kernel_registry.kernels_for(op) if kd.device == "CPU"
                 and kd.priority == 0 and aics.float32 in kd.type_constraint["T"]]
        assert kd.impl is fn, op
    assert {op: fn for op, fn in cwise_ops_fused.UNARY.items() if op != "Relu"} == \
        {op: fn for op, fn in reference.UNARY.items() if op != "Relu"}


def unfused(program, inputs):
    """The program run op by op through the ordinary (unfused) kernels, eagerly."""
    vals = []
    for ins in program:
        op, *operands = ins.split()
        args = [inputs[int(o[1:])] if o[0] == "i" else vals[int(o[1:])] for o in operands]
        vals.append(apply_op(op, [aics.constant(a) for a in args]).numpy())
    return vals[-1]


@st.composite
def programs(draw):
    shapes = draw(st.sampled_from([[(6, 5, 4)], [(6, 5, 4), (4,)], [(6, 5, 4), ()], [(6, 1, 4), (6, 5, 4)],
                                   [(1, 5, 1), (6, 5, 4), (5, 4)], [(30,), (30,), (1,)]]))
    code = []
    for k in range(draw(st.integers(1, 6))):
        refs = [f"i{i}" for i in range(len(shapes))] + [f"t{j}" for j in range(k)]
        if draw(st.booleans()):
            code.append(f"{draw(st.sampled_from(UNARY))} {draw(st.sampled_from(refs))}")
        else:
            code.append(f"{draw(st.sampled_from(BINARY))} {draw(st.sampled_from(refs))} "
                        f"{draw(st.sampled_from(refs))}")
    # every input must reach the output for the output to have the broadcast shape
    for i in range(len(shapes)):
        code.append(f"AddV2 t{len(code) - 1} i{i}")
    return shapes, code


@settings(max_examples=60, deadline=None)
@given(programs(), st.sampled_from([1, 7, 64, 1 << 16]), st.integers(0, 2 ** 16),
       st.sampled_from([np.float32, np.float64]), st.booleans())
def test_tiled_kernel_equals_the_unfused_kernels(prog, tile, seed, dtype, threaded):
    shapes, code = prog
    rng = np.random.default_rng(seed)
    inputs = [(rng.standard_normal(s) * 2).astype(dtype) for s in shapes]
    old, old_busy = cwise_ops_fused.TILE_ELEMENTS, cwise_ops_fused._cores_busy
    cwise_ops_fused.TILE_ELEMENTS = tile
    cwise_ops_fused._cores_busy = (lambda: False) if threaded else (lambda: True)
    try:
        with np.errstate(all="ignore"):
            got = apply_op("_FusedElementwise", [[aics.constant(a) for a in inputs]], {"ops": code}).numpy()
            want = unfused(code, inputs)
    finally:
        cwise_ops_fused.TILE_ELEMENTS, cwise_ops_fused._cores_busy = old, old_busy
    assert got.shape == np.broadcast_shapes(*shapes) and got.dtype == dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.usefixtures("accel_on_off")
def test_hand_worked_chain():
    x = np.array([[-2.0, 0.5], [3.0, -0.25]], np.float32)
    got = apply_op("_FusedElementwise", [[aics.constant(x), aics.constant(np.float32(2))]],
                   {"ops": ["Mul i0 i1", "Relu t0", "Sub t1 i1"]}).numpy()
    np.testing.assert_array_equal(got, [[-2.0, -1.0], [4.0, -2.0]])


@pytest.mark.parametrize("bad", [["Frobnicate i0"], ["Relu t0"], ["AddV2 i0"]])
def test_bad_programs_are_rejected(bad):
    with pytest.raises((aics.errors.InvalidArgumentError, ValueError)):
        apply_op("_FusedElementwise", [[aics.constant(np.ones(3, np.float32))]], {"ops": bad})


def _chain_graph():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [None, 8], name="x")
        a = aics.placeholder(aics.float32, [8], name="a")
        t = aics.multiply(x, a, name="m")
        t = aics.add(t, 1.0, name="add")
        t = aics.tanh(t, name="tanh")
        t = aics.nn.relu(aics.subtract(t, 0.25, name="sub"), name="out")
    return g, x, a, t


def test_chain_becomes_one_fused_node_with_identical_results():
    g, x, a, out = _chain_graph()
    gd = aics.grappler.optimize(g, ["out:0"])
    nodes = {n["name"]: n for n in gd["node"]}
    assert nodes["out"]["op"] == "_FusedElementwise"
    assert nodes["out"]["attr"]["ops"]["list"]["s"] == ["Mul i0 i1", "AddV2 t0 i2", "Tanh t1",
                                                         "Sub t2 i3", "Relu t3"]
    assert not {"m", "add", "tanh", "sub"} & set(nodes)
    rng = np.random.default_rng(0)
    feed = {x: rng.standard_normal((300, 8)).astype(np.float32), a: rng.standard_normal(8).astype(np.float32)}
    with aics.Session(graph=g) as s:
        on = s.run(out, feed)
    with aics.Session(graph=g, config=OFF) as s:
        off = s.run(out, feed)
    np.testing.assert_array_equal(on, off)
    ref = np.maximum(np.tanh(feed[x] * feed[a] + np.float32(1)) - np.float32(0.25), np.float32(0))
    np.testing.assert_allclose(on, ref, rtol=1e-6)


def test_a_value_read_elsewhere_or_fetched_ends_the_group():
    g, x, a, out = _chain_graph()
    with g.as_default():
        aics.exp(g.get_tensor_by_name("add:0"), name="other")
    gd = aics.grappler.optimize(g, ["out:0", "other:0"])
    nodes = {n["name"]: n for n in gd["node"]}
    assert "add" in nodes  # read by tanh and by other: materialized
    assert nodes["out"]["op"] == "_FusedElementwise" and "Mul" not in nodes["out"]["attr"]["ops"]["list"]["s"][0]
    gd = aics.grappler.optimize(g, ["out:0", "tanh:0"])
    assert "tanh" in {n["name"] for n in gd["node"]}


def test_switch_turns_it_off():
    g, x, a, out = _chain_graph()
    with aics.Session(graph=g, config=NO_FUSION) as s:
        feed = {x: np.ones((2, 8), np.float32), a: np.ones(8, np.float32)}
        s.run(out, feed)
    ops = [n["op"] for n in aics.grappler.optimize(g, ["out:0"], RC(elementwise_fusion=RC.OFF))["node"]]
    assert "_FusedElementwise" not in ops and "Tanh" in ops


def test_integer_chains_are_not_fused():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.int32, [4], name="x")
        aics.abs(aics.negative(aics.add(x, 1)), name="out")
    ops = [n["op"] for n in aics.grappler.optimize(g, ["out:0"])["node"]]
    assert "_FusedElementwise" not in ops


@pytest.mark.parametrize("tile", [3, 1 << 16])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_is_bit_identical_on_nan_and_signed_zero(tile, dtype):
    # The fused Relu compares with an array of zeros (a faster NumPy loop than a scalar 0):
    # NaN, -NaN, -0.0, +0.0 and infinities must come out bit for bit as the unfused kernel's.
    x = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, -1.5, 2.5] * 40, dtype).reshape(20, 16)
    code = ["Mul i0 i1", "Relu t0"]
    old = cwise_ops_fused.TILE_ELEMENTS
    cwise_ops_fused.TILE_ELEMENTS = tile
    try:
        got = apply_op("_FusedElementwise", [[aics.constant(x), aics.constant(dtype(1))]], {"ops": code}).numpy()
    finally:
        cwise_ops_fused.TILE_ELEMENTS = old
    want = unfused(code, [x, dtype(1)])
    bits = np.uint32 if dtype == np.float32 else np.uint64
    assert np.array_equal(got.view(bits), want.view(bits))


def test_many_tiles_on_threads_match_one_pass(monkeypatch):
    # 4M floats in 64K tiles: the calling thread and the pool share the tiles (forced on here,
    # as the kernel keeps to one thread while the machine's cores are all busy).
    from aicslib.accel import work_sharder
    submitted = []
    pool = work_sharder.executor()

    class CountingPool:
        def submit(self, fn, *args):
            submitted.append(fn)
            return pool.submit(fn, *args)

    monkeypatch.setattr(cwise_ops_fused, "_cores_busy", lambda: False)
    monkeypatch.setattr(work_sharder, "NUM_THREADS", 2)
    monkeypatch.setattr(work_sharder, "executor", lambda: CountingPool())
    x = np.random.default_rng(0).standard_normal(1 << 22).astype(np.float32)
    code = ["Mul i0 i1", "AddV2 t0 i2", "Tanh t1", "Sub t2 i3", "Relu t3"]
    consts = [np.float32(0.5), np.float32(0.25), np.float32(0.1)]
    got = apply_op("_FusedElementwise", [[aics.constant(v) for v in [x] + consts]], {"ops": code}).numpy()
    want = np.maximum(np.tanh(x * consts[0] + consts[1]) - consts[2], np.float32(0))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert len(submitted) == 1
