"""tf.function calls as TF programs write them: Python values against an input_signature,
ConcreteFunctions called by keyword, prints inside AutoGraph loops, tf.Module subclasses that
never call ``super().__init__()``. Expected outputs are TensorFlow 2.21's for the same code."""
import numpy as np
import pytest

import aicslib as tf


def test_input_signature_converts_python_values():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])
    def f(x, n):
        return x * tf.cast(n, tf.float32)
    assert f([1.0, 2.0], 3).numpy().tolist() == [3.0, 6.0]  # TF: [3. 6.]
    assert f(np.array([1, 2], np.float32), np.int32(2)).numpy().tolist() == [2.0, 4.0]
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises((TypeError, ValueError)):
        f([[1.0]], 3)  # shape [1, 1] is not compatible with [None]


def test_concrete_function_by_keyword():
    @tf.function
    def g(x, y=1.0):
        return x + 2.0 * y
    cf = g.get_concrete_function(tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32))
    one, two = tf.constant(1.0), tf.constant(2.0)
    assert cf(x=one, y=two).numpy() == 5.0 and cf(one, y=two).numpy() == 5.0  # TF: 5.0
    assert cf(y=two, x=one).numpy() == 5.0 and cf(one, two).numpy() == 5.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        cf(x=one, z=two)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        cf(one, x=two)
    with pytest.raises(TypeError, match="missing required arguments: y"):
        cf(x=one)


def test_prints_inside_autograph_loops_run_every_iteration(capsys):
    @tf.function
    def count(n):
        s = 0
        for i in tf.range(n):
            tf.print("step", i)
            s += i
        return s

    @tf.function
    def countdown(n):
        while n > 0:
            tf.print("n =", n)
            n -= 1
        return n
    assert count(tf.constant(3)).numpy() == 3
    assert countdown(tf.constant(2)).numpy() == 0
    # TF 2.21 printed: step 0, step 1, step 2, then n = 2, n = 1
    assert capsys.readouterr().out.split("\n")[:5] == ["step 0", "step 1", "step 2", "n = 2", "n = 1"]
    assert countdown(tf.constant(0)).numpy() == 0  # a loop that never runs prints nothing
    assert capsys.readouterr().out == ""


def test_print_only_loop_is_run_for_its_effect(capsys):
    @tf.function
    def report(xs):
        for x in xs:
            tf.print("x:", x)
    report(tf.constant([5, 7]))
    assert capsys.readouterr().out == "x: 5\nx: 7\n"


class Dense(tf.Module):
    def __init__(self, n):  # no super().__init__(): TF's Module still tracks what is set
        self.w = tf.Variable(tf.ones([2, n]), name="w")


class TwoLayers(tf.Module):
    def __init__(self):
        self.l1 = Dense(3)
        self.l2 = Dense(1)
        self.b = tf.Variable(0.0)


def test_module_without_super_init_tracks_variables_as_tf():
    m = TwoLayers()
    # TF 2.21: ['Variable:0', 'w:0', 'w:0'], 3 trainable, submodules [Dense, Dense]
    assert [v.name for v in m.variables] == ["Variable:0", "w:0", "w:0"]
    assert len(m.trainable_variables) == 3
    assert [type(s).__name__ for s in m.submodules] == ["Dense", "Dense"]
    with pytest.raises(AttributeError):
        m.name  # TF: 'TwoLayers' object has no attribute '_name'


def test_variable_updates_inside_a_loop_are_seen_by_the_next_iteration():
    """Each iteration reads what the previous one assigned (TF: 0.700912 after three steps)."""
    v = tf.Variable(1.0)

    @tf.function
    def train(n):
        for _ in tf.range(n):
            with tf.GradientTape() as tape:
                loss = tf.square(v * 3.0 - 1.0)
            v.assign_sub(0.01 * tape.gradient(loss, v))
    train(tf.constant(3))
    w = 1.0
    for _ in range(3):
        w -= 0.01 * 2 * (3 * w - 1) * 3
    assert v.numpy() == pytest.approx(w, rel=1e-6) and w == pytest.approx(0.700912, rel=1e-6)


def test_tf1_while_loop_runs_what_its_results_need():
    import aicslib.compat.v1 as tf1
    with tf1.Graph().as_default():
        total = tf1.Variable(0.0)

        def body(i):
            with tf1.control_dependencies([tf1.assign_add(total, tf1.cast(i, tf1.float32))]):
                return i + 1
        loop = tf1.while_loop(lambda i: i < 5, body, [tf1.constant(0)])
        doubled = tf1.while_loop(lambda i: i < 3, lambda i: (total.assign(total * 2.0), i + 1)[1],
                                 [tf1.constant(0)])
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(loop)
            assert sess.run(total) == 10.0
            sess.run(doubled)
            # TF 2.21 prints 10.0: TF1 runs only what the loop's results depend on, and the
            # assign is not among them (a tf.function runs it: TF2's automatic dependencies)
            assert sess.run(total) == 10.0


def test_tf_print_to_a_file_and_the_tensorflow_logger(tmp_path):
    path = tmp_path / "log.txt"
    tf.print("a", tf.constant([1, 2]), output_stream=f"file://{path}")
    tf.print("b", output_stream=f"file://{path}")
    assert path.read_text() == "a [1 2]\nb\n"  # appended, as TF
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tf.print("x", output_stream="stdout")
    assert tf.get_logger().name == "tensorflow"


def test_module_that_calls_super_init_after_setting_attributes():
    class Later(tf.Module):
        def __init__(self):
            self.v = tf.Variable(1.0)
            super().__init__(name="later")
    m = Later()
    assert m.name == "later" and [v.numpy() for v in m.variables] == [1.0]  # TF: ('later', 1)
