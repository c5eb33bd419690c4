"""VGG19 (Simonyan & Zisserman 2014, configuration E), built as chapter 3's lecture builds it.

The lecture's driving example writes the network one layer at a time,
``net['conv1_1'] = build_net('conv', net['input'], weights_of('conv1_1'))``,
with each conv layer being ``relu(conv2d(x, W, stride 1, SAME) + b)`` and each
pool layer a 2x2 window with stride 2. This module keeps that structure and
those names (``conv1_1`` ... ``conv5_4``, ``pool1`` ... ``pool5``, optional
``fc6``/``fc7``/``fc8`` and ``prob``); a ``convX_Y`` entry is the output
*after* its ReLU, as in the lecture.

Layout: images NHWC, filters HWIO, fc weights ``(in, out)`` with ``fc6``
reading ``pool5`` flattened in NHWC order (7x7x512 = 25088 for 224x224
input) -- the layout of the widely circulated ``vgg19.npy``.

Weights (a dict ``name -> (W, b)`` of float32 NumPy arrays) come from

* :func:`load_weights` -- ``vgg19.npy`` as the lecture's code reads it
  (``np.load(path, allow_pickle=True).item()``: a pickled dict), ``.npz``
  (arrays ``conv1_1/W``, ``conv1_1/b``, ... or ``conv1_1_W``/``conv1_1_b``),
  or MatConvNet's ``imagenet-vgg-verydeep-19.mat`` through SciPy;
* :func:`random_weights` -- He-normal initialisation when no weights file is
  available (nothing can be downloaded here). Random multi-scale features still
  capture texture statistics (Ustyuzhaninov, Brendel, Gatys & Bethge 2017,
  "What does it take to generate natural textures?"), so style transfer works
  with them, but the results are weaker than with ImageNet-trained weights:
  the features do not encode objects, so content is kept as edges and colour
  blobs rather than as recognisable structure.

The ImageNet weights expect Caffe-style input: BGR, 0..255, the ImageNet mean
subtracted -- :func:`preprocess_input` (``keras.applications.vgg19``).

Published sizes (checked by the tests): 20,024,384 parameters in the 16 conv
layers, 143,667,240 with the three fc layers.
"""
import collections
import os
import zipfile

import numpy as np

from ..framework.file_io import atomic_write
# keras.applications.vgg19.preprocess_input: RGB -> BGR, subtract the ImageNet mean (caffe mode,
# pixels in [0, 255], no scaling). Re-exported, the same function, so the two cannot drift apart.
from ..keras.applications import imagenet_utils
from ..keras.applications.vgg19 import preprocess_input

__all__ = ["CONV_LAYERS", "FC_LAYERS", "LAYER_NAMES", "WEIGHT_SHAPES", "WeightsError",
           "build_vgg19", "check_weights", "conv_layer", "count_params", "fc_layer",
           "load_weights", "pool_layer", "preprocess_input", "random_weights", "save_weights",
           "vgg19_features", "deprocess_image"]

# (name, input channels, output channels) of the 16 3x3 conv layers, in order; a pool
# layer follows the last conv of each block.
_CONV_SPEC = (
    ("conv1_1", 3, 64), ("conv1_2", 64, 64),
    ("conv2_1", 64, 128), ("conv2_2", 128, 128),
    ("conv3_1", 128, 256), ("conv3_2", 256, 256), ("conv3_3", 256, 256), ("conv3_4", 256, 256),
    ("conv4_1", 256, 512), ("conv4_2", 512, 512), ("conv4_3", 512, 512), ("conv4_4", 512, 512),
    ("conv5_1", 512, 512), ("conv5_2", 512, 512), ("conv5_3", 512, 512), ("conv5_4", 512, 512),
)
_FC_SPEC = (("fc6", 7 * 7 * 512, 4096), ("fc7", 4096, 4096), ("fc8", 4096, 1000))
_BLOCK_ENDS = {"conv1_2": "pool1", "conv2_2": "pool2", "conv3_4": "pool3", "conv4_4": "pool4",
               "conv5_4": "pool5"}

CONV_LAYERS = tuple(name for name, _, _ in _CONV_SPEC)
FC_LAYERS = tuple(name for name, _, _ in _FC_SPEC)
# Every layer in the order the lecture's build_vgg19 creates them.
LAYER_NAMES = tuple(n for conv in CONV_LAYERS for n in ((conv, _BLOCK_ENDS[conv])
                                                         if conv in _BLOCK_ENDS else (conv,)))
WEIGHT_SHAPES = collections.OrderedDict(
    [(name, ((3, 3, cin, cout), (cout,))) for name, cin, cout in _CONV_SPEC]
    + [(name, ((fin, fout), (fout,))) for name, fin, fout in _FC_SPEC])

# ImageNet mean per channel, B, G, R (the Caffe model's, as keras.applications uses).
IMAGENET_MEAN_BGR = np.array(imagenet_utils.CAFFE_MEAN, np.float32)


class WeightsError(ValueError):
    """A weights file or dict that does not fit VGG19. The message names the file and layer."""


# --------------------------------------------------------------------------
# Weights: sizes, checks, random initialisation, files

def count_params(include_top=False):
    """Number of parameters: 20,024,384 for the conv part, 143,667,240 with fc6-fc8."""
    names = CONV_LAYERS + (FC_LAYERS if include_top else ())
    return sum(int(np.prod(w)) + int(np.prod(b)) for w, b in (WEIGHT_SHAPES[n] for n in names))


def check_weights(weights, include_top=False, source="weights"):
    """Validates ``weights`` (``name -> (W, b)``) and returns them as float32 arrays.

    Raises:
      WeightsError: a layer is missing, is not a (W, b) pair, or has a wrong
        shape; the message names ``source`` (the file) and the layer.
    """
    names = CONV_LAYERS + (FC_LAYERS if include_top else ())
    if not isinstance(weights, dict):
        raise WeightsError(f"{source}: expected a dict mapping layer names to (W, b), "
                           f"got {type(weights).__name__}")
    missing = [n for n in names if n not in weights]
    if missing:
        hint = (" (pass include_top=False to build only the conv part)"
                if include_top and all(n in FC_LAYERS for n in missing) else "")
        raise WeightsError(f"{source}: layer {missing[0]!r} is missing"
                           f"{' (also ' + ', '.join(map(repr, missing[1:])) + ')' if missing[1:] else ''}"
                           f"{hint}; VGG19 needs {', '.join(names)}")
    out = collections.OrderedDict()
    for name in names:
        pair = weights[name]
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise WeightsError(f"{source}: layer {name!r} must be a pair (W, b), "
                               f"got {type(pair).__name__}"
                               + (f" of length {len(pair)}" if hasattr(pair, "__len__") else ""))
        arrays = []
        for what, value, expected in zip(("W", "b"), pair, WEIGHT_SHAPES[name]):
            arr = np.asarray(value)
            if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
                raise WeightsError(f"{source}: layer {name!r} {what} has dtype {arr.dtype}, "
                                   f"expected a float array of shape {expected}")
            if arr.shape != expected:
                raise WeightsError(f"{source}: layer {name!r} {what} has shape {arr.shape}, "
                                   f"expected {expected}")
            arrays.append(np.ascontiguousarray(arr, dtype=np.float32))
        out[name] = tuple(arrays)
    return out


def random_weights(seed=0, include_top=False):
    """He-normal weights for VGG19, zero biases: ``W ~ N(0, 2 / fan_in)``.

    ``fan_in = 3 * 3 * in_channels`` for a conv layer (``in`` for an fc layer).
    With ReLU after every layer this keeps the mean square activation about
    constant from layer to layer (He et al. 2015): a ReLU halves the second
    moment and the factor 2 restores it. So activations stay on the input's
    scale through all 16 conv layers instead of vanishing or exploding
    (the tests check the RMS per layer). Max pooling raises it a little at
    each block (it keeps the largest of four); average pooling lowers it.

    The same ``seed`` gives the same weights (NumPy's ``default_rng``).
    """
    rng = np.random.default_rng(seed)
    names = CONV_LAYERS + (FC_LAYERS if include_top else ())
    out = collections.OrderedDict()
    for name in names:
        w_shape, b_shape = WEIGHT_SHAPES[name]
        fan_in = int(np.prod(w_shape[:-1]))
        w = rng.standard_normal(w_shape, dtype=np.float32) * np.float32(np.sqrt(2.0 / fan_in))
        out[name] = (w, np.zeros(b_shape, np.float32))
    return out


def save_weights(path, weights):
    """Writes ``weights`` as ``.npz`` (``conv1_1/W``, ``conv1_1/b``, ...): no pickle, atomic."""
    path = os.fspath(path)
    arrays = {f"{name}/{what}": np.asarray(a, np.float32)
              for name, pair in weights.items() for what, a in zip(("W", "b"), pair)}
    atomic_write(path, lambda f: np.savez(f, **arrays))
    return path


_PICKLE_REFUSED = (
    "{path}: this file holds a pickled Python object (dtype=object), not plain arrays. "
    "Loading a pickle can run arbitrary code hidden in the file, so it is refused by default. "
    "The common vgg19.npy (a pickled dict name -> [W, b]) is of this kind: if you trust where "
    "the file came from, pass allow_pickle=True; better, convert it once to .npz with "
    "aicslib.models.vgg19.save_weights(path, load_weights(npy, allow_pickle=True)).")


def load_weights(path, allow_pickle=False, include_top=None):
    """Loads VGG19 weights from ``.npy`` (the lecture's ``vgg19.npy``), ``.npz`` or ``.mat``.

    Args:
      path: the weights file.
      allow_pickle: ``vgg19.npy`` is a *pickled* dict (``np.load(...,
        allow_pickle=True).item()`` in the lecture's code); unpickling can
        execute code, so object arrays are refused unless you pass
        ``allow_pickle=True`` for a file you trust.
      include_top: also require ``fc6``-``fc8``; ``None`` loads them when the
        file has them.

    Returns:
      An ordered dict ``name -> (W, b)`` of float32 arrays, checked against
      VGG19's shapes.

    Raises:
      FileNotFoundError: no such file.
      WeightsError: a pickled file without ``allow_pickle=True``, an unknown
        format, a missing layer or a wrong shape (the message names the file
        and the layer).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"VGG19 weights file not found: {path!r}")
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":
        raw = _load_npy(path, allow_pickle)
    elif ext == ".npz":
        raw = _load_npz(path)
    elif ext == ".mat":
        raw = _load_matconvnet(path)
    else:
        raise WeightsError(f"{path}: unknown weights format {ext!r}; expected .npy (vgg19.npy), "
                           ".npz or .mat (MatConvNet)")
    if include_top is None:
        include_top = all(n in raw for n in FC_LAYERS)
    return check_weights(raw, include_top=include_top, source=path)


def _check_magic(path, magic, what):
    with open(path, "rb") as f:
        head = f.read(len(magic))
    if head != magic:
        raise WeightsError(f"{path}: not a readable {what} file (it does not start with "
                           f"{magic!r}, the format's signature)")


def _load_npy(path, allow_pickle):
    _check_magic(path, b"\x93NUMPY", ".npy")
    try:
        arr = np.load(path, allow_pickle=False)
    except ValueError as e:
        if "allow_pickle" not in str(e):
            raise WeightsError(f"{path}: not a readable .npy file ({e})") from None
        if not allow_pickle:
            raise WeightsError(_PICKLE_REFUSED.format(path=path)) from None
        # The lecture's reader: a 0-d object array holding the dict. latin1 reads files pickled
        # by Python 2, as the original vgg19.npy was.
        arr = np.load(path, allow_pickle=True, encoding="latin1")
    if arr.dtype == object and arr.shape == ():
        arr = arr.item()
    if not isinstance(arr, dict):
        raise WeightsError(f"{path}: expected a dict name -> [W, b] (vgg19.npy), got "
                           f"{type(arr).__name__}"
                           + (f" of shape {arr.shape}" if hasattr(arr, "shape") else ""))
    return arr


def _load_npz(path):
    _check_magic(path, b"PK", ".npz")
    try:
        with np.load(path, allow_pickle=False) as z:
            files = {k: z[k] for k in z.files}
    except ValueError as e:
        if "allow_pickle" in str(e):
            raise WeightsError(
                f"{path}: an array in this .npz is a pickled Python object (dtype=object); "
                "loading pickles can run arbitrary code, so .npz weights must be plain float "
                "arrays (write them with aicslib.models.vgg19.save_weights)") from None
        raise WeightsError(f"{path}: not a readable .npz file ({e})") from None
    except zipfile.BadZipFile as e:
        raise WeightsError(f"{path}: not a readable .npz file ({e})") from None
    out = {}
    for name in CONV_LAYERS + FC_LAYERS:
        for sep in ("/", "_"):
            w, b = files.get(f"{name}{sep}W"), files.get(f"{name}{sep}b")
            if w is not None or b is not None:
                if w is None or b is None:
                    raise WeightsError(f"{path}: layer {name!r} has only "
                                       f"{'W' if b is None else 'b'}; expected {name}{sep}W and "
                                       f"{name}{sep}b")
                out[name] = (w, b)
                break
    return out


def _load_matconvnet(path):
    """MatConvNet's imagenet-vgg-verydeep-19.mat (``layers`` struct array with name/weights).

    MatConvNet stores filters as (width, height, in, out) when read by SciPy; they are
    transposed to HWIO, as the common neural-style loaders do. fc layers are stored as
    convolutions (7x7x512x4096, 1x1x4096x4096, ...) and become (in, out) matrices.
    """
    try:
        import scipy.io
    except ImportError:
        raise WeightsError(f"{path}: reading MatConvNet .mat files needs SciPy, which is not "
                           "installed (pip install scipy), or convert the file to .npz on a "
                           "machine that has it (load_weights + save_weights)") from None
    mat = scipy.io.loadmat(path)
    if "layers" not in mat:
        raise WeightsError(f"{path}: no 'layers' variable; not a MatConvNet network file")
    out = {}
    for layer in np.ravel(mat["layers"]):
        rec = _unwrap_record(layer)
        if rec is None or "name" not in (rec.dtype.names or ()):
            continue
        names = [v for v in _leaves(rec["name"]) if isinstance(v, str)]
        name = names[0] if names else None
        if name not in WEIGHT_SHAPES:
            continue
        arrays = [v for v in _leaves(rec["weights"]) if isinstance(v, np.ndarray)]
        if len(arrays) != 2:
            raise WeightsError(f"{path}: layer {name!r} has {len(arrays)} weight arrays, "
                               "expected 2 (filters, biases)")
        w, b = arrays
        if w.ndim == 4:
            w = np.transpose(w, (1, 0, 2, 3))
        if name in FC_LAYERS:
            w = w.reshape(-1, w.shape[-1])
        out[name] = (w, np.ravel(b))
    return out


def _unwrap_record(value):
    """SciPy wraps each MATLAB struct in (1, 1) object/struct arrays: dig to the record."""
    while isinstance(value, np.ndarray) and value.dtype.names is None and value.size == 1:
        value = value.ravel()[0]
    if isinstance(value, np.ndarray) and value.dtype.names is not None:
        return value.ravel()[0]
    return value if isinstance(value, np.void) else None


def _leaves(value):
    """Strings and numeric arrays inside SciPy's nested object arrays (MATLAB cells)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, np.ndarray) and value.dtype == object:
        for v in value.ravel():
            yield from _leaves(v)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "US":
        yield str(value.ravel()[0]) if value.size else ""
    elif isinstance(value, np.ndarray):
        yield value


# --------------------------------------------------------------------------
# Display: undo preprocess_input

def deprocess_image(x):
    """The inverse of :func:`preprocess_input` for one NHWC/HWC image: uint8 RGB for display."""
    x = np.asarray(x, np.float32)
    if x.ndim == 4:
        x = x[0]
    rgb = (x + IMAGENET_MEAN_BGR)[..., ::-1]
    return np.clip(rgb, 0, 255).round().astype(np.uint8)


# --------------------------------------------------------------------------
# The graph: the lecture's conv / pool helpers and build_vgg19

def conv_layer(x, weight_bias, name):
    """The lecture's ``build_net('conv', ...)``: ``relu(conv2d(x, W, 1, SAME) + b)``."""
    import aicslib as aics
    w, b = weight_bias
    with aics.name_scope(name):
        conv = aics.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME")
        return aics.nn.relu(aics.nn.bias_add(conv, b))


def pool_layer(x, name, pooling="max"):
    """The lecture's ``build_net('pool', ...)``: 2x2 window, stride 2, SAME.

    ``pooling="avg"`` is Gatys et al.'s choice for image synthesis (smoother
    gradients); VGG19 itself uses max pooling.
    """
    import aicslib as aics
    pool = {"max": aics.nn.max_pool, "avg": aics.nn.avg_pool}.get(pooling)
    if pool is None:
        raise ValueError(f"pooling must be 'max' or 'avg', got {pooling!r}")
    return pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME", name=name)


def fc_layer(x, weight_bias, name, relu=True):
    """A fully connected layer: ``relu(x @ W + b)`` (no ReLU for ``fc8``, the logits)."""
    import aicslib as aics
    w, b = weight_bias
    with aics.name_scope(name):
        y = aics.nn.bias_add(aics.matmul(x, w), b)
        return aics.nn.relu(y) if relu else y


def vgg19_features(x, weights, include_top=False, pooling="max", last_layer=None):
    """Runs VGG19 on ``x`` (NHWC, preprocessed) and returns ``name -> output`` in order.

    Works eagerly (values) and in a graph (symbolic tensors), so the same code
    serves the TF1 and the TF2 style-transfer loops. ``last_layer`` stops early
    (e.g. ``"conv5_1"``: style transfer needs nothing beyond it).

    Raises:
      ValueError: ``include_top`` with an input that is not 224x224 (``fc6``
        expects 7x7x512 = 25088 inputs), or an unknown ``last_layer``.
    """
    import aicslib as aics
    weights = check_weights(weights, include_top=include_top)   # no copy for float32 arrays
    names = LAYER_NAMES + ((FC_LAYERS + ("prob",)) if include_top else ())
    if last_layer is not None and last_layer not in names:
        raise ValueError(f"last_layer {last_layer!r} is not a VGG19 layer; expected one of "
                         f"{', '.join(names)}")
    net = collections.OrderedDict()
    h = x
    for name in LAYER_NAMES:
        if name.startswith("conv"):
            h = conv_layer(h, weights[name], name)
        else:
            h = pool_layer(h, name, pooling)
        net[name] = h
        if name == last_layer:
            return net
    if include_top:
        shape = tuple(h.shape.as_list()) if hasattr(h.shape, "as_list") else tuple(h.shape)
        if shape[1:] != (7, 7, 512):
            raise ValueError(f"include_top needs a 224x224 input (pool5 of shape (N, 7, 7, 512), "
                             f"25088 inputs to fc6); pool5 has shape {shape}")
        h = aics.reshape(h, [-1, 7 * 7 * 512])
        for name in FC_LAYERS:
            h = fc_layer(h, weights[name], name, relu=name != "fc8")
            net[name] = h
            if name == last_layer:
                return net
        net["prob"] = aics.nn.softmax(h, name="prob")
    return net


def build_vgg19(weights=None, image_shape=(224, 224), include_top=False, pooling="max", seed=0,
                allow_pickle=False):
    """The lecture's ``build_vgg19``: ``net['input']`` is a Variable, every layer an entry.

    ``net['input']`` is ``Variable(zeros((1, H, W, 3)))``; assign an image to
    it and run ``net['pool5']`` (inference), or minimise a loss with respect to
    it (style transfer). Weights are constants, so the input is the only
    trainable variable.

    Args:
      weights: a dict ``name -> (W, b)``, a path to a weights file (see
        :func:`load_weights`), or ``None`` for :func:`random_weights` (``seed``).
      image_shape: ``(H, W)`` of the input; 224x224 when ``include_top``.
      include_top: add ``fc6``, ``fc7``, ``fc8`` and ``prob``.
      pooling: ``"max"`` (VGG19) or ``"avg"`` (Gatys et al. for synthesis).
      allow_pickle: passed to :func:`load_weights` for a pickled ``vgg19.npy``.

    Built in the default graph (TF1) or eagerly (TF2: the entries are values
    computed from the variable's current value).
    """
    import aicslib as aics
    if weights is None:
        weights = random_weights(seed, include_top=include_top)
    elif isinstance(weights, (str, os.PathLike)):
        weights = load_weights(weights, allow_pickle=allow_pickle, include_top=include_top)
    weights = check_weights(weights, include_top=include_top)
    height, width = image_shape[:2]
    net = collections.OrderedDict()
    net["input"] = aics.Variable(np.zeros((1, height, width, 3), np.float32), name="input")
    net.update(vgg19_features(net["input"], weights, include_top=include_top, pooling=pooling))
    return net
