"""TF1 input pipelines built from Python generators with nested output types and shapes
(tuples of dtypes with tuples of shapes, dicts), a range whose length is computed in the graph,
and a shuffle buffer fed at initialization; a softmax classifier trains on the generator's
batches. Checked against NumPy."""
import numpy as np

import aicslib.compat.v1 as tf


def samples(n, seed):
    rng = np.random.RandomState(seed)
    for _ in range(n):
        label = rng.randint(3)
        features = rng.randn(4).astype(np.float32) + np.float32(label)
        yield {"features": features, "meta": (np.int32(label), np.float32(1.0))}, np.int64(label)


def numpy_softmax_sgd(batches, lr):
    w, b = np.zeros((4, 3)), np.zeros(3)
    for x, y in batches:
        logits = x @ w + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        d = (p - np.eye(3)[y]) / len(x)
        w, b = w - lr * x.T @ d, b - lr * d.sum(0)
    return w, b


def main(n=48, batch=8, lr=0.5):
    tf.disable_v2_behavior()
    ds = tf.data.Dataset.from_generator(
        lambda: samples(n, seed=1),
        output_types=({"features": tf.float32, "meta": (tf.int32, tf.float32)}, tf.int64),
        output_shapes=({"features": (4,), "meta": ((), ())}, ()))
    assert ds.output_shapes[0]["features"].as_list() == [4] and ds.output_shapes[1].ndims == 0
    batched = ds.batch(batch)
    (inputs, labels) = tf.data.make_one_shot_iterator(batched).get_next()
    assert inputs["features"].shape.as_list() == [None, 4]

    w = tf.Variable(tf.zeros([4, 3]))
    b = tf.Variable(tf.zeros([3]))
    logits = tf.matmul(inputs["features"], w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = tf.train.GradientDescentOptimizer(lr).minimize(loss)

    # How many batches: a length computed in the graph, read when the iterator starts.
    num_batches = tf.cast(tf.math.ceil(tf.constant(n / batch)), tf.int64)
    steps = tf.data.make_one_shot_iterator(tf.data.Dataset.range(num_batches)).get_next()
    buffer = tf.placeholder(tf.int64, [])
    order = tf.data.Dataset.range(5).shuffle(buffer, seed=3).make_initializable_iterator()

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        count = 0
        try:
            while True:
                sess.run(steps)
                sess.run(train)
                count += 1
        except tf.errors.OutOfRangeError:
            pass
        got_w, got_b = sess.run([w, b])
        sess.run(order.initializer, {buffer: 1})
        in_order = [sess.run(order.get_next()) for _ in range(5)]

    assert count == n // batch and in_order == [0, 1, 2, 3, 4]  # a buffer of one cannot reorder
    data = list(samples(n, seed=1))
    xs = np.stack([d[0]["features"] for d in data]).astype(np.float64)
    ys = np.array([d[1] for d in data])
    want_w, want_b = numpy_softmax_sgd([(xs[i:i + batch], ys[i:i + batch]) for i in range(0, n, batch)], lr)
    np.testing.assert_allclose(got_w, want_w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got_b, want_b, rtol=1e-4, atol=1e-6)
    return {"w": got_w.tolist(), "batches": count}


if __name__ == "__main__":
    print(main())
