"""Plausible wrong answers for notebook 01's exercises (``make_affine``: an ``aics.function``
traced once; ``run_static``: build once, run many), keyed by grade_id, and different correct ones.
Each wrong answer replaces the body of its function and must lose the exercise's points; each
correct one must score full marks. The control-flow exercise and the planner lab moved with their
sections to notebook 02 (answers_02.py)."""

WRONG_ANSWERS = {
    "make_affine": {
        # no signature: every new batch size and every new Python scale traces again
        "retraces_plain_function": """
@aics.function
def f(x, w, scale):
    return aics.tanh(aics.matmul(x, w)) * scale
return f
""",
        # the batch size fixed at 2: a batch of 5 does not match the signature
        "fixed_batch_size": """
@aics.function(input_signature=[aics.TensorSpec([2, 2], aics.float32), aics.TensorSpec([2, 2], aics.float32),
                                aics.TensorSpec([], aics.float32)])
def f(x, w, scale):
    return aics.tanh(aics.matmul(x, w)) * scale
return f
""",
        # scale declared int32: a Python float such as 0.5 does not fit
        "scale_as_int32": """
@aics.function(input_signature=[aics.TensorSpec([None, 2], aics.float32), aics.TensorSpec([2, 2], aics.float32),
                                aics.TensorSpec([], aics.int32)])
def f(x, w, scale):
    return aics.tanh(aics.matmul(x, w)) * aics.cast(scale, aics.float32)
return f
""",
        # the plain Python function: runs eagerly, no trace to count
        "not_a_function": """
def f(x, w, scale):
    return aics.tanh(aics.matmul(x, w)) * scale
return f
""",
        # scale applied inside the tanh
        "scale_inside_tanh": """
@aics.function(input_signature=[aics.TensorSpec([None, 2], aics.float32), aics.TensorSpec([2, 2], aics.float32),
                                aics.TensorSpec([], aics.float32)])
def f(x, w, scale):
    return aics.tanh(aics.matmul(x, w) * scale)
return f
""",
        # w transposed
        "w_transposed": """
@aics.function(input_signature=[aics.TensorSpec([None, 2], aics.float32), aics.TensorSpec([2, 2], aics.float32),
                                aics.TensorSpec([], aics.float32)])
def f(x, w, scale):
    return aics.tanh(aics.matmul(x, w, transpose_b=True)) * scale
return f
""",
    },
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
}

CORRECT_ANSWERS = {
    "make_affine": {
        # no decorator, every shape left unknown but the ranks, scale multiplied first
        "unknown_shapes_function_call": """
def affine_any(x, w, scale):
    return scale * aics.tanh(x @ w)

return aics.function(affine_any, input_signature=[aics.TensorSpec([None, None], aics.float32),
                                                  aics.TensorSpec([None, None], aics.float32),
                                                  aics.TensorSpec([], aics.float32)])
""",
    },
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
}
