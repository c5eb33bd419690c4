"""TF1 recurrent cells and static/dynamic RNNs (issue 10's corpus: TensorFlow-Examples'
recurrent_network, bidirectional_rnn, dynamic_rnn).

References: TensorFlow 2.21's numbers for the same cells with the same weights, computed by
this script in /tmp/tfvenv (TF_USE_LEGACY_KERAS=1, tf-keras 2.21), and a brute-force NumPy
loop over time of TF's documented cell formulas::

    import numpy as np, tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    x = (np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) - 12) / 10.0
    for name, make in [("lstm", lambda: tf.nn.rnn_cell.BasicLSTMCell(3, forget_bias=1.0)),
                       ("gru", lambda: tf.nn.rnn_cell.GRUCell(3)),
                       ("rnn", lambda: tf.nn.rnn_cell.BasicRNNCell(3))]:
        with tf.Graph().as_default():
            X = tf.placeholder(tf.float32, [None, 3, 4])
            outs, st = tf.nn.static_rnn(make(), tf.unstack(X, 3, 1), dtype=tf.float32,
                                        sequence_length=[3, 2])
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                rng = np.random.RandomState(0)
                for v in sorted(tf.global_variables(), key=lambda v: v.name):
                    s.run(v.assign(rng.uniform(-0.5, 0.5, v.shape.as_list()).astype(np.float32)))
                print(name, s.run([outs[-1], st], {X: x}))
"""
import numpy as np
import pytest

import aicslib.compat.v1 as tf

X = (np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) - 12) / 10.0
SEQ_LEN = [3, 2]

# TF 2.21's output at the last step and final state (script above).
TF_LAST_OUTPUT = {
    "lstm": [[-0.0280512, 0.0799299, 0.1156186], [0.0, 0.0, 0.0]],
    "gru": [[0.0288293, -0.1941203, -0.1379587], [0.0, 0.0, 0.0]],
    "rnn": [[-0.1468629, -0.0760954, -0.4884568], [0.0, 0.0, 0.0]],
}
TF_FINAL_STATE = {
    "lstm": [[[-0.0636565, 0.1321248, 0.2404467], [0.1060244, 0.0126008, -0.042874]],
             [[-0.0280512, 0.0799299, 0.1156186], [0.0516607, 0.0058094, -0.0192858]]],
    "gru": [[0.0288293, -0.1941203, -0.1379587], [0.0238063, 0.4688945, 0.1064713]],
    "rnn": [[-0.1468629, -0.0760954, -0.4884568], [0.119304, 0.7559213, 0.3173436]],
}
VAR_NAMES = {
    "lstm": ["rnn/basic_lstm_cell/bias:0", "rnn/basic_lstm_cell/kernel:0"],
    "gru": ["rnn/gru_cell/candidate/bias:0", "rnn/gru_cell/candidate/kernel:0",
            "rnn/gru_cell/gates/bias:0", "rnn/gru_cell/gates/kernel:0"],
    "rnn": ["rnn/basic_rnn_cell/bias:0", "rnn/basic_rnn_cell/kernel:0"],
}
CELLS = {"lstm": lambda: tf.nn.rnn_cell.BasicLSTMCell(3, forget_bias=1.0),
         "gru": lambda: tf.nn.rnn_cell.GRUCell(3),
         "rnn": lambda: tf.nn.rnn_cell.BasicRNNCell(3)}


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def numpy_step(name, w, x, state):
    """TF's cell formulas, one step, in NumPy."""
    if name == "rnn":
        h = np.tanh(np.concatenate([x, state], 1) @ w["kernel"] + w["bias"])
        return h, h
    if name == "gru":
        r, u = np.split(sigmoid(np.concatenate([x, state], 1) @ w["gates/kernel"] + w["gates/bias"]), 2, 1)
        c = np.tanh(np.concatenate([x, r * state], 1) @ w["candidate/kernel"] + w["candidate/bias"])
        h = u * state + (1 - u) * c
        return h, h
    c, h = state
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ w["kernel"] + w["bias"], 4, 1)
    new_c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
    new_h = np.tanh(new_c) * sigmoid(o)
    return new_h, (new_c, new_h)


def numpy_rnn(name, w, x, seq_len):
    state = (np.zeros((2, 3)), np.zeros((2, 3))) if name == "lstm" else np.zeros((2, 3))
    out = None
    for t in range(x.shape[1]):
        h, new_state = numpy_step(name, w, x[:, t], state)
        live = (t < np.asarray(seq_len))[:, None]
        out = np.where(live, h, 0.0)
        if name == "lstm":
            state = tuple(np.where(live, n, o) for n, o in zip(new_state, state))
        else:
            state = np.where(live, new_state, state)
    return out, state


def run_cell(name):
    with tf.Graph().as_default():
        ph = tf.placeholder(tf.float32, [None, 3, 4])
        outs, st = tf.nn.static_rnn(CELLS[name](), tf.unstack(ph, 3, 1), dtype=tf.float32,
                                    sequence_length=SEQ_LEN)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            rng = np.random.RandomState(0)
            variables = sorted(tf.global_variables(), key=lambda v: v.name)
            names = [v.name for v in variables]
            weights = {}
            for v in variables:
                value = rng.uniform(-0.5, 0.5, v.shape.as_list()).astype(np.float32)
                s.run(v.assign(value))
                weights[v.name.split("_cell/")[1][:-2]] = value
            out, state = s.run([outs[-1], st], {ph: X})
    return names, weights, out, state


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn"])
def test_static_rnn_matches_tensorflow_and_numpy(name):
    tf.disable_v2_behavior()
    try:
        names, weights, out, state = run_cell(name)
    finally:
        tf.enable_v2_behavior()
    assert names == VAR_NAMES[name]  # TF's variable names: rnn/<cell>/kernel ...
    np.testing.assert_allclose(out, TF_LAST_OUTPUT[name], atol=2e-6)
    np.testing.assert_allclose(np.asarray(state), TF_FINAL_STATE[name], atol=2e-6)
    ref_out, ref_state = numpy_rnn(name, weights, X, SEQ_LEN)
    np.testing.assert_allclose(out, ref_out, atol=1e-5)
    np.testing.assert_allclose(np.asarray(state), np.asarray(ref_state), atol=1e-5)


def test_dynamic_rnn_equals_static_rnn_and_trains_shared_weights():
    tf.disable_v2_behavior()
    try:
        with tf.Graph().as_default():
            ph = tf.placeholder(tf.float32, [None, 3, 4])
            with tf.variable_scope("dyn"):
                cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3),
                                                    tf.nn.rnn_cell.GRUCell(2)])
                outs, _ = tf.nn.dynamic_rnn(cell, ph, dtype=tf.float32)
            with tf.variable_scope("dyn", reuse=True):
                outs_static, _ = tf.nn.static_rnn(cell, tf.unstack(ph, 3, 1), dtype=tf.float32)
            loss = tf.reduce_sum(tf.square(outs))
            grads = tf.gradients(loss, tf.trainable_variables())
            names = [v.name for v in tf.trainable_variables()]
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                a, b, g = s.run([outs, tf.stack(outs_static, 1), grads], {ph: X})
    finally:
        tf.enable_v2_behavior()
    assert a.shape == (2, 3, 2)
    np.testing.assert_allclose(a, b, rtol=1e-6)
    # One set of weights for every time step (TF's MultiRNNCell scopes cell_0, cell_1).
    assert names == ["dyn/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0",
                     "dyn/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0",
                     "dyn/rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel:0",
                     "dyn/rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias:0",
                     "dyn/rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel:0",
                     "dyn/rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias:0"]
    assert all(np.all(np.isfinite(x)) and np.any(x != 0) for x in g)


def test_static_bidirectional_rnn_concatenates_forward_and_reversed_backward():
    tf.disable_v2_behavior()
    try:
        with tf.Graph().as_default():
            ph = tf.placeholder(tf.float32, [None, 3, 4])
            fw, bw = tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(2)
            outs, _, _ = tf.nn.static_bidirectional_rnn(fw, bw, tf.unstack(ph, 3, 1), dtype=tf.float32)
            names = sorted(v.name for v in tf.global_variables())
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                got = s.run(outs, {ph: X})
                wf = {k: s.run(v) for k, v in zip(("kernel", "bias"), fw.variables)}
                wb = {k: s.run(v) for k, v in zip(("kernel", "bias"), bw.variables)}
    finally:
        tf.enable_v2_behavior()
    assert names == ["bidirectional_rnn/bw/basic_rnn_cell/bias:0", "bidirectional_rnn/bw/basic_rnn_cell/kernel:0",
                     "bidirectional_rnn/fw/basic_rnn_cell/bias:0", "bidirectional_rnn/fw/basic_rnn_cell/kernel:0"]
    hf, hb = np.zeros((2, 2)), np.zeros((2, 2))
    fwd, bwd = [], [None] * 3
    for t in range(3):
        hf = np.tanh(np.concatenate([X[:, t], hf], 1) @ wf["kernel"] + wf["bias"])
        fwd.append(hf)
    for t in reversed(range(3)):
        hb = np.tanh(np.concatenate([X[:, t], hb], 1) @ wb["kernel"] + wb["bias"])
        bwd[t] = hb
    for t in range(3):
        np.testing.assert_allclose(got[t], np.concatenate([fwd[t], bwd[t]], 1), atol=1e-5)


def test_cell_errors_follow_tensorflow():
    tf.disable_v2_behavior()
    try:
        with tf.Graph().as_default():
            with pytest.raises(ValueError, match="dtype must be specified"):
                tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(2), [tf.zeros([1, 2])])
            with pytest.raises(TypeError, match="inputs must be a sequence"):
                tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(2), tf.zeros([1, 2]), dtype=tf.float32)
            with pytest.raises(NotImplementedError, match="not implemented in aicslib"):
                tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True)
    finally:
        tf.enable_v2_behavior()
