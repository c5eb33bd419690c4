"""The references of notebook 00's shape exercise and notebook 02's planner lab, against the library
they stand beside: the same pruned set and a valid order as aicslib's planner, the same values as
Session.run, a peak that the simulation and the executor agree on, and the same broadcast shapes as
aics.add's shape function."""
import itertools

import numpy as np
import pytest

import aicslib as aics
from aicslib.framework.planner import default_planner, fetch_targets
from workbook.references import planner as ref
from workbook.references import shapes


def _valid_order(order, feeds):
    pos = {op: i for i, op in enumerate(order)}
    return len(pos) == len(order) and all(
        pos[t.op] < pos[op] for op in order for t in op.inputs if t not in feeds) and all(
        pos[c] < pos[op] for op in order for c in op.control_inputs)


@pytest.mark.parametrize("seed", range(8))
def test_reference_planner_matches_the_library_and_the_session(seed):
    graph, fetches, feeds, unfed = ref.random_graph(seed)
    targets = fetch_targets(fetches, feeds)
    order = ref.reference_order(targets, feeds)
    lib_order, _ = default_planner(targets, feeds, set(fetches))
    assert set(order) == set(lib_order) and _valid_order(order, feeds)
    assert not set(order) & {t.op for t in unfed}          # fed tensors cut their fan-in
    frees = ref.reference_frees(order, set(fetches))
    freed = [t for f in frees for t in f]
    assert len(freed) == len(set(freed)) and not set(freed) & set(fetches)
    with aics.Session(graph=graph) as sess:
        expected = sess.run(fetches, feeds)
    values, peak = ref.reference_run(fetches, feeds)
    for got, want in zip(values, expected):
        np.testing.assert_array_equal(got, want)
    assert peak == ref.simulate_peak(order, frees, feeds, ref.static_nbytes)
    never = ref.simulate_peak(order, [[] for _ in order], feeds, ref.static_nbytes)
    assert peak <= never


def test_reference_run_raises_tfs_error_for_an_unfed_placeholder():
    graph = aics.Graph()
    with graph.as_default():
        x = aics.placeholder(aics.float32, [None, 3], name="x")
        y = aics.tanh(x)
    with pytest.raises(aics.errors.InvalidArgumentError) as session_error:
        aics.Session(graph=graph).run(y)
    with pytest.raises(aics.errors.InvalidArgumentError) as ours:
        ref.reference_run([y], {})
    assert str(ours.value.message) == str(session_error.value.message).split("\n")[0]


def test_deep_chain_needs_no_recursion():
    graph, y, feeds = ref.deep_chain(3000)
    assert len(ref.reference_order([y.op], feeds)) == 3000


def _library_shape(a, b):
    with aics.Graph().as_default():
        try:
            return aics.add(aics.placeholder(aics.float32, a), aics.placeholder(aics.float32, b)).shape.as_list()
        except ValueError:
            return "error"


def test_broadcast_reference_matches_the_shape_function():
    dims = [None, 1, 2, 3]
    shapes_up_to_2 = [list(s) for r in range(3) for s in itertools.product(dims, repeat=r)]
    for a in shapes_up_to_2:
        for b in shapes_up_to_2:
            try:
                mine = shapes.broadcast_static(a, b)
            except ValueError:
                mine = "error"
            assert mine == _library_shape(a, b), (a, b)
