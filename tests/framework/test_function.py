"""aics.function: tracing per input signature, the traced graph, captures, gradients through it."""
import numpy as np
import pytest

import aicslib as aics


class TestTracing:
    def test_traces_once_per_signature(self):
        calls = []

        @aics.function
        def f(x, y):
            calls.append(1)
            return x * y + 1.0

        a = aics.constant([1.0, 2.0])
        b = aics.constant([3.0, 4.0])
        np.testing.assert_array_equal(f(a, b).numpy(), [4.0, 9.0])
        np.testing.assert_array_equal(f(b, a).numpy(), [4.0, 9.0])
        np.testing.assert_array_equal(f(a, a).numpy(), [2.0, 5.0])
        assert len(calls) == 1
        assert f.experimental_get_tracing_count() == 1

    def test_retraces_on_new_shape_or_dtype(self):
        @aics.function
        def f(x):
            return x * 2

        f(aics.constant([1.0]))
        f(aics.constant([2.0]))
        assert f.experimental_get_tracing_count() == 1
        f(aics.constant([1.0, 2.0]))              # new shape
        assert f.experimental_get_tracing_count() == 2
        out = f(aics.constant([1, 2]))            # new dtype
        assert out.dtype == aics.int32
        np.testing.assert_array_equal(out.numpy(), [2, 4])
        assert f.experimental_get_tracing_count() == 3
        f(aics.constant([5.0, 6.0]))              # seen before
        assert f.experimental_get_tracing_count() == 3

    def test_python_arguments_are_part_of_the_signature(self):
        @aics.function
        def f(x, power):
            out = x
            for _ in range(power - 1):
                out = out * x
            return out

        x = aics.constant(2.0)
        assert float(f(x, 3)) == 8.0
        assert float(f(x, 2)) == 4.0
        assert float(f(x, 3)) == 8.0
        assert f.experimental_get_tracing_count() == 2

    def test_numpy_arguments_become_inputs(self):
        @aics.function
        def f(x):
            return aics.reduce_sum(x)

        assert float(f(np.ones(3, np.float32))) == 3.0
        assert float(f(np.full(3, 2.0, np.float32))) == 6.0
        assert f.experimental_get_tracing_count() == 1

    def test_python_print_only_at_trace_time(self, capsys):
        @aics.function
        def f(x):
            print("tracing f")
            return x + 1.0

        for v in (1.0, 2.0, 3.0):
            f(aics.constant(v))
        assert capsys.readouterr().out.count("tracing f") == 1

    def test_graph_print_runs_every_call(self, capsys):
        @aics.function
        def f(x):
            aics.print("value:", x)
            return x + 1.0

        f(aics.constant(1.0))
        f(aics.constant(2.0))
        out = capsys.readouterr().out
        assert "value: 1.0" in out and "value: 2.0" in out

    def test_nested_outputs(self):
        @aics.function
        def f(x):
            return {"double": x * 2.0, "pair": (x, x + 1.0)}

        out = f(aics.constant(3.0))
        assert float(out["double"]) == 6.0
        assert [float(v) for v in out["pair"]] == [3.0, 4.0]

    def test_decorator_with_arguments(self):
        @aics.function()
        def f(x):
            return -x
        assert float(f(aics.constant(2.0))) == -2.0

    def test_inlined_when_building_a_graph(self):
        @aics.function
        def f(x):
            return x * 3.0

        with aics.Graph().as_default():
            p = aics.placeholder(aics.float32, [])
            y = f(p)
            assert isinstance(y, aics.Tensor)
            with aics.Session() as s:
                assert s.run(y, {p: 2.0}) == 6.0


class TestTracedGraph:
    def test_graph_is_inspectable(self):
        @aics.function
        def f(x, y):
            return aics.matmul(x, y) + 1.0

        x = aics.constant(np.ones((2, 3), np.float32))
        y = aics.constant(np.ones((3, 4), np.float32))
        cf = f.get_concrete_function(x, y)
        types = [op.type for op in cf.graph.get_operations()]
        assert types.count("Placeholder") == 2
        assert "MatMul" in types and "AddV2" in types
        assert [t.shape.as_list() for t in cf.inputs] == [[2, 3], [3, 4]]
        assert cf.outputs[0].shape.as_list() == [2, 4]
        assert "MatMul = MatMul(arg0:0, arg1:0)" in cf.pretty_printed_graph()
        assert f.get_concrete_function(x, y) is cf
        assert f.experimental_get_tracing_count() == 1

    def test_concrete_function_is_callable(self):
        @aics.function
        def f(x):
            return x * x

        cf = f.get_concrete_function(aics.constant([1.0, 2.0]))
        np.testing.assert_array_equal(cf(aics.constant([3.0, 4.0])).numpy(), [9.0, 16.0])


class TestCaptures:
    def test_captures_variables_by_reference(self):
        v = aics.Variable(2.0)

        @aics.function
        def f(x):
            return x * v

        assert float(f(aics.constant(3.0))) == 6.0
        v.assign(10.0)
        assert float(f(aics.constant(3.0))) == 30.0  # the current value, no retrace
        assert f.experimental_get_tracing_count() == 1
        cf = f.get_concrete_function(aics.constant(3.0))
        assert len(cf.captured_inputs) == 1

    def test_assign_inside_function_updates_variable(self):
        v = aics.Variable(0.0)

        @aics.function
        def step(x):
            v.assign_add(x)
            return v.read_value()

        step(aics.constant(1.0))
        step(aics.constant(2.5))
        assert float(v.numpy()) == 3.5

    def test_captures_eager_tensors(self):
        c = aics.constant([1.0, 2.0])

        @aics.function
        def f(x):
            return x + c

        np.testing.assert_array_equal(f(aics.constant([1.0, 1.0])).numpy(), [2.0, 3.0])


class TestGradientsThroughFunctions:
    def test_first_order(self):
        @aics.function
        def f(x):
            return aics.sin(x) * x

        x = aics.constant([0.3, 1.2])
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x).numpy()
        xv = x.numpy().astype(np.float64)
        np.testing.assert_allclose(g, np.cos(xv) * xv + np.sin(xv), rtol=1e-6)

    def test_second_order(self):
        @aics.function
        def f(x):
            return x * x * x

        x = aics.constant(1.5)
        with aics.GradientTape() as outer:
            outer.watch(x)
            with aics.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            dy = inner.gradient(y, x)
        d2y = outer.gradient(dy, x)
        assert float(dy) == pytest.approx(3 * 1.5 ** 2)
        assert float(d2y) == pytest.approx(6 * 1.5)

    def test_gradient_wrt_captured_variable(self):
        w = aics.Variable([1.0, -2.0])

        @aics.function
        def loss(x):
            return aics.reduce_sum(aics.square(x * w))

        x = aics.constant([3.0, 0.5])
        with aics.GradientTape() as tape:
            l_ = loss(x)
        g = tape.gradient(l_, w)
        np.testing.assert_allclose(g.numpy(), 2 * (x.numpy() * w.numpy()) * x.numpy())

    def test_matches_eager_gradient_numerically(self):
        @aics.function
        def f(x, y):
            return aics.reduce_sum(aics.tanh(aics.matmul(x, y)))

        rng = np.random.RandomState(0)
        xv, yv = rng.randn(2, 3), rng.randn(3, 2)
        theo, num = aics.test.compute_gradient(f, [xv, yv])
        assert aics.test.max_error(theo, num) < 1e-6


def test_numpy_scalars_are_tensor_arguments_and_python_outputs_become_tensors():
    # TF 2.21 on the same program: np.float32(2.0) and np.float32(4.0) share one trace and give
    # 4.0 and 8.0; a Python float is a Literal (one trace per value) and x * 2 comes back as
    # a float32 tensor.
    traces = []

    @aics.function
    def f(x):
        traces.append(type(x).__name__)
        return x * 2

    assert float(f(np.float32(2.0))) == 4.0 and float(f(np.float32(4.0))) == 8.0
    assert len(traces) == 1 and traces[0] != "float32"   # traced with a placeholder
    y = f(3.0)
    assert aics.is_tensor(y) and y.dtype == aics.float32 and float(y) == 6.0
    assert float(f(5.0)) == 10.0 and len(traces) == 3


def test_pretty_printed_concrete_signatures_follow_tf_layout():
    # TF 2.21 prints, for f(np.float32(2.0)) then f(2.0) (dtype shown as tf.float32 there):
    #   Input Parameters:
    #     x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.float32, name=None)
    #   Output Type:
    #     TensorSpec(shape=(), dtype=tf.float32, name=None)
    #   Captures:
    #     None
    #   <blank line>
    #   Input Parameters:
    #     x (POSITIONAL_OR_KEYWORD): Literal[2.0]
    #   ...
    @aics.function
    def f(x, scale=2):
        return x * scale

    f(np.float32(2.0))
    f(2.0)
    expected = [
        "Input Parameters:",
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=aics.float32, name=None)",
        "Output Type:",
        "  TensorSpec(shape=(), dtype=aics.float32, name=None)",
        "Captures:",
        "  None",
        "",
        "Input Parameters:",
        "  x (POSITIONAL_OR_KEYWORD): Literal[2.0]",
        "Output Type:",
        "  TensorSpec(shape=(), dtype=aics.float32, name=None)",
        "Captures:",
        "  None",
    ]
    assert f.pretty_printed_concrete_signatures().split("\n") == expected
    v = aics.Variable([1.0, 2.0])

    @aics.function
    def g(a, b):
        return {"sum": a + v, "b": b}

    g(aics.constant([3.0, 4.0]), b=1)
    text = g.pretty_printed_concrete_signatures()
    assert "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=aics.float32, name=None)" in text
    assert "  b (POSITIONAL_OR_KEYWORD): Literal[1]" in text
    captures = text.split("Captures:\n")[1].split("\n")
    # TF shows a captured variable as its handle: TensorSpec(shape=(), dtype=tf.resource, name=None)
    assert len(captures) == 1 and captures[0].endswith(": TensorSpec(shape=(), dtype=aics.resource, name=None)")
