"""Buffer forwarding (TF's ``forward_input_or_allocate_output``): a kernel registered with
``forward_inputs`` may write its output into an input's buffer, and an executor hands it one
only where nobody can see the difference: a value a step of the plan made, read by no later
step, held by nothing else (not fetched, not fed, not a constant, a variable or a view).

Each test runs a kernel that writes into ``out`` whenever it is given one, and checks the
results against NumPy computed on copies, in every execution mode.
"""
import numpy as np
import pytest

import aicslib as aics
from aicslib.framework.execute import apply_op
from aicslib.framework.kernel_registry import KernelDef
from aicslib.kernels import cwise_ops_fused


@pytest.fixture
def negate_in_place(op_name):
    """``Negate<N>(x: float) -> y``, a kernel that forwards input 0; returns ``(op, given)``:
    ``given`` lists, per call, whether the kernel received a buffer (and that it was ``x``)."""
    n = op_name("Negate")
    given = []
    aics.register_op(n).input("x: float").output("y: float")

    def kernel(x, out=None):
        assert out is None or out is x
        given.append(out is not None)
        return np.negative(x, out=out)
    aics.register_kernel(n, forward_inputs=(0,))(kernel)
    return (lambda x, name=None: apply_op(n, [x], name=name)), given


def _session_run(build, feeds, fetches):
    with aics.Graph().as_default():
        phs = [aics.placeholder(aics.float32, np.shape(a)) for a in feeds]
        out = build(*phs)
        with aics.Session() as sess:
            return sess.run(out if fetches is None else fetches(out), dict(zip(phs, feeds)))


class TestWhereTheExecutorForwards:
    def test_an_intermediate_read_once_is_forwarded(self, negate_in_place):
        negate, given = negate_in_place
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        got = _session_run(lambda p: negate(aics.square(p)), [x], None)
        np.testing.assert_array_equal(got, -(x * x))
        assert given == [True]

    def test_a_fed_value_is_not_written(self, negate_in_place):
        negate, given = negate_in_place
        x = np.arange(4, dtype=np.float32)
        keep = x.copy()
        got = _session_run(lambda p: negate(p), [x], None)
        np.testing.assert_array_equal(got, -keep)
        np.testing.assert_array_equal(x, keep)
        assert given == [False]

    def test_identity_of_a_feed_is_still_the_callers_array(self, negate_in_place):
        negate, given = negate_in_place
        x = np.arange(4, dtype=np.float32)
        keep = x.copy()
        got = _session_run(lambda p: negate(aics.identity(p)), [x], None)
        np.testing.assert_array_equal(got, -keep)
        np.testing.assert_array_equal(x, keep)
        assert given == [False]

    def test_a_fetched_intermediate_keeps_its_value(self, negate_in_place):
        negate, given = negate_in_place
        x = np.arange(1, 5, dtype=np.float32)
        sq, neg = _session_run(lambda p: (lambda s: (s, negate(s)))(aics.square(p)), [x], None)
        np.testing.assert_array_equal(sq, x * x)
        np.testing.assert_array_equal(neg, -(x * x))
        assert given == [False]

    def test_a_value_read_later_is_not_forwarded(self, negate_in_place):
        negate, given = negate_in_place
        x = np.arange(1, 5, dtype=np.float32)

        def build(p):
            s = aics.square(p)
            n = negate(s)
            with aics.control_dependencies([n]):   # the add runs after the negation
                return aics.add(s, n * 2.0)
        got = _session_run(build, [x], None)
        np.testing.assert_array_equal(got, x * x - 2 * x * x)
        assert given == [False]

    def test_a_view_of_a_live_value_is_not_forwarded(self, negate_in_place):
        negate, given = negate_in_place
        x = np.arange(6, dtype=np.float32)

        def build(p):
            s = aics.square(p)
            r = aics.reshape(s, [2, 3])      # a view of s's buffer, made before the negation
            return r, negate(s)
        r, neg = _session_run(build, [x], None)
        np.testing.assert_array_equal(neg, -(x * x))
        np.testing.assert_array_equal(r, (x * x).reshape(2, 3))
        assert given == [False]

    def test_constants_and_variables_are_not_forwarded(self, negate_in_place):
        negate, given = negate_in_place
        with aics.Graph().as_default():
            c = aics.constant([1.0, 2.0])
            v = aics.Variable([3.0, 4.0])
            outs = [negate(c), negate(v.read_value())]
            with aics.Session() as sess:
                sess.run(v.initializer)
                for _ in range(2):    # a second run sees the same constant and variable
                    np.testing.assert_array_equal(sess.run(outs), [[-1, -2], [-3, -4]])
                np.testing.assert_array_equal(sess.run(v.read_value()), [3, 4])
        assert given == [False] * 4

    def test_a_traced_run_forwards_the_same(self, negate_in_place):
        negate, given = negate_in_place
        x = np.arange(3, dtype=np.float32)
        with aics.Graph().as_default():
            p = aics.placeholder(aics.float32, [3])
            y = negate(aics.square(p))
            with aics.Session() as sess:
                meta = aics.RunMetadata()
                got = sess.run(y, {p: x}, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                               run_metadata=meta)
        np.testing.assert_array_equal(got, -(x * x))
        assert given == [True]

    def test_each_mode_gives_numpys_values(self, negate_in_place, run_op):
        negate, given = negate_in_place
        x = np.arange(1, 4, dtype=np.float32)
        got = run_op(lambda p: negate(aics.square(p)) + aics.square(p), x)
        np.testing.assert_array_equal(got, np.zeros(3, np.float32))
        if run_op.mode == "eager":
            assert given == [False]   # the EagerTensor holds the square


class TestForwardingKernels:
    def test_mlp_layer_and_its_gradient_match_numpy(self, run_op):
        # relu(x @ w + b) is fused and written into the product; ReluGrad into the incoming gradient
        rng = np.random.default_rng(0)
        x = rng.standard_normal((5, 4)).astype(np.float32)
        w = rng.standard_normal((4, 3)).astype(np.float32)
        b = rng.standard_normal(3).astype(np.float32)

        def layer(x, w, b):
            with aics.GradientTape() as tape:
                tape.watch(w)
                y = aics.nn.relu(aics.matmul(x, w) + b)
                loss = aics.reduce_sum(y * y)
            return y, tape.gradient(loss, w)
        y, dw = run_op(layer, x, w, b)
        h = np.maximum(x @ w + b, 0)
        np.testing.assert_allclose(y, h, rtol=1e-6)
        np.testing.assert_allclose(dw, x.T @ (2 * h * (h > 0)), rtol=1e-5)

    def test_relu_grad_refuses_different_shapes(self, run_op):
        with pytest.raises(aics.errors.InvalidArgumentError, match="g and a must be the same size"):
            run_op(lambda g, a: aics.raw_ops.ReluGrad(gradients=g, features=a),
                   np.ones((2, 3), np.float32), np.ones(3, np.float32))

    @pytest.mark.parametrize("ops", [
        ["AddV2 i0 i1", "Relu t0"],
        ["Mul i0 i1", "AddV2 t0 i0"],                 # the forwarded input is read again later
        ["Mul i1 i1", "AddV2 i0 t0", "Tanh t1"],       # the first instruction is bias-sized
        ["Sub i0 i1", "Mul t0 t0", "AddV2 t1 t0"],     # an intermediate read twice
    ])
    @pytest.mark.parametrize("donor", [0, 1])
    def test_fused_programs_give_the_unforwarded_bits(self, ops, donor):
        rng = np.random.default_rng(1)
        full = rng.standard_normal((4, 5)).astype(np.float32)
        bias = rng.standard_normal(5).astype(np.float32)
        args = [full, bias] if donor == 0 else [bias, full]
        expected = cwise_ops_fused._fused_elementwise(list(args), ops, aics.float32)
        given = [a.copy() for a in args]
        got = cwise_ops_fused._fused_elementwise(given, ops, aics.float32, out=given[donor])
        np.testing.assert_array_equal(got, expected)

    def test_a_kernel_that_forwards_must_take_out(self):
        with pytest.raises(TypeError, match="takes no 'out' parameter"):
            KernelDef("X", "CPU", None, lambda x: x, ("f", 1), forward_inputs=(0,))
