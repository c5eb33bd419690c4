"""Run real TensorFlow programs written by others on aicslib and on TensorFlow, and compare.

Issue 10's headline target: programs written by others (TF 1.x MNIST tutorials, popular
tutorial repositories, TensorFlow's own guides) run on aicslib with only the import
swapped, with numbers matching TensorFlow. This script measures that.

The programs are NOT in this repository (they are others' code). The harness reads them
from git snapshots (the session's ``fetch`` tool puts them under ``/work/.mirror/OWNER+NAME/repo``)
or from single files saved under ``--files DIR/OWNER+NAME/PATH``; the manifest below
names each by repository, commit and path.

    .venv/bin/python tools/tf_corpus.py --mirrors /work/.mirror --files /tmp/tf_corpus_files
        [--only ID ...] [--backend both|aicslib|tf] [--ref-cache /tmp/tf_corpus_ref.json]
        [--table docs/tf_corpus_results.md]

How a program is run (each in its own subprocess, working directory a fresh temp folder):

- Import swap, by a ``sys.modules`` shim installed before the program runs; the program's
  text is never edited. TF1 programs: ``tensorflow`` is ``aicslib.compat.v1`` after
  ``disable_v2_behavior()`` (reference: ``tensorflow.compat.v1`` the same way, the official
  TF2 route). TF2 programs: ``tensorflow`` is ``aicslib`` (reference: ``tensorflow``).
  ``tensorflow.X.Y`` submodule imports resolve to ``aicslib.X.Y`` or to attributes.
- ``tensorflow.contrib``: TF2 has none. The shim maps exactly the renames TF's own upgrade
  script ``tf_upgrade_v2`` applies (``contrib.rnn.*`` -> ``compat.v1.nn.rnn_cell.*`` and
  ``compat.v1.nn.static_rnn``/``static_bidirectional_rnn``; ``contrib.layers.flatten`` ->
  ``compat.v1.layers.flatten``), for both frameworks alike. Other contrib modules are out
  of scope (listed in EXCLUDED).
- Data that programs would download: ``tensorflow.examples.tutorials.mnist.input_data``
  (gone from TF2) is a shim that reads ``data/mnist`` exactly as TF 1.x's ``mnist.py`` did
  (55000/5000/10000 split, images scaled to [0, 1], optional one-hot, the same
  ``next_batch`` shuffling) with NumPy seeded 0, identical for both frameworks. For the
  TensorFlow reference, ``tf.keras.datasets.mnist.load_data`` is patched to read
  ``data/mnist`` (aicslib must provide ``keras.datasets.mnist`` itself).
- Shorter training: a program's hyper-parameter assignments named in its manifest entry
  (``training_steps = 10000`` ...) get the listed value instead, by rewriting the parsed
  AST in memory before it is compiled; ``kw:NAME`` overrides a keyword argument in calls
  (``fit(epochs=5)``). Both frameworks get the same overrides.
- Notebooks (.ipynb): code cells joined in order; IPython lines (``!pip ...``, ``%magic``)
  dropped. ``MPLBACKEND=Agg`` so ``plt.show()`` returns.
- The reference needs ``/tmp/tfvenv`` (tensorflow-cpu 2.21 and tf-keras 2.21). TF1 programs
  and the TF 2.x-era tutorial notebooks run there with ``TF_USE_LEGACY_KERAS=1`` (tf-keras,
  which TF 2.21's ``compat.v1.nn.rnn_cell`` and ``compat.v1.layers`` require); TensorFlow's
  current guides run with Keras 3.

Comparison (``compare`` in the manifest): ``exact`` -- every number printed, in order,
equal within rtol 1e-4 (deterministic programs); ``final:KEY:BAND`` -- the last number on
the last output line containing KEY (case-insensitive), within an absolute BAND (trained
programs, whose random initialisations differ between frameworks); ``runs`` -- finishing
without error is all that can be compared (e.g. the printed numbers are random samples).
A program is PASS when it runs under aicslib and its numbers match; REF-FAIL when it does
not run under TensorFlow 2.21 either (left out of the percentage).
"""
import argparse
import ast
import concurrent.futures
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MNIST_DIR = os.path.join(REPO_ROOT, "data", "mnist")
TF_PYTHON = "/tmp/tfvenv/bin/python"
AICS_PYTHON = sys.executable

AYM = ("aymericdamien/TensorFlow-Examples", "6dcbe14649163814e72a22a999f20c5e247ce988")
DOCS = ("tensorflow/docs", None)  # commit filled in from the snapshot
MIG_SOFTMAX = ("miglopst/cs263_spring2018", "51d0e2c36edb66e7752453836123b6653c718bf1")
MIG_DEEP = ("miglopst/cs263_spring2018", "c3dd66a31950d54ecf201ad26429907840813df9")


def P(pid, source, path, api, compare="runs", overrides=None, legacy_keras=True):
    return dict(id=pid, repo=source[0], commit=source[1], path=path, api=api, compare=compare,
                overrides=overrides or {}, legacy_keras=legacy_keras)


V1 = "tensorflow_v1/examples/"
V2 = "tensorflow_v2/notebooks/"
MNIST_TUT = "tensorflow/examples/tutorials/mnist/"

# The corpus. Selection rule: every program of the sources below that trains or computes on
# MNIST-size data on a CPU with the TF1 graph API or the TF2 eager/Keras API, and whose only
# outside need is MNIST. Excluded (with the reason) in EXCLUDED.
PROGRAMS = [
    # TF 1.x tutorials from TensorFlow's own tree (a 2018 TF 1.x fork; its loop of 10 steps of 1000).
    P("tf1/mnist_softmax", MIG_SOFTMAX, MNIST_TUT + "mnist_softmax.py", "tf1", "final::0.03"),
    P("tf1/mnist_deep", MIG_DEEP, MNIST_TUT + "mnist_deep.py", "tf1", "final:test accuracy:0.08"),
    # aymericdamien/TensorFlow-Examples, TF1 (graph mode) examples.
    P("aym1/helloworld", AYM, V1 + "1_Introduction/helloworld.py", "tf1", "exact"),
    P("aym1/basic_operations", AYM, V1 + "1_Introduction/basic_operations.py", "tf1", "exact"),
    P("aym1/linear_regression", AYM, V1 + "2_BasicModels/linear_regression.py", "tf1", "exact",
      {"training_epochs": 100}),
    P("aym1/logistic_regression", AYM, V1 + "2_BasicModels/logistic_regression.py", "tf1",
      "final:accuracy:0.03", {"training_epochs": 2}),
    P("aym1/nearest_neighbor", AYM, V1 + "2_BasicModels/nearest_neighbor.py", "tf1",
      "exact", {}),
    P("aym1/autoencoder", AYM, V1 + "3_NeuralNetworks/autoencoder.py", "tf1", "final:loss:0.05",
      {"num_steps": 300, "display_step": 100}),
    P("aym1/bidirectional_rnn", AYM, V1 + "3_NeuralNetworks/bidirectional_rnn.py", "tf1",
      "final:accuracy:0.25", {"training_steps": 100, "display_step": 50}),
    P("aym1/convolutional_network_raw", AYM, V1 + "3_NeuralNetworks/convolutional_network_raw.py",
      "tf1", "final:accuracy:0.15", {"num_steps": 40, "display_step": 20}),
    P("aym1/dcgan", AYM, V1 + "3_NeuralNetworks/dcgan.py", "tf1", "runs",
      {"num_steps": 6, "batch_size": 32}),
    P("aym1/dynamic_rnn", AYM, V1 + "3_NeuralNetworks/dynamic_rnn.py", "tf1",
      "final:accuracy:0.25", {"training_steps": 200, "display_step": 100}),
    P("aym1/gan", AYM, V1 + "3_NeuralNetworks/gan.py", "tf1", "runs",
      {"num_steps": 200, "display_step": 100}),
    P("aym1/multilayer_perceptron", AYM, V1 + "3_NeuralNetworks/multilayer_perceptron.py", "tf1",
      "final:accuracy:0.05", {"training_epochs": 1}),
    P("aym1/neural_network_raw", AYM, V1 + "3_NeuralNetworks/neural_network_raw.py", "tf1",
      "final:accuracy:0.05", {"num_steps": 200, "display_step": 100}),
    P("aym1/recurrent_network", AYM, V1 + "3_NeuralNetworks/recurrent_network.py", "tf1",
      "final:accuracy:0.25", {"training_steps": 100, "display_step": 50}),
    # It prints its loss at step 1 and every 1000th step (a literal, not display_step): with a
    # short run only the untrained, random-initialisation loss is printed, so only running counts.
    P("aym1/variational_autoencoder", AYM, V1 + "3_NeuralNetworks/variational_autoencoder.py",
      "tf1", "runs", {"num_steps": 200, "n": 3}),
    P("aym1/save_restore_model", AYM, V1 + "4_Utils/save_restore_model.py", "tf1",
      "final:accuracy:0.05", {"training_epochs": 1}),
    P("aym1/tensorboard_basic", AYM, V1 + "4_Utils/tensorboard_basic.py", "tf1",
      "final:accuracy:0.03", {"training_epochs": 1}),
    P("aym1/tensorboard_advanced", AYM, V1 + "4_Utils/tensorboard_advanced.py", "tf1",
      "final:accuracy:0.05", {"training_epochs": 1}),
    P("aym1/tensorflow_dataset_api", AYM, V1 + "5_DataManagement/tensorflow_dataset_api.py",
      "tf1", "final:accuracy:0.2", {"num_steps": 30, "display_step": 10}),
    # aymericdamien/TensorFlow-Examples, TF2 notebooks (code cells).
    P("aym2/helloworld", AYM, V2 + "1_Introduction/helloworld.ipynb", "tf2", "exact"),
    P("aym2/basic_operations", AYM, V2 + "1_Introduction/basic_operations.ipynb", "tf2", "exact"),
    P("aym2/linear_regression", AYM, V2 + "2_BasicModels/linear_regression.ipynb", "tf2", "exact",
      {"training_steps": 200}),
    P("aym2/logistic_regression", AYM, V2 + "2_BasicModels/logistic_regression.ipynb", "tf2",
      "final:accuracy:0.03", {"training_steps": 300}),
    P("aym2/autoencoder", AYM, V2 + "3_NeuralNetworks/autoencoder.ipynb", "tf2", "final:loss:0.05",
      {"training_steps": 300, "display_step": 100}),
    P("aym2/bidirectional_rnn", AYM, V2 + "3_NeuralNetworks/bidirectional_rnn.ipynb", "tf2",
      "final:accuracy:0.25", {"training_steps": 60, "display_step": 30}),
    P("aym2/convolutional_network", AYM, V2 + "3_NeuralNetworks/convolutional_network.ipynb",
      "tf2", "final:accuracy:0.15", {"training_steps": 40, "display_step": 20}),
    P("aym2/convolutional_network_raw", AYM, V2 + "3_NeuralNetworks/convolutional_network_raw.ipynb",
      "tf2", "final:accuracy:0.15", {"training_steps": 40, "display_step": 20}),
    P("aym2/dcgan", AYM, V2 + "3_NeuralNetworks/dcgan.ipynb", "tf2", "runs",
      {"training_steps": 6, "display_step": 3, "batch_size": 32}),
    P("aym2/dynamic_rnn", AYM, V2 + "3_NeuralNetworks/dynamic_rnn.ipynb", "tf2",
      "final:accuracy:0.25", {"training_steps": 200, "display_step": 100}),
    P("aym2/neural_network", AYM, V2 + "3_NeuralNetworks/neural_network.ipynb", "tf2",
      "final:accuracy:0.05", {"training_steps": 300, "display_step": 100}),
    P("aym2/neural_network_raw", AYM, V2 + "3_NeuralNetworks/neural_network_raw.ipynb", "tf2",
      "final:accuracy:0.05", {"training_steps": 300, "display_step": 100}),
    P("aym2/recurrent_network", AYM, V2 + "3_NeuralNetworks/recurrent_network.ipynb", "tf2",
      "final:accuracy:0.25", {"training_steps": 60, "display_step": 30}),
    P("aym2/build_custom_layers", AYM, V2 + "4_Utils/build_custom_layers.ipynb", "tf2",
      "final:accuracy:0.05", {"training_steps": 200, "display_step": 100}),
    P("aym2/save_restore_model", AYM, V2 + "4_Utils/save_restore_model.ipynb", "tf2",
      "final:accuracy:0.05", {"training_steps": 200, "display_step": 100}),
    P("aym2/tensorboard", AYM, V2 + "4_Utils/tensorboard.ipynb", "tf2",
      "final:accuracy:0.05", {"training_steps": 200, "display_step": 100}),
    # TensorFlow's own guides (tensorflow/docs, TF 2.21 era, Keras 3): whole notebooks, code
    # cells in order. Their printed values are mostly random draws and object reprs, so only
    # running to the end unmodified is compared.
    P("docs/guide/basics", DOCS, "site/en/guide/basics.ipynb", "tf2", "runs", legacy_keras=False),
    P("docs/guide/tensor", DOCS, "site/en/guide/tensor.ipynb", "tf2", "runs", legacy_keras=False),
    P("docs/guide/variable", DOCS, "site/en/guide/variable.ipynb", "tf2", "runs", legacy_keras=False),
    P("docs/guide/autodiff", DOCS, "site/en/guide/autodiff.ipynb", "tf2", "runs", legacy_keras=False),
    P("docs/guide/intro_to_graphs", DOCS, "site/en/guide/intro_to_graphs.ipynb", "tf2", "runs",
      legacy_keras=False),
    P("docs/guide/intro_to_modules", DOCS, "site/en/guide/intro_to_modules.ipynb", "tf2", "runs",
      legacy_keras=False),
    # These two call Keras-2 APIs that Keras 3 rejects (save_weights without .weights.h5,
    # add_weight('kernel', ...) positionally): they run on TF 2.21 with tf-keras.
    P("docs/guide/basic_training_loops", DOCS, "site/en/guide/basic_training_loops.ipynb", "tf2",
      "runs", {"kw:epochs": 2}),
    P("docs/tutorials/customization/basics", DOCS, "site/en/tutorials/customization/basics.ipynb",
      "tf2", "runs", legacy_keras=False),
    P("docs/tutorials/customization/custom_layers", DOCS,
      "site/en/tutorials/customization/custom_layers.ipynb", "tf2", "runs"),
    P("docs/tutorials/quickstart/beginner", DOCS, "site/en/tutorials/quickstart/beginner.ipynb",
      "tf2", "final:loss:0.05", {"kw:epochs": 1}, legacy_keras=False),
    # It prints its accuracy in percent (f"{test_accuracy.result() * 100:0.2f}"): a band of 5
    # points is the 0.05 of the other programs.
    P("docs/tutorials/quickstart/advanced", DOCS, "site/en/tutorials/quickstart/advanced.ipynb",
      "tf2", "final:accuracy:5", {"EPOCHS": 1}, legacy_keras=False),
]

EXCLUDED = [
    (AYM, V1 + "1_Introduction/basic_eager_api.py", "tf.contrib.eager (removed in TF2; no tf_upgrade_v2 mapping)"),
    (AYM, V1 + "2_BasicModels/linear_regression_eager_api.py", "tf.contrib.eager.implicit_gradients (removed in TF2)"),
    (AYM, V1 + "2_BasicModels/logistic_regression_eager_api.py",
     "tf.contrib.eager.implicit_gradients (removed in TF2)"),
    (AYM, V1 + "3_NeuralNetworks/neural_network_eager_api.py", "tf.contrib.eager.implicit_gradients (removed in TF2)"),
    (AYM, V1 + "2_BasicModels/gradient_boosted_decision_tree.py", "tf.contrib.boosted_trees + tf.estimator"),
    (AYM, V1 + "2_BasicModels/kmeans.py", "tf.contrib.factorization.KMeans"),
    (AYM, V1 + "2_BasicModels/random_forest.py", "tf.contrib.tensor_forest"),
    (AYM, V1 + "2_BasicModels/word2vec.py", "downloads the text8 corpus (100 MB)"),
    (AYM, V1 + "3_NeuralNetworks/convolutional_network.py", "tf.estimator"),
    (AYM, V1 + "3_NeuralNetworks/neural_network.py", "tf.estimator"),
    (AYM, V1 + "5_DataManagement/build_an_image_dataset.py", "needs a user-supplied image folder"),
    (AYM, V1 + "6_MultiGPU/multigpu_basics.py", "GPUs"),
    (AYM, V1 + "6_MultiGPU/multigpu_cnn.py", "GPUs"),
    (AYM, V2 + "0_Prerequisite/ml_introduction.ipynb", "no code"),
    (AYM, V2 + "0_Prerequisite/mnist_dataset_intro.ipynb", "no TensorFlow computation (prints dataset shapes)"),
    (AYM, V2 + "2_BasicModels/gradient_boosted_trees.ipynb", "tf.estimator + Boston housing download"),
    (AYM, V2 + "2_BasicModels/word2vec.ipynb", "downloads the text8 corpus (100 MB)"),
    (AYM, V2 + "5_DataManagement/image_transformation.ipynb", "downloads images (requests)"),
    (AYM, V2 + "5_DataManagement/load_data.ipynb", "downloads a data set (requests)"),
    (AYM, V2 + "5_DataManagement/tfrecords.ipynb", "downloads the Titanic CSV (requests)"),
    (AYM, V2 + "6_Hardware/multigpu_training.ipynb", "GPUs + CIFAR-10 download"),
    (AYM, "tensorflow_v1/notebooks/*", "the same programs as tensorflow_v1/examples"),
    (AYM, "examples/*, notebooks/*", "the same programs as tensorflow_v1/ (older copy)"),
    (DOCS, "site/en/guide/*: data, checkpoint, saved_model, function, ragged/sparse tensors, "
           "tf_numpy, mixed_precision, random_numbers, tensor_slicing, advanced_autodiff ...",
     "not yet measured (time box); the guides above were picked as the core TF2 tour"),
    (DOCS, "site/en/guide/*: distributed_training, dtensor, gpu, tpu, estimator, migrate/*, jax2tf",
     "multi-device, estimator or migration material (out of scope)"),
]


# ---------------------------------------------------------------------------------------
# Reading the programs
# ---------------------------------------------------------------------------------------

def mirror_git_dir(mirrors, repo):
    return os.path.join(mirrors, repo.replace("/", "+"), "repo")


def read_program(prog, mirrors, files):
    """The program's text (code cells joined for a notebook) and the commit it came from."""
    commit = prog["commit"]
    local = os.path.join(files or "", prog["repo"].replace("/", "+"), prog["path"])
    if files and os.path.exists(local):
        with open(local, encoding="utf-8") as f:
            text = f.read()
    else:
        git_dir = mirror_git_dir(mirrors, prog["repo"])
        rev = commit or "HEAD"
        text = subprocess.run(["git", "--git-dir", git_dir, "show", f"{rev}:{prog['path']}"],
                              check=True, capture_output=True, text=True).stdout
        if commit is None:
            commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], check=True,
                                    capture_output=True, text=True).stdout.strip()
    if prog["path"].endswith(".ipynb"):
        text = notebook_code(text)
    return text, commit


def notebook_code(nb_json):
    cells = json.loads(nb_json)["cells"]
    out = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith(("!", "%"))]
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------
# The child process: shims, then the program
# ---------------------------------------------------------------------------------------

def _override_ast(source, overrides, filename):
    names = {k: v for k, v in overrides.items() if not k.startswith("kw:")}
    keywords = {k[3:]: v for k, v in overrides.items() if k.startswith("kw:")}

    class Override(ast.NodeTransformer):
        def visit_Assign(self, node):
            self.generic_visit(node)
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id in names:
                node.value = ast.copy_location(ast.Constant(names[node.targets[0].id]), node.value)
            return node

        def visit_keyword(self, node):
            self.generic_visit(node)
            if node.arg in keywords:
                node.value = ast.copy_location(ast.Constant(keywords[node.arg]), node.value)
            return node

    tree = ast.parse(source, filename)
    tree = ast.fix_missing_locations(Override().visit(tree))
    return compile(tree, filename, "exec")


def _read_idx(name):
    import numpy as np
    with gzip.open(os.path.join(MNIST_DIR, name + ".gz"), "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def _make_input_data_module(types):
    """TF 1.x's tensorflow/examples/tutorials/mnist/input_data.py, reading data/mnist."""
    import numpy as np
    mod = types.ModuleType("tensorflow.examples.tutorials.mnist.input_data")

    class DataSet:
        def __init__(self, images, labels, reshape=True):
            self._num_examples = images.shape[0]
            if reshape:
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            self._images = images.astype(np.float32) * (1.0 / 255.0)
            self._labels = labels
            self._epochs_completed = 0
            self._index_in_epoch = 0

        images = property(lambda self: self._images)
        labels = property(lambda self: self._labels)
        num_examples = property(lambda self: self._num_examples)
        epochs_completed = property(lambda self: self._epochs_completed)

        def next_batch(self, batch_size, fake_data=False, shuffle=True):
            start = self._index_in_epoch
            if self._epochs_completed == 0 and start == 0 and shuffle:
                perm0 = np.arange(self._num_examples)
                np.random.shuffle(perm0)
                self._images, self._labels = self.images[perm0], self.labels[perm0]
            if start + batch_size > self._num_examples:
                self._epochs_completed += 1
                rest = self._num_examples - start
                images_rest, labels_rest = self._images[start:], self._labels[start:]
                if shuffle:
                    perm = np.arange(self._num_examples)
                    np.random.shuffle(perm)
                    self._images, self._labels = self.images[perm], self.labels[perm]
                self._index_in_epoch = batch_size - rest
                end = self._index_in_epoch
                return (np.concatenate((images_rest, self._images[:end]), axis=0),
                        np.concatenate((labels_rest, self._labels[:end]), axis=0))
            self._index_in_epoch += batch_size
            return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]

    class Datasets:
        def __init__(self, train, validation, test):
            self.train, self.validation, self.test = train, validation, test

    def read_data_sets(train_dir=None, fake_data=False, one_hot=False, dtype=None, reshape=True,
                       validation_size=5000, seed=None, source_url=None):
        np.random.seed(0)  # TF seeded NumPy from the graph seed (None: random); fixed here
        x_tr, y_tr = _read_idx("train-images-idx3-ubyte"), _read_idx("train-labels-idx1-ubyte")
        x_te, y_te = _read_idx("t10k-images-idx3-ubyte"), _read_idx("t10k-labels-idx1-ubyte")
        if one_hot:
            y_tr, y_te = np.eye(10)[y_tr], np.eye(10)[y_te]
        return Datasets(DataSet(x_tr[validation_size:], y_tr[validation_size:], reshape),
                        DataSet(x_tr[:validation_size], y_tr[:validation_size], reshape),
                        DataSet(x_te, y_te, reshape))

    mod.read_data_sets = read_data_sets
    mod.DataSet = DataSet
    return mod


def _keras_mnist_load_data(path="mnist.npz"):
    x_tr, y_tr = _read_idx("train-images-idx3-ubyte"), _read_idx("train-labels-idx1-ubyte")
    x_te, y_te = _read_idx("t10k-images-idx3-ubyte"), _read_idx("t10k-labels-idx1-ubyte")
    return (x_tr.copy(), y_tr.copy()), (x_te.copy(), y_te.copy())


def _install_shims(backend, api):
    import importlib
    import importlib.abc
    import importlib.util
    import types

    if backend == "aicslib":
        sys.path.insert(0, os.environ.get("TF_CORPUS_AICSLIB_ROOT", REPO_ROOT))
        import aicslib as root
        lib_prefix = "aicslib"
    else:
        import tensorflow as root
        lib_prefix = "tensorflow"
        for modname in ("tf_keras.datasets.mnist", "keras.datasets.mnist",
                        "keras.src.datasets.mnist", "tensorflow.keras.datasets.mnist"):
            try:
                importlib.import_module(modname).load_data = _keras_mnist_load_data
            except Exception:
                pass
    if api == "tf1":
        tf = importlib.import_module(lib_prefix + ".compat.v1")
        tf.disable_v2_behavior()
    else:
        tf = root

    def rnn_contrib():  # tf_upgrade_v2: contrib.rnn.X -> compat.v1.nn.rnn_cell.X / compat.v1.nn.X
        m = types.ModuleType("tensorflow.contrib.rnn")

        def getattr_(name):
            if name in ("static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn"):
                return getattr(tf.nn, name)
            return getattr(tf.nn.rnn_cell, name)
        m.__getattr__ = getattr_
        return m

    layers_contrib = types.ModuleType("tensorflow.contrib.layers")
    layers_contrib.__getattr__ = lambda name: {"flatten": tf.layers.flatten}[name]
    contrib = types.ModuleType("tensorflow.contrib")
    contrib.__path__ = []
    contrib.rnn, contrib.layers = rnn_contrib(), layers_contrib
    packages = {}
    for name in ("tensorflow.examples", "tensorflow.examples.tutorials",
                 "tensorflow.examples.tutorials.mnist"):
        packages[name] = types.ModuleType(name)
        packages[name].__path__ = []
    packages["tensorflow.examples.tutorials.mnist.input_data"] = _make_input_data_module(types)
    packages["tensorflow.contrib"] = contrib
    packages["tensorflow.contrib.rnn"] = contrib.rnn
    packages["tensorflow.contrib.layers"] = contrib.layers
    try:
        tf.contrib = contrib
    except AttributeError:
        pass

    class Loader(importlib.abc.Loader):
        def __init__(self, module):
            self.module = module

        def create_module(self, spec):
            return self.module

        def exec_module(self, module):
            pass

    class TensorflowFinder(importlib.abc.MetaPathFinder):
        """``tensorflow`` and ``tensorflow.X.Y`` resolve to the chosen framework's modules."""

        def find_spec(self, fullname, path=None, target=None):
            if backend == "aicslib" and (fullname == "keras" or fullname.startswith("keras.")):
                # Keras 3 programs `import keras` beside TF: the same framework's Keras here.
                fullname = "tensorflow." + fullname
                module = self.resolve(fullname)
                return None if module is None else importlib.util.spec_from_loader(
                    fullname[len("tensorflow."):], Loader(module))
            if fullname != "tensorflow" and not fullname.startswith("tensorflow."):
                return None
            module = self.resolve(fullname)
            if module is None:
                return None
            spec = importlib.util.spec_from_loader(fullname, Loader(module))
            return spec

        def resolve(self, fullname):
            if fullname in packages:
                return packages[fullname]
            if fullname == "tensorflow":
                return tf
            rest = fullname[len("tensorflow."):]
            if backend == "aicslib" or api == "tf1":
                base = "aicslib" if backend == "aicslib" else "tensorflow.compat.v1"
                prefix = base + (".compat.v1." if api == "tf1" and backend == "aicslib" else ".")
                obj = tf
                for part in rest.split("."):
                    obj = getattr(obj, part, None)
                    if obj is None:
                        break
                if isinstance(obj, types.ModuleType):
                    return obj
                try:
                    return importlib.import_module(prefix + rest)
                except ImportError:
                    return None
            return None  # real TF2: its own import machinery

    sys.meta_path.insert(0, TensorflowFinder())
    if backend == "aicslib" or api == "tf1":
        sys.modules["tensorflow"] = tf
    sys.modules.update(packages)
    return tf


def child_main(backend, api, program_path, overrides):
    import random
    import numpy as np
    random.seed(0)
    np.random.seed(0)
    _install_shims(backend, api)
    with open(program_path, encoding="utf-8") as f:
        source = f.read()
    code = _override_ast(source, overrides, program_path)
    sys.argv = [program_path]
    globs = {"__name__": "__main__", "__file__": program_path}
    exec(code, globs)


# ---------------------------------------------------------------------------------------
# The parent: run, compare, tabulate
# ---------------------------------------------------------------------------------------

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def run_one(prog, backend, source, timeout):
    workdir = tempfile.mkdtemp(prefix="tfcorpus_")
    try:
        path = os.path.join(workdir, os.path.basename(prog["path"]).replace(".ipynb", ".py"))
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        # One BLAS/Eigen thread per program: two jobs share two cores, and a 2-thread OpenBLAS
        # spinning for a busy core made a 100 MFLOP GEMM 6x slower (same setting for both).
        env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0", TF_CPP_MIN_LOG_LEVEL="2",
                   CUDA_VISIBLE_DEVICES="", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1")
        if backend == "tf" and prog["legacy_keras"]:
            env["TF_USE_LEGACY_KERAS"] = "1"
        python = AICS_PYTHON if backend == "aicslib" else TF_PYTHON
        cmd = [python, os.path.abspath(__file__), "--child", backend, prog["api"], path,
               json.dumps(prog["overrides"])]
        t0 = time.time()
        try:
            proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True,
                                  timeout=timeout)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = -9, (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), \
                f"timeout after {timeout} s"
        return dict(rc=rc, stdout=out, error=last_error(err) if rc else "", seconds=round(time.time() - t0, 1))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def last_error(stderr):
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[A-Za-z_.]*(Error|Exception|Exit)\b", ln) or "Error:" in ln[:80]:
            return ln.strip()[:300]
    return (lines[-1] if lines else "").strip()[:300]


def numbers(text):
    return [float(x) for x in NUMBER.findall(text)]


def final_number(text, key):
    lines = [ln for ln in text.splitlines() if key.lower() in ln.lower() and NUMBER.search(ln)]
    return numbers(lines[-1])[-1] if lines else None


def compare(prog, ours, ref):
    """(verdict, detail) for an aicslib run against the TensorFlow run."""
    if ref is not None and ours["rc"] != 0 and ref["rc"] != 0 and ours["error"] == ref["error"] \
            and prog["compare"] != "exact" and "tensorflow" not in ours["error"].lower():
        # The program itself breaks after its TensorFlow part (e.g. NumPy 2 removed an argument
        # its plotting code uses): the same error in both frameworks; compare what came before.
        verdict, detail = compare(prog, dict(ours, rc=0), dict(ref, rc=0))
        if verdict != "PASS":  # it broke before printing what would be compared
            return "REF-FAIL", f"fails the same way on TensorFlow 2.21: {ours['error']}"
        return verdict, f"{detail}; then the same non-TF error in both: {ours['error']}"
    if ours["rc"] != 0:
        if ref is not None and ref["rc"] in (-9, 124, 137):
            return "REF-FAIL", (f"TensorFlow 2.21 did not finish within the time limit; aicslib: "
                                f"{ours['error']}")
        return "FAIL", ours["error"]
    if ref is None:
        return "RAN", "no TensorFlow reference run"
    if ref["rc"] in (-9, 124, 137):
        return "REF-FAIL", f"TensorFlow 2.21 did not finish within the time limit ({ref['error']})"
    if ref["rc"] != 0:
        return "REF-FAIL", "TensorFlow 2.21: " + ref["error"]
    mode = prog["compare"]
    if mode == "runs":
        return "PASS", "finished (printed values are random samples)"
    if mode == "exact":
        import math
        a, b = numbers(ours["stdout"]), numbers(ref["stdout"])
        if len(a) != len(b):
            return "MISMATCH", f"{len(a)} numbers printed, TensorFlow printed {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            if not (math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-5) or (x != x and y != y)):
                return "MISMATCH", f"number {i}: {x} vs TensorFlow {y}"
        return "PASS", f"all {len(a)} printed numbers equal TensorFlow's"
    _, key, band = mode.split(":")
    a, b = final_number(ours["stdout"], key), final_number(ref["stdout"], key)
    if a is None or b is None:
        return "MISMATCH", f"no line with {key!r}: aicslib {a}, TensorFlow {b}"
    if abs(a - b) <= float(band):
        return "PASS", f"{key or 'last'} {a:.4g} vs TensorFlow {b:.4g} (band {band})"
    return "MISMATCH", f"{key or 'last'} {a:.4g} vs TensorFlow {b:.4g} (band {band})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--files", default=None)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--backend", choices=["both", "aicslib", "tf", "none"], default="both",
                    help="which framework(s) to run; 'none' only tabulates the caches")
    ap.add_argument("--ref-cache", default=None, help="JSON of TensorFlow runs, reused when present")
    ap.add_argument("--ours-cache", default=None, help="JSON of aicslib runs: merged into, "
                    "and read back with --backend none")
    ap.add_argument("--before-cache", default=None,
                    help="JSON of aicslib runs of an older checkout: adds a 'before' column")
    ap.add_argument("--table", default=None, help="write the Markdown results table here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--show", action="store_true", help="print each program's output")
    ap.add_argument("--aicslib-root", default=None,
                    help="run another checkout's aicslib (e.g. an older commit, for a before figure)")
    args = ap.parse_args(argv)

    if args.aicslib_root:
        os.environ["TF_CORPUS_AICSLIB_ROOT"] = os.path.abspath(args.aicslib_root)
    progs = [p for p in PROGRAMS if not args.only or any(p["id"].startswith(o) for o in args.only)]
    sources = {}
    for p in progs:
        sources[p["id"]], p["resolved_commit"] = read_program(p, args.mirrors, args.files)
    refs = {}
    if args.ref_cache and os.path.exists(args.ref_cache):
        with open(args.ref_cache) as f:
            refs = json.load(f)
    have_tf = os.path.exists(TF_PYTHON)
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for p in progs:
            if args.backend in ("both", "aicslib"):
                jobs.append((p, "aicslib", pool.submit(run_one, p, "aicslib", sources[p["id"]], args.timeout)))
            if args.backend in ("both", "tf") and have_tf and (p["id"] not in refs or args.backend == "tf"):
                jobs.append((p, "tf", pool.submit(run_one, p, "tf", sources[p["id"]], args.timeout)))
        ours = {}
        if args.ours_cache and os.path.exists(args.ours_cache) and args.backend in ("none", "tf"):
            with open(args.ours_cache) as f:
                ours = json.load(f)
        for p, backend, fut in jobs:
            r = fut.result()
            if backend == "tf":
                refs[p["id"]] = r
            else:
                ours[p["id"]] = r
            if args.show:
                print(f"----- {p['id']} [{backend}] rc={r['rc']} {r['seconds']} s\n{r['stdout'][-3000:]}\n{r['error']}")
    if args.ref_cache and have_tf and args.backend in ("both", "tf"):
        with open(args.ref_cache, "w") as f:
            json.dump(refs, f, indent=1)
    if args.ours_cache and args.backend in ("both", "aicslib"):
        merged = {}
        if os.path.exists(args.ours_cache):
            with open(args.ours_cache) as f:
                merged = json.load(f)
        merged.update(ours)
        with open(args.ours_cache, "w") as f:
            json.dump(merged, f, indent=1)
    before = {}
    if args.before_cache and os.path.exists(args.before_cache):
        with open(args.before_cache) as f:
            before = json.load(f)
    rows = []
    for p in progs:
        if p["id"] not in ours:
            continue
        verdict, detail = compare(p, ours[p["id"]], refs.get(p["id"]))
        was = compare(p, before[p["id"]], refs.get(p["id"]))[0] if p["id"] in before else ""
        rows.append((p, verdict, detail, ours[p["id"]]["seconds"], refs.get(p["id"], {}).get("seconds"), was))
        print(f"{verdict:9s} {p['id']:36s} {detail}")
    counted = [r for r in rows if r[1] != "REF-FAIL"]
    passed = sum(r[1] == "PASS" for r in counted)
    passed_before = sum(r[5] == "PASS" for r in counted)
    if counted:
        print(f"\n{passed}/{len(counted)} programs pass ({100.0 * passed / len(counted):.0f}%); "
              f"{len(rows) - len(counted)} do not run on TensorFlow 2.21 either"
              + (f"; before: {passed_before}/{len(counted)}" if before else ""))
    if args.table:
        write_table(args.table, rows, passed, len(counted), passed_before if before else None)
    return 0


def write_table(path, rows, passed, counted, passed_before=None):
    lines = ["# Real TensorFlow programs on aicslib: results",
             "",
             "Written by `tools/tf_corpus.py --table` (see its docstring for how programs are run and",
             "compared; the programs themselves are others' code and are not in this repository).",
             "",
             f"**{passed}/{counted} pass ({100.0 * passed / max(counted, 1):.0f}%)**"
             + (f"; before this work: {passed_before}/{counted} "
                f"({100.0 * passed_before / max(counted, 1):.0f}%)" if passed_before is not None else "")
             + ". REF-FAIL rows (the program does not run on TensorFlow 2.21 either) are not counted.",
             "",
             "| program | source (repo@commit: path) | API | result | before | detail | s (aicslib / TF) |",
             "|---|---|---|---|---|---|---|"]
    for p, verdict, detail, s_ours, s_ref, was in rows:
        src = f"{p['repo']}@{p['resolved_commit'][:10]}: `{p['path']}`"
        ov = ", ".join(f"{k}={v}" for k, v in p["overrides"].items())
        detail = detail.replace("|", "\\|") + (f" [overrides: {ov}]" if ov else "")
        lines.append(f"| {p['id']} | {src} | {p['api']} | {verdict} | {was} | {detail} | {s_ours} / {s_ref} |")
    lines.append("")
    lines.append("Excluded (selection rule in tools/tf_corpus.py):")
    lines.append("")
    for (repo, commit), path_, why in EXCLUDED:
        lines.append(f"- {repo}: `{path_}`: {why}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5]))
    else:
        sys.exit(main())
