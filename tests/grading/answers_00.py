"""Plausible wrong answers for notebook 00 (framework-tour), and different correct ones.

Each wrong answer replaces the release stub of its solution cell and must lose exactly that
exercise's points; each correct one must score full marks.
"""

_GRAPH = """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape={x_shape}, name="x")
    W = aics.Variable({W_init}, name="W")
    b = {b_def}
    y = aics.add(aics.matmul(x, W), b, name="y")
    init = aics.global_variables_initializer()
"""
_RUN = """
with aics.Session(graph=graph) as sess:
    sess.run(init)
    y_val = sess.run(y, feed_dict={x: x_val})
return graph, y_val
"""


def _linear(x_shape="(None, 3)", W_init="aics.ones([3, 2])", b_def='aics.Variable([0.5, -0.5], name="b")'):
    return _GRAPH.format(x_shape=x_shape, W_init=W_init, b_def=b_def) + _RUN


WRONG_ANSWERS = {
    "linear_layer": {
        # copies the test's reference: the value computed with NumPy beside the graph
        "numpy_value_beside_graph": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    W = aics.Variable(aics.ones([3, 2]), name="W")
    b = aics.Variable([0.5, -0.5], name="b")
    y = aics.add(aics.matmul(x, W), b, name="y")
    init = aics.global_variables_initializer()
with aics.Session(graph=graph) as sess:
    sess.run(init)
y_val = np.asarray(x_val, np.float32) @ np.ones((3, 2), np.float32) + np.array([0.5, -0.5], np.float32)
return graph, y_val
""",
        "bias_swapped": _linear(b_def='aics.Variable([-0.5, 0.5], name="b")'),
        "eager_no_graph": """
y_val = (aics.matmul(aics.constant(x_val), aics.ones([3, 2])) + aics.constant([0.5, -0.5])).numpy()
return aics.Graph(), y_val
""",
        # the library's own layer: right values, but its variables are dense/kernel and dense/bias
        "library_dense_layer": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    dense = aics.keras.layers.Dense(2, kernel_initializer="ones",
                                    bias_initializer=aics.keras.initializers.Constant([0.5, -0.5]))
    y = aics.identity(dense(x), name="y")
    init = aics.global_variables_initializer()
with aics.Session(graph=graph) as sess:
    sess.run(init)
    y_val = sess.run(y, feed_dict={x: x_val})
return graph, y_val
""",
        # the batch size fixed to the example's 2 rows: the graph cannot take another batch
        "placeholder_fixed_batch": _linear(x_shape="(2, 3)"),
        "bias_as_constant": _linear(b_def='aics.constant([0.5, -0.5], name="b")'),
        "random_weights": _linear(W_init="aics.random_normal([3, 2], seed=1)"),
        # the value of the graph's y, but fetched without feeding x_val (a constant input instead)
        "constant_input_no_feed": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    W = aics.Variable(aics.ones([3, 2]), name="W")
    b = aics.Variable([0.5, -0.5], name="b")
    y = aics.add(aics.matmul(x, W), b, name="y")
    y_const = aics.matmul(aics.constant(x_val), W) + b
    init = aics.global_variables_initializer()
with aics.Session(graph=graph) as sess:
    sess.run(init)
    y_val = sess.run(y_const)
return graph, y_val
""",
    },
}

CORRECT_ANSWERS = {
    "linear_layer": {
        # variables from NumPy arrays, their initializers run one by one, y named by an identity
        "numpy_initial_values_identity_named_y": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=[None, 3], name="x")
    W = aics.Variable(np.ones((3, 2), np.float32), name="W")
    b = aics.Variable(np.array([0.5, -0.5], np.float32), name="b")
    y = aics.identity(x @ W + b, name="y")
sess = aics.Session(graph=graph)
sess.run([W.initializer, b.initializer])
y_val = sess.run(y, {x: x_val})
sess.close()
return graph, y_val
""",
        # the bias added by bias_add, fetched by name
        "bias_add_fetched_by_name": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    W = aics.Variable(aics.ones([3, 2]), name="W")
    b = aics.Variable([0.5, -0.5], name="b")
    aics.nn.bias_add(aics.matmul(x, W), b, name="y")
    init = aics.global_variables_initializer()
with aics.Session(graph=graph) as sess:
    sess.run(init)
    y_val = sess.run("y:0", feed_dict={"x:0": x_val})
return graph, y_val
""",
    },
}
