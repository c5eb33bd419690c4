"""TF1 GAN on MNIST (dense generator and discriminator, two Adam optimizers stepped in one run).

The weights come from seeded ``tf.random_normal`` (Xavier scale), the noise from a seeded NumPy
generator, so the losses are TensorFlow's: TF_LOSSES were printed by TensorFlow 2.21 running
this program with ``import tensorflow.compat.v1 as tf``. The first step's losses are also
recomputed with NumPy from the initial weights.
"""
import numpy as np

import aicslib.compat.v1 as tf
from aicslib.datasets import mnist

# TensorFlow 2.21: (generator loss, discriminator loss) of steps 1, 5, 10, 15, 20.
TF_LOSSES = [(0.5776472091674805, 1.3819161653518677), (1.659674882888794, 0.7716671228408813),
             (2.668829917907715, 0.5958659052848816), (3.154932737350464, 0.44771772623062134),
             (3.2688302993774414, 0.3165315091609955)]


def glorot_init(shape, seed):
    return tf.random_normal(shape=shape, stddev=1. / tf.sqrt(shape[0] / 2.), seed=seed)


def np_losses(p, noise, images):
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    fake = sig(relu(noise @ p["g1"] + p["g1b"]) @ p["g2"] + p["g2b"])
    d_real = sig(relu(images @ p["d1"] + p["d1b"]) @ p["d2"] + p["d2b"])
    d_fake = sig(relu(fake @ p["d1"] + p["d1b"]) @ p["d2"] + p["d2b"])
    return -np.mean(np.log(d_fake)), -np.mean(np.log(d_real) + np.log(1. - d_fake))


def main(steps=20, batch_size=32, noise_dim=100, hidden=128):
    tf.disable_v2_behavior()
    (x_train, _), _ = mnist.load_data(verify=False)
    data = x_train[:steps * batch_size].reshape(-1, 784).astype(np.float32) / 255.0
    rng = np.random.RandomState(0)

    shapes = {"g1": [noise_dim, hidden], "g2": [hidden, 784], "d1": [784, hidden], "d2": [hidden, 1]}
    w = {k: tf.Variable(glorot_init(s, seed=i + 1), name=k) for i, (k, s) in enumerate(shapes.items())}
    b = {k: tf.Variable(tf.zeros([s[1]]), name=k + "_b") for k, s in shapes.items()}

    def generator(x):
        h = tf.nn.relu(tf.add(tf.matmul(x, w["g1"]), b["g1"]))
        return tf.nn.sigmoid(tf.add(tf.matmul(h, w["g2"]), b["g2"]))

    def discriminator(x):
        h = tf.nn.relu(tf.add(tf.matmul(x, w["d1"]), b["d1"]))
        return tf.nn.sigmoid(tf.add(tf.matmul(h, w["d2"]), b["d2"]))

    gen_input = tf.placeholder(tf.float32, shape=[None, noise_dim], name="input_noise")
    disc_input = tf.placeholder(tf.float32, shape=[None, 784], name="disc_input")
    disc_real, disc_fake = discriminator(disc_input), discriminator(generator(gen_input))
    gen_loss = -tf.reduce_mean(tf.log(disc_fake))
    disc_loss = -tf.reduce_mean(tf.log(disc_real) + tf.log(1. - disc_fake))
    train_gen = tf.train.AdamOptimizer(0.0002).minimize(
        gen_loss, var_list=[w["g1"], w["g2"], b["g1"], b["g2"]])
    train_disc = tf.train.AdamOptimizer(0.0002).minimize(
        disc_loss, var_list=[w["d1"], w["d2"], b["d1"], b["d2"]])

    printed = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        start = sess.run({**w, **{k + "b": v for k, v in b.items()}})
        for i in range(1, steps + 1):
            z = rng.uniform(-1., 1., size=[batch_size, noise_dim]).astype(np.float32)
            batch_x = data[(i - 1) * batch_size:i * batch_size]
            _, _, gl, dl = sess.run([train_gen, train_disc, gen_loss, disc_loss],
                                    feed_dict={disc_input: batch_x, gen_input: z})
            if i == 1:
                p64 = {k: v.astype(np.float64) for k, v in start.items()}
                want = np_losses(p64, z.astype(np.float64), batch_x.astype(np.float64))
                np.testing.assert_allclose([gl, dl], want, rtol=1e-5)
            if i % 5 == 0 or i == 1:
                printed.append((float(gl), float(dl)))
                print("Step %i: Generator Loss: %f, Discriminator Loss: %f" % (i, gl, dl))
    np.testing.assert_allclose(printed, TF_LOSSES[:len(printed)], rtol=1e-4)
    return {"losses": printed}


if __name__ == "__main__":
    print(main())
