"""Training inside ``aics.function``: TF2's canonical ``train_step``.

A GradientTape opened inside a traced function builds symbolic gradient ops,
optimizers create their slots once under ``init_scope``, and the assignments in
the traced graph update the eager variables when the function is called. Each
result is checked against the same step run eagerly and against NumPy.
"""
import gc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics

RNG = np.random.default_rng(7)
X = RNG.normal(size=(12, 3)).astype(np.float32)
Y = RNG.normal(size=(12, 1)).astype(np.float32)
W0 = RNG.normal(size=(3, 1)).astype(np.float32)
STEPS = 4


# ---------------------------------------------------------------- NumPy references
def _numpy_grads(w, b):
    r = X.astype(np.float64) @ w + b - Y
    n = r.size
    return 2.0 / n * X.T.astype(np.float64) @ r, np.array([2.0 / n * r.sum()]), float(np.mean(r ** 2))


def _numpy_train(update):
    """Runs STEPS steps of ``update(state, param index, param, grad, t)``; (w, b, losses)."""
    params = [W0.astype(np.float64), np.zeros(1)]
    states = [{}, {}]
    losses = []
    for t in range(1, STEPS + 1):
        gw, gb, loss = _numpy_grads(*params)
        losses.append(loss)
        params = [update(states[i], p, g, t) for i, (p, g) in enumerate(zip(params, (gw, gb)))]
    return params[0], params[1], losses


def _sgd(lr):
    return lambda s, p, g, t: p - lr * g


def _momentum(lr, mu):
    def update(s, p, g, t):
        s["a"] = mu * s.get("a", 0.0) + g
        return p - lr * s["a"]
    return update


def _adam(lr, b1, b2, eps):
    def update(s, p, g, t):
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return p - lr_t * s["m"] / (np.sqrt(s["v"]) + eps)
    return update


OPTIMIZERS = {
    "keras SGD": (lambda: aics.optimizers.SGD(0.1), _sgd(0.1)),
    "keras Adam": (lambda: aics.optimizers.Adam(0.05), _adam(0.05, 0.9, 0.999, 1e-7)),
    "train GradientDescent": (lambda: aics.train.GradientDescentOptimizer(0.1), _sgd(0.1)),
    "train Momentum": (lambda: aics.train.MomentumOptimizer(0.1, 0.9), _momentum(0.1, 0.9)),
    "train Adam": (lambda: aics.train.AdamOptimizer(0.05), _adam(0.05, 0.9, 0.999, 1e-8)),
}


def _train(make_optimizer, compiled):
    w = aics.Variable(W0, name="w")
    b = aics.Variable(np.zeros(1, np.float32), name="b")
    opt = make_optimizer()

    def train_step(x, y):
        with aics.GradientTape() as tape:
            loss = aics.reduce_mean(aics.square(aics.matmul(x, w) + b - y))
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        return loss
    step = aics.function(train_step) if compiled else train_step
    losses = [float(step(X, Y)) for _ in range(STEPS)]
    return w.numpy(), b.numpy(), losses, step, opt


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_train_step_in_function_matches_eager_and_numpy(name):
    make, update = OPTIMIZERS[name]
    w_fn, b_fn, losses_fn, step, _ = _train(make, compiled=True)
    w_eager, b_eager, losses_eager, _, _ = _train(make, compiled=False)
    w_ref, b_ref, losses_ref = _numpy_train(update)
    assert step.experimental_get_tracing_count() == 1  # later calls ran the traced graph
    np.testing.assert_allclose(w_fn, w_eager, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(b_fn, b_eager, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(w_fn, w_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b_fn, b_ref, rtol=1e-4, atol=1e-5)
    # Each call's loss is read before that call's update (reads and writes stay in order).
    np.testing.assert_allclose(losses_fn, losses_ref, rtol=1e-5)
    np.testing.assert_allclose(losses_fn, losses_eager, rtol=1e-6)


def test_keras_optimizer_counts_iterations_of_traced_steps():
    _, _, _, _, opt = _train(OPTIMIZERS["keras Adam"][0], compiled=True)
    assert int(opt.iterations.numpy()) == STEPS


def _numerical_gradient(f, w, eps=1e-6):
    g = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        d = np.zeros_like(w)
        d[i] = eps
        g[i] = (f(w + d) - f(w - d)) / (2 * eps)
    return g


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 4), k=st.integers(1, 3), m=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_tape_inside_function_with_captured_variable_matches_numerical_gradient(n, k, m, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, k))
    w0 = rng.normal(size=(k, m))
    w = aics.Variable(w0)

    @aics.function
    def grad_of_loss(x):
        with aics.GradientTape() as tape:
            loss = aics.reduce_sum(aics.square(aics.tanh(aics.matmul(x, w))))
        return tape.gradient(loss, w)

    got = grad_of_loss(aics.constant(x)).numpy()
    want = _numerical_gradient(lambda v: np.sum(np.tanh(x @ v) ** 2), w0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_tape_inside_function_watches_only_what_tf_watches():
    w = aics.Variable(2.0)

    @aics.function
    def grads(x, z):
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = x * x * w + z * w
        return tape.gradient(y, [x, z, w])   # z is not watched: None, as TF

    gx, gz, gw = grads(aics.constant(3.0), aics.constant(5.0))
    assert gz is None
    assert float(gx) == pytest.approx(2 * 3.0 * 2.0)
    assert float(gw) == pytest.approx(3.0 * 3.0 + 5.0)


def test_gradients_inside_function_of_captured_variable():
    w = aics.Variable(np.array([1.0, -2.0], np.float32))

    @aics.function
    def g(x):
        return aics.gradients(aics.reduce_sum(x * w * w), [w])[0]

    np.testing.assert_allclose(g(aics.constant([3.0, 4.0])).numpy(), [2 * 3.0 * 1.0, 2 * 4.0 * -2.0])


def test_assignments_in_function_update_eager_variables_in_program_order():
    v = aics.Variable(0.0)

    @aics.function
    def f():
        v.assign(1.0)
        first = v.read_value()
        v.assign_add(10.0)
        return first, v.read_value()

    first, second = f()
    assert (float(first), float(second)) == (1.0, 11.0)
    assert float(v.numpy()) == 11.0
    first, second = f()   # the traced graph assigns again at every call
    assert (float(first), float(second), float(v.numpy())) == (1.0, 11.0, 11.0)


def test_init_scope_creates_optimizer_slots_once_across_retraces():
    w = aics.Variable(W0)
    opt = aics.optimizers.Adam(0.01)

    @aics.function
    def step(x, y):
        with aics.GradientTape() as tape:
            loss = aics.reduce_mean(aics.square(aics.matmul(x, w) - y))
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    step(X, Y)
    slots = (opt.get_slot(w, "m"), opt.get_slot(w, "v"))
    step(X[:5], Y[:5])     # a new shape: a second trace
    step(X[:7], Y[:7])     # and a third
    assert step.experimental_get_tracing_count() == 3
    assert (opt.get_slot(w, "m"), opt.get_slot(w, "v")) == slots
    assert len([v for v in opt.variables() if v.shape == w.shape]) == 2
    assert int(opt.iterations.numpy()) == 3
    assert np.any(slots[0].numpy() != 0)   # the slots the traced graphs update are the eager ones


def test_init_scope_lifts_out_of_the_trace():
    made = []

    @aics.function
    def f(x):
        assert not aics.executing_eagerly()
        with aics.init_scope():
            assert aics.executing_eagerly()
            if not made:
                made.append(aics.Variable(3.0))
        return x * made[0]

    assert float(f(aics.constant(2.0))) == 6.0
    assert float(f(aics.constant(2.0, dtype=aics.float32) + 1)) == 9.0
    assert len(made) == 1


def test_creating_a_variable_in_a_trace_without_init_scope_is_an_error():
    @aics.function
    def f():
        return aics.Variable(1.0)
    with pytest.raises(ValueError, match="tried to create a variable"):
        f()


# ---------------------------------------------------------- gradient of a call
@pytest.fixture
def counted_cube(op_name):
    """A cube op whose kernel counts its runs (removed again after the test)."""
    name = op_name("CountedCube")
    calls = []
    aics.register_op(name).input("x: float").output("y: float")

    @aics.register_kernel(name)
    def _counted_cube(x):
        calls.append(1)
        return x ** 3

    @aics.RegisterGradient(name)
    def _counted_cube_grad(op, dy):
        x = op.inputs[0]
        return dy * 3.0 * x * x

    return (lambda x: getattr(aics.raw_ops, name)(x=x)), calls


def test_gradient_of_function_call_reuses_the_forward_pass(counted_cube):
    _counted, _calls = counted_cube

    @aics.function
    def f(x):
        return aics.reduce_sum(_counted(x) * 2.0)

    x = aics.constant([1.0, 2.0, -3.0])
    for _ in range(2):   # the first taped call builds the backward; the second reuses it
        _calls.clear()
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
        assert len(_calls) == 1   # the forward kernel ran once: the backward was fed its values
        np.testing.assert_allclose(g.numpy(), 6.0 * x.numpy() ** 2)
        assert float(y) == pytest.approx(2.0 * np.sum(x.numpy() ** 3))


def test_second_order_gradient_through_function_call(counted_cube):
    _counted, _ = counted_cube

    @aics.function
    def f(x):
        return aics.reduce_sum(_counted(x))

    x = aics.constant([1.5, -2.0])
    with aics.GradientTape() as outer:
        outer.watch(x)
        with aics.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x)
    np.testing.assert_allclose(dy.numpy(), 3.0 * x.numpy() ** 2)
    np.testing.assert_allclose(outer.gradient(dy, x).numpy(), 6.0 * x.numpy())


def test_stateful_forward_value_is_reused_not_redrawn():
    # A random op in the forward: recomputing it for the gradient would draw new numbers.
    @aics.function
    def f(x):
        return aics.reduce_sum(x * aics.random.uniform([4]))

    x = aics.constant(np.ones(4, np.float32))
    with aics.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    g = tape.gradient(y, x)
    assert float(y) == pytest.approx(float(aics.reduce_sum(g)), rel=1e-6)


# ---------------------------------------------------------- run_functions_eagerly
def test_run_functions_eagerly_runs_the_python_function():
    traced = []

    @aics.function
    def f(x):
        traced.append(aics.executing_eagerly())
        return x.numpy() * 2 if aics.executing_eagerly() else x * 2

    aics.config.run_functions_eagerly(True)
    try:
        assert aics.config.functions_run_eagerly()
        assert f(aics.constant(2.0)) == 4.0
        assert f(aics.constant(2.0)) == 4.0
        assert traced == [True, True]        # the Python body ran at each call, eagerly
    finally:
        aics.config.run_functions_eagerly(False)
    assert float(f(aics.constant(3.0))) == 6.0
    assert traced == [True, True, False]     # back to tracing


# ---------------------------------------------------------- methods
class Scale(aics.Module):
    def __init__(self, k):
        super().__init__()
        self.k = aics.Variable(float(k))

    @aics.function
    def __call__(self, x):
        return x * self.k

    @aics.function(input_signature=[aics.TensorSpec([None], aics.float32)])
    def total(self, x):
        return aics.reduce_sum(x) * self.k


def test_function_on_methods_traces_per_instance():
    a, b = Scale(2), Scale(5)
    x = aics.constant([1.0, 2.0])
    np.testing.assert_allclose(a(x).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(b(x).numpy(), [5.0, 10.0])
    np.testing.assert_allclose(a(x).numpy(), [2.0, 4.0])
    assert a.__call__ is a.__call__                       # one Function per instance
    assert a.__call__.experimental_get_tracing_count() == 1
    assert b.__call__.experimental_get_tracing_count() == 1
    assert Scale.__call__.experimental_get_tracing_count() == 0   # the class attribute itself
    assert float(a.total(aics.constant([1.0, 2.0, 3.0]))) == 12.0
    assert float(b.total(np.array([1.0], np.float32))) == 5.0
    assert [v.name for v in a.trainable_variables] == [a.k.name]


def test_method_function_does_not_keep_its_instance_alive():
    import weakref
    s = Scale(3)
    s(aics.constant(1.0))
    ref = weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None


def test_training_step_as_module_method():
    class Regression(aics.Module):
        def __init__(self):
            super().__init__()
            self.w = aics.Variable(W0)
            self.b = aics.Variable(np.zeros(1, np.float32))
            self.opt = aics.optimizers.SGD(0.1)

        @aics.function
        def train_step(self, x, y):
            with aics.GradientTape() as tape:
                loss = aics.reduce_mean(aics.square(aics.matmul(x, self.w) + self.b - y))
            grads = tape.gradient(loss, self.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.trainable_variables))
            return loss

    m = Regression()
    for _ in range(STEPS):
        m.train_step(X, Y)
    w_ref, b_ref, _ = _numpy_train(_sgd(0.1))
    np.testing.assert_allclose(m.w.numpy(), w_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m.b.numpy(), b_ref, rtol=1e-4, atol=1e-5)


def test_tape_inside_function_through_a_python_loop_over_a_tensor():
    # AutoGraph makes the for loop a while_loop; the captured variable enters the loop frame.
    w = aics.Variable(1.5)

    @aics.function
    def power_and_grad(n):
        with aics.GradientTape() as tape:
            acc = aics.constant(1.0)
            for _ in aics.range(n):
                acc = acc * w
        return acc, tape.gradient(acc, w)

    for n in (1, 3, 4):
        acc, g = power_and_grad(aics.constant(n))
        assert float(acc) == pytest.approx(1.5 ** n)
        assert float(g) == pytest.approx(n * 1.5 ** (n - 1))


def test_keras_layers_built_inside_the_first_trace():
    # Keras builds a layer's weights on its first call; in a traced step that is under
    # init_scope, so they are eager variables made once and the step trains them.
    dense = aics.keras.layers.Dense(1, kernel_initializer=aics.keras.initializers.Constant(0.5))
    opt = aics.optimizers.SGD(0.1)

    @aics.function
    def step(x, y):
        with aics.GradientTape() as tape:
            loss = aics.reduce_mean(aics.square(dense(x) - y))
        grads = tape.gradient(loss, dense.trainable_variables)
        opt.apply_gradients(zip(grads, dense.trainable_variables))
        return loss

    w, b = np.full((3, 1), 0.5), np.zeros(1)
    for _ in range(3):
        step(X, Y)
        gw, gb, _ = _numpy_grads(w, b)
        w, b = w - 0.1 * gw, b - 0.1 * gb
    kernel, bias = dense.trainable_variables
    np.testing.assert_allclose(kernel.numpy(), w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(bias.numpy(), b, rtol=1e-4, atol=1e-6)
