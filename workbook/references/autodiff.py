"""Reference graph ``gradients`` for the graph-gradients chapter's lab (section 2), and the checks its locked tests use.

``backward_ops(ys, xs, stop_gradients)`` lists the ops a backward pass from ``ys`` to ``xs`` visits:
those forward-reachable from an x and that a y depends on, without passing through a stopped tensor,
each op after every one of its consumers in the list (a reverse topological order).
``gradients(ys, xs, grad_ys, stop_gradients)`` walks that list, calls each op's registered gradient
function (``call_gradient_function``, the per-op step of the chapter's first sections) and sums the
contributions that reach one tensor along several paths; an x no gradient reaches gets ``None``.
The signature is the seam's (``aics.experimental.use_gradients``).

The checks do not trust any gradient code: ``numerical_gradients`` differentiates
sum_i <grad_ys_i, y_i> by central differences in float64, running the forward graph in a Session
with each x perturbed (a stopped tensor is fed its unperturbed value, so it stays a constant), and
``connected`` decides structurally which xs must get ``None``.
"""
import importlib
import pkgutil

import numpy as np

import aicslib as aics
from aicslib.ops.gradients_util import call_gradient_function


def backward_ops(ys, xs, stop_gradients=()):
    """The ops between ``xs`` and ``ys``, each after all its consumers among them."""
    stops = set(stop_gradients)
    reach, stack = set(), [op for x in xs if x not in stops for op in x.consumers()]
    while stack:                                  # forward from the xs
        op = stack.pop()
        if op not in reach:
            reach.add(op)
            stack.extend(c for t in op.outputs if t not in stops for c in t.consumers())
    between, stack = set(), [y.op for y in ys if y not in stops]
    while stack:                                  # backward from the ys, inside reach
        op = stack.pop()
        if op in reach and op not in between:
            between.add(op)
            stack.extend(t.op for t in op.inputs if t not in stops)
    pending = {op: 0 for op in between}           # consumers not yet listed
    for op in between:
        for t in op.inputs:
            if t.op in between and t not in stops:
                pending[t.op] += 1
    ready = sorted((op for op in between if pending[op] == 0), key=lambda o: o.name)
    order = []
    while ready:
        op = ready.pop()
        order.append(op)
        for t in op.inputs:
            if t.op in between and t not in stops:
                pending[t.op] -= 1
                if pending[t.op] == 0:
                    ready.append(t.op)
    return order


def _total(contributions):
    return None if not contributions else (contributions[0] if len(contributions) == 1
                                           else aics.add_n(contributions))


def gradients(ys, xs, grad_ys=None, stop_gradients=()):
    """d sum(ys) / d x for each x (weighted by ``grad_ys``), None where no gradient reaches x."""
    stops = set(stop_gradients)
    grads = {}
    for i, y in enumerate(ys):
        gy = None if grad_ys is None else grad_ys[i]
        gy = aics.ones_like(y) if gy is None else aics.convert_to_tensor(gy, dtype=y.dtype)
        grads.setdefault(y, []).append(gy)
    for op in backward_ops(ys, xs, stops):
        out_grads = [_total(grads.get(t)) for t in op.outputs]
        if all(g is None for g in out_grads):
            continue                              # nothing flows back through this op
        with aics.name_scope(op.name + "_grad"):
            in_grads = call_gradient_function(op, out_grads)
        for t, g in zip(op.inputs, in_grads):
            if g is not None and t not in stops:
                grads.setdefault(t, []).append(g)
    return [_total(grads.get(x)) for x in xs]


# ---- the checks -------------------------------------------------------------------------------

def is_reverse_topological(order):
    """None, or a message naming an op listed before one of its consumers in ``order``."""
    pos = {op: i for i, op in enumerate(order)}
    for op in order:
        for t in op.outputs:
            for c in t.consumers():
                if c in pos and pos[c] > pos[op]:
                    return f"'{op.name}' comes before its consumer '{c.name}'"
    return None


def connected(ys, xs, stop_gradients=()):
    """For each x: does some y depend on it along a path with no stopped tensor and no op marked
    not differentiable (StopGradient)? Where not, the gradient is None."""
    stops = set(stop_gradients)
    seen, stack = set(), [y for y in ys if y not in stops]
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        if aics.gradient_registry.is_differentiable(t.op.type):
            stack.extend(s for s in t.op.inputs if s not in stops)
    return [x in seen for x in xs]


def numerical_gradients(sess, ys, xs, feed, grad_ys_values, stopped=(), delta=1e-6):
    """Central differences of sum_i <grad_ys_i, y_i> for each x (float64 values): ``feed`` gives the
    graph's placeholders; ``stopped`` tensors keep their unperturbed values."""
    stopped = [s for s in stopped if s not in xs]
    base = sess.run([*xs, *stopped], feed)
    x_base, frozen = base[:len(xs)], dict(zip(stopped, base[len(xs):]))

    def objective(values):
        run_feed = {**feed, **frozen, **values}
        return sum(float(np.sum(np.asarray(g) * v)) for g, v in zip(grad_ys_values, sess.run(ys, run_feed)))

    out = []
    for x, x0 in zip(xs, x_base):
        x0 = np.asarray(x0, dtype=np.float64)
        g = np.zeros(x0.size)
        for k in range(x0.size):
            plus, minus = x0.copy().reshape(-1), x0.copy().reshape(-1)
            plus[k] += delta
            minus[k] -= delta
            g[k] = (objective({x: plus.reshape(x0.shape)}) - objective({x: minus.reshape(x0.shape)})) / (2 * delta)
        out.append(g.reshape(x0.shape))
    return out


_UNARY = [("sin", aics.sin), ("tanh", aics.tanh), ("square", lambda t: 0.5 * aics.square(t)),
          ("sigmoid", aics.sigmoid), ("exp", lambda t: aics.exp(0.3 * t)),
          ("row_sum", lambda t: aics.reduce_sum(t, axis=1, keepdims=True) * t)]
_BINARY = [("mul", aics.multiply), ("add", aics.add), ("sub", aics.subtract)]


def random_graph(seed, n_nodes=8):
    """A random DAG of float64 (2, 3) tensors with shared subexpressions, for the lab's checks.

    A spine of ops (each uses the previous result) takes other tensors as second operands, so
    values fan out to several consumers; side branches go through ``aics.stop_gradient`` or are
    listed in ``stop_gradients``; one x reaches no y. Returns dict(graph, feed, xs, ys, grad_ys
    (tensors or None), grad_ys_values, stops, stopped (the tensors a numerical check holds
    constant), describe)."""
    rng = np.random.default_rng(seed)
    g = aics.Graph()
    with g.as_default():
        phs = [aics.placeholder(aics.float64, [2, 3], name=f"x{i}") for i in range(3)]
        lonely = aics.placeholder(aics.float64, [2, 3], name="unused_x")   # reaches no y
        aics.sin(lonely, name="dangling")                                 # a branch no y uses
        pool = list(phs) + [aics.constant(rng.uniform(-1, 1, (2, 3)), name="c")]
        unused = list(phs[1:])
        spine, stops, stop_ops = phs[0], [], []
        nodes = []
        for k in range(n_nodes):
            if rng.random() < 0.5:
                name, fn = _BINARY[rng.integers(len(_BINARY))]
                other = unused.pop(0) if unused and rng.random() < 0.7 else pool[rng.integers(len(pool))]
                spine = fn(spine, other, name=f"n{k}_{name}")
            else:
                name, fn = _UNARY[rng.integers(len(_UNARY))]
                spine = aics.identity(fn(spine), name=f"n{k}_{name}")
            nodes.append(spine)
            pool.append(spine)
            if k in (2, 4) and rng.random() < 0.6:                    # a side branch, stopped
                name, fn = _UNARY[rng.integers(len(_UNARY))]
                side = aics.identity(fn(pool[rng.integers(len(pool))]), name=f"side{k}_{name}")
                if rng.random() < 0.5:
                    side = aics.stop_gradient(side, name=f"side{k}_stop")
                    stop_ops.append(side)
                else:
                    stops.append(side)
                pool.append(side)
        ys = [nodes[-1]]
        if rng.random() < 0.5:
            ys.append(nodes[int(rng.integers(2, n_nodes - 1))])
        xs = list(phs) + [lonely, nodes[1]]                               # an intermediate as an x too
        use_grad_ys = bool(rng.integers(2))
        grad_ys = [aics.placeholder(aics.float64, [2, 3], name=f"grad_y{i}") for i in range(len(ys))] \
            if use_grad_ys else None
    feed = {p: rng.uniform(-1, 1, (2, 3)) for p in phs + [lonely]}
    grad_ys_values = [rng.uniform(-1, 1, (2, 3)) for _ in ys] if use_grad_ys else [np.ones((2, 3)) for _ in ys]
    if use_grad_ys:
        feed.update(zip(grad_ys, grad_ys_values))
    return dict(graph=g, feed=feed, xs=xs, ys=ys, grad_ys=grad_ys, grad_ys_values=grad_ys_values,
                stops=stops, stopped=stops + stop_ops,
                describe=(f"random graph {seed}: ys={[y.op.name for y in ys]}, xs={[x.name for x in xs]}, "
                          f"stop_gradients={[s.name for s in stops]}, "
                          f"grad_ys={'given' if use_grad_ys else 'None'}"))


def gradient_recipes():
    """{op type: recipe} for the differentiable ops of the gradient registry that have a recipe
    (a builder and float64 inputs: the ``GRADIENT_CHECK_RECIPES`` of aicslib's modules)."""
    import aicslib.eager
    import aicslib.ops
    recipes = {}
    for package in (aicslib.ops, aicslib.eager):
        for mod in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{mod.name}")
            recipes.update(getattr(module, "GRADIENT_CHECK_RECIPES", {}))
    # Print's forward writes to stderr, which would cost a locked test cell its points: it is an
    # identity, checked by the library's own tests.
    return {op: recipes[op] for op in aics.gradient_registry.differentiable_ops()
            if recipes.get(op) is not None and op != "Print"}


def registry_case(op_type, recipe):
    """One registered op in a graph: loss = sum(w * op(inputs)), w fixed and random; returns
    dict(graph, xs (the placeholders), loss, feed, tolerance, delta)."""
    r = recipe()
    fn, inputs = r[0], [np.asarray(a.numpy() if hasattr(a, "numpy") else a, dtype=np.float64) for a in r[1]]
    tolerance, delta = (r[2] if len(r) > 2 else 1e-5), (r[3] if len(r) > 3 else 1e-6)
    g = aics.Graph()
    with g.as_default():
        xs = [aics.placeholder(aics.float64, a.shape, name=f"in{i}") for i, a in enumerate(inputs)]
        y = aics.cast(fn(*xs), aics.float64)
        feed = dict(zip(xs, inputs))
        with aics.Session() as sess:
            y_shape = np.shape(sess.run(y, feed))
        w = aics.constant(np.random.default_rng(len(op_type)).uniform(0.5, 1.5, y_shape), name="w")
        loss = aics.reduce_sum(y * w, name="loss")
    return dict(graph=g, xs=xs, loss=loss, feed=feed, tolerance=tolerance, delta=delta)


def directional_check(sess, loss, xs, grads, feed, delta, rng):
    """max over xs of |<grad, v> - (L(x + d v) - L(x - d v)) / 2d| for a random direction v per x, and the
    scale it is measured against."""
    worst, scale = 0.0, 1.0
    got = sess.run([g for g in grads if g is not None], feed)
    got = iter(got)
    for x, g in zip(xs, grads):
        value = np.zeros(np.shape(feed[x])) if g is None else np.asarray(next(got), dtype=np.float64)
        v = rng.standard_normal(np.shape(feed[x]))
        plus = sess.run(loss, {**feed, x: feed[x] + delta * v})
        minus = sess.run(loss, {**feed, x: feed[x] - delta * v})
        numeric = (plus - minus) / (2 * delta)
        worst = max(worst, abs(float(np.sum(value * v)) - numeric))
        scale = max(scale, abs(numeric))
    return worst, scale


def between_brute(ys, xs, stop_gradients=()):
    """The definition of the ops a backward pass visits, op by op: some input comes from an x (or
    from such an op) and some y depends on one of its outputs, no stopped tensor on the way."""
    stops, xs = set(stop_gradients), set(xs) - set(stop_gradients)
    memo = {}

    def from_x(op):
        if op not in memo:
            memo[op] = False
            memo[op] = any(t not in stops and (t in xs or from_x(t.op)) for t in op.inputs)
        return memo[op]

    feeds_y, stack = set(), [y.op for y in ys if y not in stops]
    while stack:
        op = stack.pop()
        if op not in feeds_y:
            feeds_y.add(op)
            stack.extend(t.op for t in op.inputs if t not in stops)
    return {op for op in feeds_y if from_x(op)}


def machinery_names(allow=()):
    """Names of the library's gradient machinery and of this reference: an answer that calls one
    of them has not written the walk itself."""
    from aicslib.eager import backprop
    from aicslib.ops import control_flow_grad, gradients_impl, gradients_util
    import sys
    names = {"gradients", "gradient", "prune", "default_planner", "aggregate"}
    for module in (gradients_util, gradients_impl, control_flow_grad, backprop, sys.modules[__name__]):
        names |= {n for n, v in vars(module).items() if callable(v) and getattr(v, "__module__", "") == module.__name__}
    return names - {"call_gradient_function", "as_tensor_list", "graph_tensor_of", "GradientTape"} - set(allow)
