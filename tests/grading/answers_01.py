"""Plausible wrong answers for notebook 01's exercises (``run_static``: build once, run many;
``gcd_graph``: Euclid's algorithm as a graph ``while_loop``), keyed by grade_id, and different
correct ones. Each wrong answer replaces the body of its function and must lose the exercise's
2 points (and must terminate: none loops forever); each correct one must score full marks."""

WRONG_ANSWERS = {
    "run_static": {
        # the test's own reference: eager_step, called eagerly
        "eager_instead_of_graph": """
return aics.Graph(), [eager_step(aics.constant(x), aics.constant(w_val)).numpy() for x in xs]
""",
        "new_graph_and_session_per_input": """
results = []
for xv in xs:
    graph = aics.Graph()
    with graph.as_default():
        x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
        y = aics.reduce_sum(aics.tanh(aics.matmul(x, aics.constant(w_val))) * 2.0 - 1.0, axis=1)
    with aics.Session(graph=graph) as sess:
        results.append(sess.run(y, feed_dict={x: xv}))
return graph, results
""",
        "graph_grows_with_inputs": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    w = aics.constant(w_val)
    outs = [aics.reduce_sum(aics.tanh(aics.matmul(x, w)) * 2.0 - 1.0, axis=1) for _ in xs]
with aics.Session(graph=graph) as sess:
    results = [sess.run(o, feed_dict={x: xv}) for o, xv in zip(outs, xs)]
return graph, results
""",
        "numpy_results": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    y = aics.reduce_sum(aics.tanh(aics.matmul(x, aics.constant(w_val))) * 2.0 - 1.0, axis=1)
with aics.Session(graph=graph) as sess:
    sess.run(y, feed_dict={x: xs[0]})
return graph, [(np.tanh(xv @ w_val) * 2.0 - 1.0).sum(axis=1) for xv in xs]
""",
        # the library's own way to turn eager code into a graph: traced, but no Session runs it
        "traced_with_aics_function": """
step = aics.function(eager_step)
w = aics.constant(w_val)
return aics.Graph(), [step(aics.constant(xv), w).numpy() for xv in xs]
""",
        # one graph, but a new Session (and a new execution plan) for every input
        "new_session_per_input": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    y = aics.reduce_sum(aics.tanh(aics.matmul(x, aics.constant(w_val))) * 2.0 - 1.0, axis=1)
results = []
for xv in xs:
    with aics.Session(graph=graph) as sess:
        results.append(sess.run(y, feed_dict={x: xv}))
return graph, results
""",
        "mean_instead_of_sum": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    y = aics.reduce_mean(aics.tanh(aics.matmul(x, aics.constant(w_val))) * 2.0 - 1.0, axis=1)
with aics.Session(graph=graph) as sess:
    results = [sess.run(y, feed_dict={x: xv}) for xv in xs]
return graph, results
""",
        "forgot_scale_and_shift": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    y = aics.reduce_sum(aics.tanh(aics.matmul(x, aics.constant(w_val))), axis=1)
with aics.Session(graph=graph) as sess:
    results = [sess.run(y, feed_dict={x: xv}) for xv in xs]
return graph, results
""",
    },
    "gcd_graph": {
        # stops one step early: gcd(5, 3) walks (5,3) -> (3,2) -> (2,1) and answers 2
        "stops_at_b_equal_one": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    g, _ = aics.while_loop(lambda x, y: aics.greater(y, 1), lambda x, y: (y, aics.floormod(x, y)), [a, b])
return graph, a, b, g
""",
        # returns the second loop variable, which is 0 when the loop ends
        "returns_the_remainder": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    _, g = aics.while_loop(lambda x, y: aics.not_equal(y, 0), lambda x, y: (y, aics.floormod(x, y)), [a, b])
return graph, a, b, g
""",
        # a fixed number of Euclid steps unrolled with cond: right for small inputs, no loop in the graph
        "unrolled_with_cond": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    x, y = a, b
    for _ in range(12):
        x, y = aics.cond(aics.not_equal(y, 0), lambda x=x, y=y: (y, aics.floormod(x, y)), lambda x=x, y=y: (x, y))
    g = x
return graph, a, b, g
""",
        # the exact shortcut of the issue: a while_loop that g does not use, beside Euclid unrolled with cond
        "dummy_loop_plus_unrolled_cond": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    aics.while_loop(lambda i: aics.less(i, 1), lambda i: aics.add(i, 1), [aics.constant(0)])
    x, y = a, b
    for _ in range(12):
        x, y = aics.cond(aics.not_equal(y, 0), lambda x=x, y=y: (y, aics.floormod(x, y)), lambda x=x, y=y: (x, y))
    g = x
return graph, a, b, g
""",
        # the loop is in g's fan-in (added times 0), the answer comes from 12 unrolled steps: right
        # until an input needs more steps (consecutive Fibonacci numbers)
        "loop_times_zero_plus_unrolled": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    loop, _ = aics.while_loop(lambda x, y: aics.not_equal(y, 0), lambda x, y: (y, aics.floormod(x, y)), [a, b])
    x, y = a, b
    for _ in range(12):
        x, y = aics.cond(aics.not_equal(y, 0), lambda x=x, y=y: (y, aics.floormod(x, y)), lambda x=x, y=y: (x, y))
    g = x + 0 * loop
return graph, a, b, g
""",
        # the test's reference, math.gcd, tabulated into a constant: no loop, small inputs only
        "math_gcd_table": """
import math
n = 64
table = np.array([math.gcd(i, j) for i in range(n) for j in range(n)], np.int32)
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    g = aics.gather(aics.constant(table), a * n + b)
return graph, a, b, g
""",
        # the difference instead of the remainder, a bounded number of times (subtractive Euclid cut short)
        "subtraction_bounded": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    g, _ = aics.while_loop(lambda x, y: aics.not_equal(y, 0),
                           lambda x, y: (aics.maximum(y, x - y), aics.minimum(y, x - y)), [a, b],
                           maximum_iterations=50)
return graph, a, b, g
""",
    },
}

CORRECT_ANSWERS = {
    "run_static": {
        # w as a variable (initialized once), a Session closed by hand, 2 * tanh - 1 in another order
        "variable_weights_explicit_close": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=[None, 3], name="x")
    w = aics.Variable(w_val, name="w")
    y = aics.reduce_sum(2.0 * aics.tanh(x @ w) - 1.0, axis=1)
sess = aics.Session(graph=graph)
sess.run(w.initializer)
results = []
for xv in xs:
    results.append(sess.run(y, {x: xv}))
sess.close()
return graph, results
""",
        # the algebra rearranged: sum(2 tanh - 1) = 2 sum(tanh) - (number of columns)
        "sum_first_then_scale": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    w = aics.constant(w_val)
    y = 2.0 * aics.reduce_sum(aics.tanh(aics.matmul(x, w)), axis=1) - float(w_val.shape[1])
with aics.Session(graph=graph) as sess:
    results = [sess.run(y, feed_dict={x: xv}) for xv in xs]
return graph, results
""",
    },
    "gcd_graph": {
        # AutoGraph turns a Python while on tensors into the same while_loop
        "autograph_python_while": """
def euclid(x, y):
    while y != 0:
        x, y = y, x % y
    return x

concrete = aics.function(euclid).get_concrete_function(aics.constant(0), aics.constant(0))
a, b = concrete.inputs
return concrete.graph, a, b, concrete.outputs[0]
""",
        # the remainder written with floordiv, the loop condition as greater
        "floordiv_remainder": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, shape=[], name="a")
    b = aics.placeholder(aics.int32, shape=[], name="b")

    def body(x, y):
        return y, x - aics.floordiv(x, y) * y

    g, _ = aics.while_loop(lambda x, y: aics.greater(y, 0), body, (a, b))
return graph, a, b, g
""",
    },
}
