"""Plausible wrong answers for notebook 00 (framework-tour).

Each replaces the release stub of its solution cell and must lose exactly that exercise's points.
"""

WRONG_ANSWERS = {
    "linear_layer": {
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
        "bias_swapped": """
graph = aics.Graph()
with graph.as_default():
    x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
    W = aics.Variable(aics.ones([3, 2]), name="W")
    b = aics.Variable([-0.5, 0.5], name="b")
    y = aics.add(aics.matmul(x, W), b, name="y")
    init = aics.global_variables_initializer()
with aics.Session(graph=graph) as sess:
    sess.run(init)
    y_val = sess.run(y, feed_dict={x: x_val})
return graph, y_val
""",
        "eager_no_graph": """
y_val = (aics.matmul(aics.constant(x_val), aics.ones([3, 2])) + aics.constant([0.5, -0.5])).numpy()
return aics.Graph(), y_val
""",
    },
}
