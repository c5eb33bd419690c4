"""TF2: the training loop of TensorFlow's "basics" guide, with a global seed.

A quadratic tf.Module fitted by hand-written SGD over a tf.data pipeline. With
``tf.random.set_seed`` the noisy targets and the initial weights are TensorFlow's own draws,
so the printed errors are TensorFlow 2.21's (the guide shuffles; here the batches keep their
order, since tf.data's shuffle is not TF's generator). The whole loop is also run in NumPy
from the same data and initial weights.
"""
import numpy as np

import aicslib as tf

# TensorFlow 2.21, this program: the MSE over all points after epochs 0, 10, 20, ..., 90.
TF_MSE = [40.909854888916016, 4.850292682647705, 2.353116512298584, 1.4521524906158447,
          1.1277637481689453, 1.0108627080917358, 0.9684500694274902, 0.9528792500495911,
          0.9470542073249817, 0.9448120594024658]


class Model(tf.Module):
    def __init__(self):
        rand_init = tf.random.uniform(shape=[3], minval=0., maxval=5., seed=22)
        self.w_q = tf.Variable(rand_init[0])
        self.w_l = tf.Variable(rand_init[1])
        self.b = tf.Variable(rand_init[2])

    @tf.function
    def __call__(self, x):
        return self.w_q * (x**2) + self.w_l * x + self.b


def mse_loss(y_pred, y):
    return tf.reduce_mean(tf.square(y_pred - y))


def numpy_sgd(x, y, w, epochs, batch_size, lr):
    w = np.array(w, np.float64)  # w_q, w_l, b
    x, y = x.astype(np.float64), y.astype(np.float64)
    for _ in range(epochs):
        for i in range(0, len(x), batch_size):
            xb, yb = x[i:i + batch_size], y[i:i + batch_size]
            err = w[0] * xb**2 + w[1] * xb + w[2] - yb
            w -= lr * 2 * np.array([np.mean(err * xb**2), np.mean(err * xb), np.mean(err)])
    return w


def main(epochs=100, batch_size=32, learning_rate=0.01):
    tf.random.set_seed(42)
    x = tf.cast(tf.linspace(-2, 2, 201), tf.float32)
    y = x**2 + 2*x - 5 + tf.random.normal(shape=[201])
    model = Model()
    start = [model.w_q.numpy(), model.w_l.numpy(), model.b.numpy()]
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size)
    mse = []
    for epoch in range(epochs):
        for x_batch, y_batch in dataset:
            with tf.GradientTape() as tape:
                batch_loss = mse_loss(model(x_batch), y_batch)
            grads = tape.gradient(batch_loss, model.variables)
            for g, v in zip(grads, model.variables):
                v.assign_sub(learning_rate * g)
        if epoch % 10 == 0:
            mse.append(float(mse_loss(model(x), y)))
            print(f"Mean squared error for step {epoch}: {mse[-1]:0.3f}")
    want = numpy_sgd(x.numpy(), y.numpy(), start, epochs, batch_size, learning_rate)
    np.testing.assert_allclose([model.w_q.numpy(), model.w_l.numpy(), model.b.numpy()], want, rtol=1e-4)
    np.testing.assert_allclose(mse, TF_MSE[:len(mse)], rtol=1e-5)
    return {"mse": mse}


if __name__ == "__main__":
    print(main())
