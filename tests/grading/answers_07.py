"""Wrong answers for notebook 07 (VGG19 and style transfer): the exercises ``vgg19_conv_cost`` and
``style_layer_loss``, and other correct answers for them."""

# A right count; a wrong answer changes one step in braces.
_COST = """
macs = 0
for name in {LAYERS}:
    kh, kw, c_in, c_out = vgg19.WEIGHT_SHAPES[name][0]
    side = size
    for _ in range(int(name[4]) - 1):
        side = {HALVE}
    macs += side * side * {CHANNELS}
return {RESULT}
"""
_COST_RIGHT = dict(LAYERS="vgg19.CONV_LAYERS", HALVE="-(-side // 2)", CHANNELS="c_out * kh * kw * c_in",
                   RESULT="macs, 2 * macs")


def _cost(**wrong):
    return _COST.format(**{**_COST_RIGHT, **wrong})

WRONG_ANSWERS = {
    "vgg19_conv_cost": {
        # a multiply-add counted as one FLOP: the "about 20 billion FLOPs" mistake
        "flops_equal_multiply_adds": _cost(RESULT="macs, macs"),
        # VALID-style pooling: an odd side rounds down (100 -> 50 -> 25 -> 12), VGG19's SAME rounds up
        "pooling_rounds_down": _cost(HALVE="side // 2"),
        # no pooling at all: every layer at the input's size
        "forgets_the_pooling": _cost(HALVE="side"),
        # C_out * C_out: wrong for the first conv of each block (conv1_1 has 3 input channels)
        "output_channels_squared": _cost(CHANNELS="c_out * kh * kw * c_out"),
        # the 3x3 window forgotten: a 1x1 convolution's count
        "forgets_the_window": _cost(CHANNELS="c_out * c_in"),
        # builds the network and counts from the graph's shapes (calls the library)
        "calls_the_library": """
with aics.Graph().as_default():
    net = vgg19.build_vgg19(vgg19.random_weights(0), image_shape=(size, size))
    macs = sum(int(np.prod(net[n].shape.as_list())) * int(np.prod(vgg19.WEIGHT_SHAPES[n][0][:3]))
               for n in vgg19.CONV_LAYERS)
return macs, 2 * macs
""",
        "copies_the_package_reference": """
from workbook.references.style import conv_cost
return conv_cost(size)
""",
    },
    "style_layer_loss": {
        # forgets the 4 in 1 / (4 N^2 M^2): four times too large.
        "missing_factor_4": """
_, h, w, c = features.shape.as_list()
f = aics.reshape(features, [h * w, c])
gram = aics.matmul(f, f, transpose_a=True)
return aics.reduce_sum(aics.square(gram - target_gram)) / float(c * c * (h * w) ** 2)
""",
        # normalises by N*M instead of N^2*M^2.
        "normalised_by_n_m_not_squared": """
_, h, w, c = features.shape.as_list()
f = aics.reshape(features, [h * w, c])
gram = aics.matmul(f, f, transpose_a=True)
return aics.reduce_sum(aics.square(gram - target_gram)) / float(4 * c * h * w)
""",
        # F F^T: an M x M matrix of pixel similarities, not the C x C channel correlations.
        "gram_over_pixels": """
_, h, w, c = features.shape.as_list()
f = aics.reshape(features, [h * w, c])
gram = aics.matmul(f, f, transpose_b=True)
return aics.reduce_sum(aics.square(gram - target_gram)) / float(4 * c * c * (h * w) ** 2)
""",
        # mean instead of sum of the squared differences.
        "mean_not_sum": """
_, h, w, c = features.shape.as_list()
f = aics.reshape(features, [h * w, c])
gram = aics.matmul(f, f, transpose_a=True)
return aics.reduce_mean(aics.square(gram - target_gram)) / float(4 * c * c * (h * w) ** 2)
""",
        # the library's own implementation: the exercise is to write it.
        "library_shortcut": """
return style_transfer.style_layer_loss(features, target_gram)
""",
        # NumPy beside the graph: works eagerly, has no value for a placeholder in a graph.
        "numpy_beside_graph": """
f = features.numpy().reshape(-1, features.shape[-1])
a = np.asarray(target_gram)
c, m = f.shape[1], f.shape[0]
return aics.constant(np.sum((f.T @ f - a) ** 2) / (4.0 * c * c * m * m))
""",
        # normalised by the channels only: the feature-map size M = H*W forgotten
        "forgets_the_feature_map_size": """
_, h, w, c = features.shape.as_list()
f = aics.reshape(features, [h * w, c])
gram = aics.matmul(f, f, transpose_a=True)
return aics.reduce_sum(aics.square(gram - target_gram)) / float(4 * c * c)
""",
        # (4 N M)^2 instead of 4 N^2 M^2: the 4 squared too
        "four_squared_in_the_constant": """
_, h, w, c = features.shape.as_list()
f = aics.reshape(features, [h * w, c])
gram = aics.matmul(f, f, transpose_a=True)
return aics.reduce_sum(aics.square(gram - target_gram)) / float((4 * c * h * w) ** 2)
""",
        # reshape to C x M instead of transposing: a C x C matrix, but of scrambled numbers
        "reshape_instead_of_transpose": """
_, h, w, c = features.shape.as_list()
f = aics.reshape(features, [c, h * w])
gram = aics.matmul(f, f, transpose_b=True)
return aics.reduce_sum(aics.square(gram - target_gram)) / float(4 * c * c * (h * w) ** 2)
""",
        # right value in float64, never cast back: a float64 loss cannot be added to the float32 ones
        "float64_not_cast_back": """
_, h, w, c = features.shape.as_list()
f = aics.cast(aics.reshape(features, [h * w, c]), aics.float64)
gram = aics.matmul(f, f, transpose_a=True)
diff = gram - aics.cast(target_gram, aics.float64)
return aics.reduce_sum(aics.square(diff)) / float(4 * c * c * (h * w) ** 2)
""",
        # the package's NumPy reference: a number, not a tensor built from the graph
        "copies_the_package_reference": """
from workbook.references.style import layer_loss
return aics.constant(np.float32(layer_loss(features.numpy(), np.asarray(target_gram))))
""",
    },
}

CORRECT_ANSWERS = {
    "vgg19_conv_cost": {
        # math.ceil on the halved side, and the sum written with NumPy (cast back to Python ints)
        "ceil_and_numpy": """
import math
rows = []
for name in vgg19.CONV_LAYERS:
    shape = vgg19.WEIGHT_SHAPES[name][0]
    side = size
    for _ in range(int(name[len("conv")]) - 1):
        side = math.ceil(side / 2)
    rows.append(side * side * int(np.prod(shape)))
macs = int(np.sum(np.array(rows, dtype=np.int64)))
return macs, macs * 2
""",
    },
    "style_layer_loss": {
        # an explicit transpose instead of transpose_a, the constant split in two divisions
        "transpose_then_matmul": """
_, h, w, c = features.shape.as_list()
f = aics.reshape(features, [h * w, c])
gram = aics.matmul(aics.transpose(f), f)
sq = aics.reduce_sum(aics.square(gram - target_gram))
return sq / float(2 * c * h * w) / float(2 * c * h * w)
""",
        # float64 all through, cast back to float32 at the end
        "float64_then_cast": """
_, h, w, c = features.shape.as_list()
f = aics.cast(aics.reshape(features, [h * w, c]), aics.float64)
gram = aics.matmul(f, f, transpose_a=True)
diff = gram - aics.cast(target_gram, aics.float64)
return aics.cast(aics.reduce_sum(diff * diff) / float(4 * c * c * (h * w) ** 2), aics.float32)
""",
        # the mean over the C x C entries, times C^2 folded into the constant
        "reduce_mean": """
_, h, w, c = features.shape.as_list()
f = aics.reshape(features, [-1, c])
gram = aics.matmul(f, f, transpose_a=True)
return aics.reduce_mean(aics.square(gram - target_gram)) / float(4 * (h * w) ** 2)
""",
    },
}

