"""Compare the defaults of initializers, optimizers and layers between aicslib and TensorFlow.

A trained example that disagrees with TensorFlow "beyond randomness" is usually a default:
an initializer's scale, an optimizer's epsilon, a layer's initializer. This prints, for one
framework, (1) the signature of each such API, (2) statistics of what each initializer and
each layer's default initializers draw, (3) five steps of every optimizer with its defaults
on a fixed quadratic; ``--diff`` runs both frameworks and prints only the lines that differ.
Signatures and trajectories must agree. The draws use the same global seed: TF1-style random
ops then draw the same numbers (aicslib uses TF's Philox generator); Keras's initializers draw
their own seeds (stateless ops), so their statistics agree only up to chance.

    .venv/bin/python tools/tf_defaults.py --diff          # needs /tmp/tfvenv (TF 2.21, tf-keras)
    .venv/bin/python tools/tf_defaults.py --backend aicslib
"""
import argparse
import difflib
import inspect
import os
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TF_PYTHON = "/tmp/tfvenv/bin/python"

SIGNATURES = {
    "v1": ["zeros_initializer", "ones_initializer", "constant_initializer", "random_normal_initializer",
           "truncated_normal_initializer", "random_uniform_initializer", "glorot_uniform_initializer",
           "glorot_normal_initializer", "variance_scaling_initializer", "orthogonal_initializer",
           "get_variable", "random_normal", "random_uniform", "truncated_normal",
           "train.GradientDescentOptimizer", "train.MomentumOptimizer", "train.AdamOptimizer",
           "train.AdagradOptimizer", "train.AdadeltaOptimizer", "train.RMSPropOptimizer", "train.Saver",
           "layers.dense", "layers.conv2d", "layers.max_pooling2d", "layers.average_pooling2d",
           "layers.dropout", "layers.batch_normalization", "layers.conv2d_transpose", "nn.dropout"],
    "tf": ["random.normal", "random.uniform", "random.truncated_normal", "nn.dropout",
           "keras.initializers.RandomNormal", "keras.initializers.RandomUniform",
           "keras.initializers.TruncatedNormal", "keras.initializers.GlorotUniform",
           "keras.initializers.GlorotNormal", "keras.initializers.HeNormal",
           "keras.initializers.Constant", "keras.initializers.VarianceScaling",
           "keras.initializers.Orthogonal", "keras.optimizers.SGD", "keras.optimizers.Adam",
           "keras.optimizers.RMSprop", "keras.optimizers.Adagrad", "keras.layers.Dense",
           "keras.layers.Conv2D", "keras.layers.Conv2DTranspose", "keras.layers.MaxPooling2D",
           "keras.layers.Dropout", "keras.layers.BatchNormalization", "keras.layers.LSTM"],
}
# Keras-only arguments aicslib leaves out (regularizers, constraints, EMA, clipping, jit): the
# defaults of the arguments both frameworks have are what is compared.
KERAS_ONLY = ("kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
              "bias_constraint", "weight_decay", "clipnorm", "clipvalue", "global_clipnorm",
              "use_ema", "ema_momentum", "ema_overwrite_frequency", "jit_compile", "adaptive_epsilon",
              "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint",
              "synchronized", "recurrent_regularizer", "recurrent_constraint", "dropout",
              "recurrent_dropout", "stateful", "time_major", "unroll", "groups", "output_padding",
              "use_own_namescope_for_non_slot_vars", "synchronization", "aggregation",
              "renorm", "renorm_clipping", "renorm_momentum", "fused", "virtual_batch_size",
              "adjustment", "name", "dtype", "trainable", "reuse", "kwargs")


def _resolve(module, dotted):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _signature(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    params = []
    for p in inspect.signature(target).parameters.values():
        if p.name in ("self",) + KERAS_ONLY or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        default = "" if p.default is p.empty else "=" + _short(p.default)
        params.append(p.name + default)
    return "(" + ", ".join(params) + ")"


def _short(value):
    text = getattr(value, "name", None) if hasattr(value, "is_floating") else None
    if text:
        return text  # a DType: float32 in both
    if callable(value) and not isinstance(value, type):
        return type(value).__name__.lower()  # an initializer object: its kind
    return repr(value)


def _stats(a):
    import numpy as np
    a = np.asarray(a, np.float64)
    return f"mean={a.mean():+.2f} std={a.std():.3f} min={a.min():+.2f} max={a.max():+.2f}"


def report(backend):
    import numpy as np
    if backend == "tf":
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf2
    else:
        sys.path.insert(0, REPO_ROOT)
        import aicslib as tf2
    v1 = tf2.compat.v1
    lines = []
    for label, module in (("v1", v1), ("tf", tf2)):
        for name in SIGNATURES[label]:
            try:
                lines.append(f"signature {label}.{name}{_signature(_resolve(module, name))}")
            except AttributeError:
                lines.append(f"signature {label}.{name} MISSING")
    keras = tf2.keras
    tf2.random.set_seed(0)  # the same seed: equal draws wherever the generators agree
    for name in ("RandomNormal", "RandomUniform", "TruncatedNormal", "GlorotUniform", "GlorotNormal",
                 "HeNormal", "HeUniform", "LecunNormal", "LecunUniform", "VarianceScaling", "Orthogonal"):
        draw = getattr(keras.initializers, name)()((200, 300), dtype=tf2.float32)
        lines.append(f"draw keras.initializers.{name}() {_stats(draw)}")
    for name, layer, shape in (("Dense(300)", keras.layers.Dense(300), (None, 200)),
                               ("Conv2D(32, 3)", keras.layers.Conv2D(32, 3), (None, 28, 28, 16)),
                               ("LSTM(64)", keras.layers.LSTM(64), (None, 10, 32))):
        layer.build(shape)
        for w in layer.weights:
            lines.append(f"draw keras.layers.{name} {tuple(w.shape)} {_stats(w.numpy())}")
    w0, target, scale = (np.array(v, np.float32) for v in ([1.0, -2.0, 0.5], [0.3, 0.1, -0.2],
                                                           [1.0, 10.0, 0.1]))
    for name, make in (("SGD()", keras.optimizers.SGD), ("Adam()", keras.optimizers.Adam),
                       ("RMSprop()", keras.optimizers.RMSprop), ("Adagrad()", keras.optimizers.Adagrad)):
        w = tf2.Variable(w0)
        opt = make()
        for _ in range(5):
            with tf2.GradientTape() as tape:
                loss = tf2.reduce_sum(scale * (w - target) ** 2)
            opt.apply_gradients([(tape.gradient(loss, w), w)])
        lines.append(f"steps keras.optimizers.{name} {np.round(w.numpy(), 5).tolist()}")
    v1.disable_v2_behavior()
    optimizers = {"GradientDescentOptimizer(0.1)": lambda: v1.train.GradientDescentOptimizer(0.1),
                  "MomentumOptimizer(0.1, 0.9)": lambda: v1.train.MomentumOptimizer(0.1, 0.9),
                  "AdamOptimizer()": v1.train.AdamOptimizer, "AdagradOptimizer(0.1)":
                  lambda: v1.train.AdagradOptimizer(0.1), "AdadeltaOptimizer()": v1.train.AdadeltaOptimizer,
                  "RMSPropOptimizer(0.01)": lambda: v1.train.RMSPropOptimizer(0.01)}
    for name, make in optimizers.items():
        with v1.Graph().as_default():
            w = v1.Variable(w0)
            step = make().minimize(v1.reduce_sum(scale * (w - target) ** 2))
            with v1.Session() as sess:
                sess.run(v1.global_variables_initializer())
                for _ in range(5):
                    sess.run(step)
                lines.append(f"steps v1.train.{name} {np.round(sess.run(w), 5).tolist()}")
    with v1.Graph().as_default():
        x = v1.placeholder(v1.float32, [None, 200])
        v1.layers.dense(x, 300, name="dense")
        v1.get_variable("get_variable", [200, 300])
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for var in v1.global_variables():
                lines.append(f"draw v1 default {var.name} {_stats(sess.run(var))}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=["tf", "aicslib"], default="aicslib")
    ap.add_argument("--diff", action="store_true", help="run both frameworks and print the differences")
    args = ap.parse_args(argv)
    if not args.diff:
        print("\n".join(report(args.backend)))
        return 0
    outputs = {}
    for backend, python in (("tf", TF_PYTHON), ("aicslib", sys.executable)):
        proc = subprocess.run([python, os.path.abspath(__file__), "--backend", backend],
                              capture_output=True, text=True, check=True)
        outputs[backend] = proc.stdout.splitlines()
    diff = list(difflib.unified_diff(outputs["tf"], outputs["aicslib"], "tensorflow", "aicslib", n=0,
                                     lineterm=""))
    print("\n".join(diff) if diff else "no differences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
