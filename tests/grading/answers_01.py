"""Plausible wrong answers for notebook 01's control-flow exercise (``gcd_graph``), keyed by
grade_id. Each replaces the body of ``gcd_graph``; each must lose the exercise's 2 points
(and must terminate: none loops forever)."""

WRONG_ANSWERS = {
    "run_static": {
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
