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


# ---- predict_add_shape: the static shape of a + b

_RULE = """
n = max(len(shape_a), len(shape_b))
a = {pad_a}
b = {pad_b}
out = []
for x, y in zip(a, b):
{body}
return out
"""
_RIGHT = ("[1] * (n - len(shape_a)) + list(shape_a)", "[1] * (n - len(shape_b)) + list(shape_b)")


def _rule(body, pad=_RIGHT):
    return _RULE.format(pad_a=pad[0], pad_b=pad[1], body=body)


_TF_BODY = """    if x == 1:
        out.append(y)
    elif y == 1:
        out.append(x)
    elif x is None:
        out.append(y)
    elif y is None or x == y:
        out.append(x)
    else:
        raise ValueError(f"{x} and {y} do not broadcast")"""

WRONG_ANSWERS["predict_add_shape"] = {
    # the library's shape function, through a graph: the right shapes, but not a prediction by hand
    "builds_a_graph": """
with aics.Graph().as_default():
    return aics.add(aics.placeholder(aics.float32, shape_a), aics.placeholder(aics.float32, shape_b)).shape.as_list()
""",
    "copies_the_package_reference": """
from workbook.references.shapes import broadcast_static
return broadcast_static(shape_a, shape_b)
""",
    # shapes aligned on the left (the shorter one padded with 1s at the end)
    "left_aligned": _rule(_TF_BODY, pad=("list(shape_a) + [1] * (n - len(shape_a))",
                                          "list(shape_b) + [1] * (n - len(shape_b))")),
    # any unknown dimension makes the result's unknown: None + 3 is 3 (None can only be 1 or 3)
    "unknown_always_wins": _rule("""    if x is None or y is None:
        out.append(None)
    elif x == 1 or y == 1 or x == y:
        out.append(max(x, y))
    else:
        raise ValueError(f"{x} and {y} do not broadcast")"""),
    # the larger size, never an error: 3 + 4 "broadcasts" to 4
    "max_never_fails": _rule("""    if x == 1:
        out.append(y)
    elif y == 1:
        out.append(x)
    elif x is None:
        out.append(y)
    elif y is None:
        out.append(x)
    else:
        out.append(max(x, y))"""),
    # an unknown dimension taken as 1: None + None gives 1, but both could be 5
    "unknown_as_one": _rule("""    x, y = (1 if x is None else x), (1 if y is None else y)
    if x == 1 or y == 1 or x == y:
        out.append(max(x, y))
    else:
        raise ValueError(f"{x} and {y} do not broadcast")"""),
    # NumPy's helper with unknown dimensions as 1: None + None gives 1
    "numpy_broadcast_shapes": """
return list(np.broadcast_shapes(tuple(1 if d is None else d for d in shape_a),
                                tuple(1 if d is None else d for d in shape_b)))
""",
}

CORRECT_ANSWERS["predict_add_shape"] = {
    # walked from the right with zip_longest, the sizes a dimension could take as a set
    "from_the_right_with_sets": """
import itertools
out = []
for x, y in itertools.zip_longest(reversed(shape_a), reversed(shape_b), fillvalue=1):
    sizes = {d for d in (x, y) if d != 1}
    known = {d for d in sizes if d is not None}
    if len(known) > 1:
        raise ValueError(f"Dimensions must be equal, but are {x} and {y}")
    if known:
        out.append(known.pop())
    elif None in sizes:
        out.append(None)
    else:
        out.append(1)
return out[::-1]
""",
}
