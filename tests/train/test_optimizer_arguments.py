"""Optimizer.minimize / compute_gradients: gate_gradients, aggregation_method,
colocate_gradients_with_ops do what TensorFlow's do here, or say why not.

Reference: one gradient-descent step on loss = sum(w1 * w2 * x) is, by hand,
w1 - lr * w2 * x and w2 - lr * w1 * x with the *old* values: each gradient reads
the other variable, which is what gating protects in TensorFlow.
"""
import numpy as np
import pytest

import aicslib as aics
from aicslib.train.optimizer import AggregationMethod

Opt = aics.train.Optimizer
LR = 0.1
W1 = np.array([1.0, -2.0, 0.5])
W2 = np.array([3.0, 0.25, -1.0])
XV = np.array([0.5, 2.0, -1.5])
REF_W1 = W1 - LR * W2 * XV
REF_W2 = W2 - LR * W1 * XV


def graph_step(**kwargs):
    """New w1, w2 after one minimize step built with ``kwargs``."""
    with aics.Graph().as_default():
        w1 = aics.Variable(W1, name="w1")
        w2 = aics.Variable(W2, name="w2")
        loss = aics.reduce_sum(w1 * w2 * aics.constant(XV))
        train = aics.train.GradientDescentOptimizer(LR).minimize(loss, **kwargs)
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            sess.run(train)
            return sess.run([w1, w2])


def eager_step(**kwargs):
    w1 = aics.Variable(W1, name="w1")
    w2 = aics.Variable(W2, name="w2")
    aics.train.GradientDescentOptimizer(LR).minimize(
        lambda: aics.reduce_sum(w1 * w2 * aics.constant(XV)), var_list=[w1, w2], **kwargs)
    return w1.numpy(), w2.numpy()


@pytest.mark.parametrize("step", [graph_step, eager_step])
@pytest.mark.parametrize("gate", [Opt.GATE_NONE, Opt.GATE_OP, Opt.GATE_GRAPH])
def test_every_gate_gradients_value_gives_the_gated_result(step, gate):
    w1, w2 = step(gate_gradients=gate)
    np.testing.assert_allclose(w1, REF_W1, rtol=1e-12)
    np.testing.assert_allclose(w2, REF_W2, rtol=1e-12)


@pytest.mark.parametrize("step", [graph_step, eager_step])
@pytest.mark.parametrize("bad", [3, -1, "GATE_OP", None])
def test_invalid_gate_gradients_is_rejected_as_tf_does(step, bad):
    with pytest.raises(ValueError, match=r"gate_gradients must be one of: Optimizer.GATE_NONE, "
                                         r"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not "):
        step(gate_gradients=bad)


def test_aggregation_methods_all_sum_the_contributions():
    # x reaches the loss along three paths, so its gradient sums three terms:
    # d/dx (x*x + 3x) = 2x + 3.
    x0 = np.array([0.5, -1.0])
    methods = [None, AggregationMethod.ADD_N, AggregationMethod.DEFAULT,
               AggregationMethod.EXPERIMENTAL_TREE, AggregationMethod.EXPERIMENTAL_ACCUMULATE_N]
    for method in methods:
        with aics.Graph().as_default():
            x = aics.Variable(x0, name="x")
            loss = aics.reduce_sum(x * x + 3.0 * x)
            ((g, _),) = aics.train.GradientDescentOptimizer(LR).compute_gradients(
                loss, var_list=[x], aggregation_method=method)
            with aics.Session() as sess:
                sess.run(aics.global_variables_initializer())
                np.testing.assert_allclose(sess.run(g), 2 * x0 + 3, rtol=1e-12)


@pytest.mark.parametrize("step", [graph_step, eager_step])
@pytest.mark.parametrize("bad", [7, -1, "tree"])
def test_invalid_aggregation_method_is_rejected_as_tf_does(step, bad):
    with pytest.raises(ValueError, match=f"Invalid aggregation_method specified {bad}."):
        step(aggregation_method=bad)


def test_colocation_is_accepted_where_it_changes_nothing():
    for step in (graph_step, eager_step):
        w1, w2 = step(colocate_gradients_with_ops=True)
        np.testing.assert_allclose(w1, REF_W1, rtol=1e-12)
        np.testing.assert_allclose(w2, REF_W2, rtol=1e-12)


def test_colocation_with_placed_ops_is_refused_naming_the_argument():
    with aics.Graph().as_default():
        with aics.device("/mlu:0"):
            w = aics.Variable(np.ones(2, np.float32), name="w")
            loss = aics.reduce_sum(w * w)
        opt = aics.train.GradientDescentOptimizer(LR)
        with pytest.raises(NotImplementedError, match="colocate_gradients_with_ops=True"):
            opt.minimize(loss, colocate_gradients_with_ops=True)
        opt.minimize(loss)   # the default still works


def test_colocation_inside_a_device_scope_is_refused():
    # TF would put the gradient ops next to the (unplaced) forward ops; here the scope wins.
    with aics.Graph().as_default():
        w = aics.Variable(np.ones(2, np.float32), name="w")
        loss = aics.reduce_sum(w * w)
        with aics.device("/mlu:0"):
            with pytest.raises(NotImplementedError, match="colocate_gradients_with_ops=True"):
                aics.train.GradientDescentOptimizer(LR).compute_gradients(
                    loss, colocate_gradients_with_ops=True)
