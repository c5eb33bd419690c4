"""AutoGraph: Python if/while/for over tensors converted to cond/while_loop inside aics.function;
retracing and input_signature as TF's tf.function."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib import autograph


def collatz_steps(n):
    steps = 0
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps = steps + 1
    return steps


def sum_of_squares(x):
    total = aics.zeros([], dtype=x.dtype)
    for row in x:
        total = total + aics.reduce_sum(row * row)
    return total


def relu_sum_range(n):
    acc = 0.0
    for i in range(n):
        v = aics.cast(i, aics.float32) - 2.0
        if v > 0.0:
            acc = acc + v
    return acc


def python_control_flow(x, flag, k):
    if flag:           # a Python bool: stays a Python if
        x = x * 2.0
    for _ in range(k):  # a Python int: unrolled at trace time
        x = x + 1.0
    return x


def test_to_code_shows_converted_statements():
    code = autograph.to_code(collatz_steps)
    assert "ag__.while_stmt(" in code and "ag__.if_stmt(" in code
    assert "def loop_body" in code and "while n > 1" not in code
    compile(code, "<to_code>", "exec")  # it is valid Python


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 60))
def test_while_and_if_on_tensors_match_python(n):
    f = aics.function(collatz_steps)
    assert int(f(aics.constant(n)).numpy()) == collatz_steps(n)
    graph = f.get_concrete_function(aics.constant(n)).graph
    types = {op.type for op in graph.get_operations()}
    assert {"Enter", "Merge", "Switch", "NextIteration", "Exit", "LoopCond"} <= types


@settings(max_examples=8, deadline=None)
@given(rows=st.integers(0, 5), cols=st.integers(1, 4))
def test_for_over_tensor_rows(rows, cols):
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) / 7.0
    f = aics.function(sum_of_squares, input_signature=[aics.TensorSpec([None, cols], aics.float32)])
    np.testing.assert_allclose(f(x).numpy(), np.sum(x * x), rtol=1e-5)


def test_for_over_tensor_range_and_nested_if():
    f = aics.function(relu_sum_range)
    for n in (0, 1, 3, 7):
        assert float(f(aics.constant(n)).numpy()) == pytest.approx(sum(max(i - 2.0, 0.0) for i in range(n)))


def test_python_conditions_stay_python():
    f = aics.function(python_control_flow)
    assert float(f(aics.constant(1.0), True, 3).numpy()) == 5.0
    assert float(f(aics.constant(1.0), False, 2).numpy()) == 3.0
    graph = f.get_concrete_function(aics.constant(1.0), True, 3).graph
    assert not any(op.type in ("Switch", "Merge") for op in graph.get_operations())


def test_retracing_rules():
    calls = []

    @aics.function
    def f(x, scale):
        calls.append(1)
        return x * scale
    f(aics.constant([1.0, 2.0]), 2.0)
    f(aics.constant([3.0, 4.0]), 2.0)        # same dtype and shape, same Python value: no trace
    assert f.experimental_get_tracing_count() == 1
    f(aics.constant([3.0, 4.0]), 3.0)        # a new Python value: retrace
    f(aics.constant([1.0, 2.0, 3.0]), 3.0)   # a new shape: retrace
    f(aics.constant([1, 2]), 3)              # a new dtype: retrace
    assert f.experimental_get_tracing_count() == 4 == len(calls)


def test_input_signature_traces_once_and_rejects_mismatch():
    @aics.function(input_signature=[aics.TensorSpec(shape=[None], dtype=aics.float32)])
    def double(x):
        return x * 2.0
    np.testing.assert_allclose(double(np.array([1.0, 2.0], np.float32)).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(double(aics.constant([1.0, 2.0, 3.0])).numpy(), [2.0, 4.0, 6.0])
    assert double.experimental_get_tracing_count() == 1
    with pytest.raises(ValueError, match="incompatible with input_signature"):
        double(aics.constant([[1.0]]))
    with pytest.raises(ValueError, match="incompatible with input_signature"):
        double(aics.constant([1, 2]))
    cf = double.get_concrete_function()
    assert cf.inputs[0].shape.as_list() == [None]
    assert double.experimental_get_concrete_function() is cf


def test_get_concrete_function_with_tensor_spec():
    f = aics.function(collatz_steps)
    cf = f.get_concrete_function(aics.TensorSpec([], aics.int32))
    assert int(cf(aics.constant(6)).numpy()) == collatz_steps(6)


def test_undefined_in_one_branch_is_an_error_only_when_used_later():
    def uses_later(x):
        if x > 0:
            y = x
        return y

    with pytest.raises(ValueError, match="'y' must be defined"):
        aics.function(uses_later)(aics.constant(1.0))

    def temporary(x):
        if x > 0:
            t = x * 2.0
            x = t + 1.0
        return x
    f = aics.function(temporary)
    assert float(f(aics.constant(1.0)).numpy()) == 3.0 and float(f(aics.constant(-1.0)).numpy()) == -1.0


def test_gradient_through_converted_loop():
    @aics.function
    def power(x, n):
        y = aics.ones_like(x)
        i = aics.constant(0)
        while i < n:
            y = y * x
            i = i + 1
        return y
    x = aics.constant(1.5)
    with aics.GradientTape() as tape:
        tape.watch(x)
        y = power(x, aics.constant(4))
    assert float(y.numpy()) == pytest.approx(1.5 ** 4)
    assert float(tape.gradient(y, x).numpy()) == pytest.approx(4 * 1.5 ** 3, rel=1e-5)


def early_return(x, training):
    if training:
        return x * 2.0
    y = x + 1.0
    if y > 3.0:
        y = y * 10.0
        return y
    return -y


@settings(max_examples=10, deadline=None)
@given(v=st.floats(-10, 10), training=st.booleans())
def test_early_returns_become_cond(v, training):
    f = aics.function(early_return)
    assert float(f(aics.constant(v), training).numpy()) == pytest.approx(early_return(np.float32(v), training),
                                                                          rel=1e-6)
    assert "ag__.if_return(" in autograph.to_code(early_return)


# ---------------------------------------------------------------------------
# break / continue / return inside loops (TF's break_statements / continue_statements /
# return_statements converters): the converted function must compute what Python computes.

def break_and_continue_while(n, k):
    s = 0
    i = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if s > k:
            break
        s += i
    return s


def break_and_continue_range(n, k):
    s = 0
    for i in range(n):
        if i % 2 == 0:
            continue
        s += i
        if s > k:
            break
    return s


def nested_loops_inner_break(n, k):
    total = 0
    i = 0
    while i < n:
        i += 1
        j = 0
        while True:
            j += 1
            if j > i:
                break
            if (i + j) % 2 == 0:
                continue
            total += i * j
        if total > k:
            break
    return total


def return_in_python_loop(n, k):
    for step in range(4):  # a Python loop: its return is a Python return
        if step == 2:
            return n * step + k
    return n


def return_first_in_while(n, k):
    i = n
    while i > 0:
        i -= 1
        return i + k  # returns in the first iteration (a tensor loop: staged, as TF)
    return -k


_JUMPS = [break_and_continue_while, break_and_continue_range, nested_loops_inner_break, return_in_python_loop,
          return_first_in_while]


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 12), k=st.integers(-3, 40), which=st.sampled_from(range(len(_JUMPS))))
def test_break_continue_return_match_python(n, k, which):
    fn = _JUMPS[which]
    f = aics.function(fn)
    assert int(f(aics.constant(n), aics.constant(k)).numpy()) == fn(n, k)


@settings(max_examples=10, deadline=None)
@given(values=st.lists(st.integers(-5, 5), min_size=0, max_size=7))
def test_break_in_for_over_tensor_rows(values):
    def first_negative_index(x):  # TF gives 2 for [3, 1, -4, 2, -5]
        idx = -1
        i = 0
        for v in x:
            if v < 0:
                idx = i
                break
            i += 1
        return idx
    def sum_of_non_negatives_until_ten(x):  # TF gives 4 for [1, -2, 3]
        n = aics.constant(0)
        for v in x:
            if v < 0:
                continue
            if v > 10:
                break
            n += v
        return n
    f = aics.function(first_negative_index, input_signature=[aics.TensorSpec([None], aics.int32)])
    assert int(f(np.array(values, np.int32)).numpy()) == first_negative_index(values)
    g = aics.function(sum_of_non_negatives_until_ten, input_signature=[aics.TensorSpec([None], aics.int32)])
    tripled = [3 * v for v in values]
    assert int(g(np.array(tripled, np.int32)).numpy()) == int(sum_of_non_negatives_until_ten(tripled))
    assert int(g(np.array([1, -2, 3], np.int32)).numpy()) == 4
    graph = f.get_concrete_function().graph
    assert {"Enter", "Exit", "LoopCond"} <= {op.type for op in graph.get_operations()}


def test_documented_tf_results_for_loop_returns():
    def search(x):
        while x > 0:
            if x < 3:
                return x
            x = x - 2
        return x
    # TF 2.21: NotImplementedError (a return that only some iterations of a tensor loop take).
    with pytest.raises(NotImplementedError, match="a return statement cannot be placed inside this "
                                                  "TensorFlow loop"):
        aics.function(search)(aics.constant(7))
    assert search(7) == 1  # Python itself, for contrast

    def tensor_if_in_python_loop(x):
        for i in range(3):
            if x > i:
                return x
        return -x
    with pytest.raises(ValueError, match="the else branch must also have a return statement"):
        aics.function(tensor_if_in_python_loop)(aics.constant(1))

    def first_assigned_in_loop(x):  # TF gives 6 for x = 4
        i = 0
        while i < x:
            y = i * 2
            i += 1
        return y
    assert int(aics.function(first_assigned_in_loop)(aics.constant(4)).numpy()) == 6


def test_to_code_of_loop_jumps_is_readable_python():
    code = autograph.to_code(break_and_continue_while)
    assert "break_ = False" in code and "continue_ = False" in code
    assert "ag__.not_(break_)" in code and "break" not in code.replace("break_", "")
    assert "continue" not in code.replace("continue_", "")
    compile(code, "<to_code>", "exec")
    code = autograph.to_code(break_and_continue_range)
    assert "extra_test=" in code
    code = autograph.to_code(return_first_in_while)
    assert "do_return = False" in code and "retval_ = ag__.UndefinedReturnValue()" in code
    assert code.rstrip().endswith("return ag__.ret(retval_)")
    compile(code, "<to_code>", "exec")


def test_python_loop_jumps_keep_python_semantics_outside_functions():
    # Converted but called eagerly (no graph): every statement stays Python.
    for fn in _JUMPS:
        converted = autograph.to_graph(fn)
        for n, k in ((0, 0), (5, 3), (9, 20)):
            assert converted(n, k) == fn(n, k)


# ---------------------------------------------------------------------------
# A GradientTape inside aics.function records only the ops built inside its block (and outside
# stop_recording), as TF's tape in a FuncGraph; TF 2.21 gives the values in the comments.

def _outside_then_inside(x):
    y = x * x                      # not recorded: the tape sees y as a constant
    with aics.GradientTape() as t:
        t.watch(x)
        z = y * x
    return t.gradient(z, x)        # TF: x**2 (9.0 at x = 3)


def _stop_recording(x):
    with aics.GradientTape() as t:
        t.watch(x)
        y = x * x
        with t.stop_recording():
            w = y * 2.0
        z = w * x + y
    return t.gradient(z, x)        # TF: w + 2x = 2x**2 + 2x (24.0 at x = 3)


_V = aics.Variable(2.0)


def _variable_read_before_the_tape(x):
    r = _V * 1.0
    with aics.GradientTape() as t:
        z = r * x + _V * x * x
    return t.gradient(z, _V)       # TF: x**2 (9.0 at x = 3): the read before the block is not recorded


def _second_order(x):
    with aics.GradientTape() as t2:
        t2.watch(x)
        with aics.GradientTape() as t1:
            t1.watch(x)
            y = x * x * x
        d = t1.gradient(y, x)
    return t2.gradient(d, x)       # 6x (12.0 at x = 2)


def test_tape_in_function_records_only_its_block_tf_values():
    assert float(aics.function(_outside_then_inside)(aics.constant(3.0)).numpy()) == 9.0
    assert float(aics.function(_stop_recording)(aics.constant(3.0)).numpy()) == 24.0
    assert float(aics.function(_variable_read_before_the_tape)(aics.constant(3.0)).numpy()) == 9.0
    assert float(aics.function(_second_order)(aics.constant(2.0)).numpy()) == 12.0


@settings(max_examples=10, deadline=None)
@given(v=st.floats(-4, 4))
def test_tape_in_function_agrees_with_the_eager_tape(v):
    # The eager tape records what runs inside its block: the traced function must agree with it.
    for fn, expected in ((_outside_then_inside, v * v), (_stop_recording, 2 * v * v + 2 * v),
                         (_second_order, 6 * v)):
        eager = float(fn(aics.constant(v)).numpy())
        traced = float(aics.function(fn)(aics.constant(v)).numpy())
        assert eager == pytest.approx(expected, rel=1e-5, abs=1e-5)
        assert traced == pytest.approx(expected, rel=1e-5, abs=1e-5)


def test_gradient_through_converted_nested_loops_with_break():
    # Nested tensor loops (and a break) in an aics.function, differentiated by an eager tape:
    # the function's backward runs the inner loop's backward loop inside the outer one's.
    def nested(x, n):
        s = x
        i = 0
        while i < n:
            j = 0
            while j < i:
                s = s * aics.cos(s) + x
                j += 1
                if s > 5.0:
                    break
            i += 1
        return s

    def reference(x, n):
        s = x
        for i in range(n):
            for _ in range(i):
                s = s * np.cos(s) + x
                if s > 5.0:
                    break
        return s
    f = aics.function(nested)
    for xv, nv in ((0.3, 3), (0.8, 4), (0.5, 0)):
        x = aics.constant(xv, aics.float64)
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = f(x, aics.constant(nv))
        assert float(y.numpy()) == pytest.approx(reference(xv, nv), rel=1e-12)
        numeric = (reference(xv + 1e-6, nv) - reference(xv - 1e-6, nv)) / 2e-6
        assert float(tape.gradient(y, x).numpy()) == pytest.approx(numeric, rel=1e-5, abs=1e-7)
