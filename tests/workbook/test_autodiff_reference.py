"""The references of notebooks 08 and 10's labs (workbook/references/power_difference.py, autodiff.py), checked
against the definitions they stand for: central differences, the op-by-op definition of the ops
between xs and ys, and NumPy's broadcasting."""
import numpy as np
import pytest

import aicslib as aics
from workbook import engine
from workbook.references import autodiff as ad
from workbook.references import power_difference as pd


@pytest.mark.parametrize("seed", range(6))
def test_reference_gradients_match_central_differences_on_random_graphs(seed):
    case = ad.random_graph(seed)
    with case["graph"].as_default():
        order = ad.backward_ops(case["ys"], case["xs"], case["stops"])
        assert set(order) == ad.between_brute(case["ys"], case["xs"], case["stops"])
        assert ad.is_reverse_topological(order) is None
        with aics.name_scope("gradients"):
            got = ad.gradients(case["ys"], case["xs"], case["grad_ys"], case["stops"])
        library = aics.gradients(case["ys"], case["xs"], grad_ys=case["grad_ys"], stop_gradients=case["stops"])
        reach = ad.connected(case["ys"], case["xs"], case["stopped"])
        with aics.Session() as sess:
            numeric = ad.numerical_gradients(sess, case["ys"], case["xs"], case["feed"], case["grad_ys_values"],
                                             case["stopped"])
            for x, g, lib, r, n in zip(case["xs"], got, library, reach, numeric):
                assert (g is None) == (lib is None) == (not r), (case["describe"], x.name)
                if g is not None:
                    np.testing.assert_allclose(sess.run(g, case["feed"]), n, rtol=1e-6, atol=1e-7)


def test_the_random_graphs_have_what_the_lab_grades():
    cases = [ad.random_graph(seed) for seed in range(8)]
    assert any(c["stops"] for c in cases) and any(c["grad_ys"] is not None for c in cases)
    assert any(len(c["ys"]) > 1 for c in cases)
    assert all(not ad.connected(c["ys"], c["xs"], c["stopped"])[3] for c in cases)    # unused_x
    shared = [t for c in cases for op in c["graph"].get_operations() for t in op.outputs if len(t.consumers()) > 1]
    assert shared, "no tensor with several consumers: no fan-out to accumulate"


def test_a_wrong_gradient_fails_the_directional_check():
    recipes = ad.gradient_recipes()
    assert len(recipes) >= 90 and "Print" not in recipes
    case = ad.registry_case("Sin", recipes["Sin"])
    with case["graph"].as_default():
        wrong = [aics.cos(x) * 1.01 * aics.cos(x) for x in case["xs"]]         # not d loss/dx
        right = aics.gradients(case["loss"], case["xs"])
        with aics.Session() as sess:
            rng = np.random.default_rng(0)
            err_right, scale = ad.directional_check(sess, case["loss"], case["xs"], right, case["feed"], 1e-6, rng)
            err_wrong, _ = ad.directional_check(sess, case["loss"], case["xs"], wrong, case["feed"], 1e-6, rng)
    assert err_right <= case["tolerance"] * scale < err_wrong


def test_the_reference_gradients_train_a_tf1_program_as_the_library_does():
    library, reference = engine.compare_engines("tf1_linear_regression_one_sample", gradients=ad.gradients)
    for key in library:
        assert np.isclose(library[key], reference[key], rtol=1e-6), key


@pytest.mark.parametrize("a, b", [([2, 3], [3]), ([None, 3], [3]), ([None, 3], [None, 1]), ([None], [5]),
                                  ([None], [None]), ([2, None, 1], [None, 4]), (None, [2]), ([], [None, 2])])
def test_reference_shape_function_is_the_broadcasting_rule(a, b):
    with aics.experimental.registration_scope():
        aics.op_def_registry.unregister(pd.OP)
        pd.define_power_difference()
        with aics.Graph().as_default():
            z = aics.raw_ops.PowerDifference(x=aics.placeholder(aics.float32, a), y=aics.placeholder(aics.float32, b))
    assert (None if z.shape.rank is None else z.shape.as_list()) == pd.broadcast_brute(a, b)


def test_reference_power_difference_in_three_modes_and_nothing_left_behind():
    before = aics.introspect.list_ops()
    xv, yv = np.random.default_rng(0).uniform(-2, 2, (2, 3)), np.random.default_rng(1).uniform(-2, 2, 3)
    with aics.experimental.registration_scope():
        pd.define_power_difference()
        aics.register_kernel(pd.OP, type_constraint={"T": [aics.float32, aics.float64]})(pd.power_difference_kernel)
        aics.RegisterGradient(pd.OP)(pd.power_difference_grad)
        f = lambda a, b: aics.raw_ops.PowerDifference(x=a, y=b, pow=3)     # noqa: E731
        theoretical, numerical = aics.test.compute_gradient(f, [xv, yv])
        assert aics.test.max_error(theoretical, numerical) < 1e-6
        with aics.Graph().as_default():
            px, py = aics.placeholder(aics.float64, [None, 3]), aics.placeholder(aics.float64, [3])
            gx, gy = aics.gradients(f(px, py), [px, py])
            with aics.Session() as sess:
                gxv, gyv = sess.run([gx, gy], {px: xv, py: yv})
        np.testing.assert_allclose(gyv, -(3 * (xv - yv) ** 2).sum(0), rtol=1e-12)
        np.testing.assert_allclose(aics.function(f)(aics.constant(xv), aics.constant(yv)).numpy(), (xv - yv) ** 3)
    assert aics.introspect.list_ops() == before and not aics.kernel_registry.kernels_for(pd.OP)
