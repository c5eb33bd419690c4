"""The three small networks of the operator-fusion chapter, and the RewriterConfig settings it
times them with, shared with the graph-rewrite chapter (split from it), whose lab rewrites the
VGG-like one: one definition, so both chapters talk about the same graph.

Each network takes the input tensor and the notebook's random stream (every weight comes from
it, so a chapter's seed decides them); ``build_network`` wraps one in a graph with a placeholder
``x`` and an output ``out`` (the spatial mean of the last feature map).
"""
import numpy as np

import aicslib as aics
from aicslib.ops.batch_norm_ops import fused_batch_norm

RC = aics.RewriterConfig


def rewriter_config(**kw):
    """A ConfigProto whose RewriterConfig has these fields (TF's names)."""
    return aics.ConfigProto(graph_options=aics.GraphOptions(rewrite_options=RC(**kw)))


ALL_OFF = rewriter_config(disable_meta_optimizer=True)      # the graph runs exactly as built
REMAP_ONLY = rewriter_config(constant_folding=RC.OFF, arithmetic_optimization=RC.OFF, elementwise_fusion=RC.OFF,
                             dependency_optimization=RC.OFF)


def _w(rng, *shape):
    # He initialisation, so activations neither vanish nor blow up through the layers
    return aics.constant((rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[:-1]))).astype(np.float32))


def _bn(rng, x, c):
    y, _, _ = fused_batch_norm(x, aics.constant(rng.uniform(0.5, 1.5, c).astype(np.float32)),
                               aics.constant(rng.standard_normal(c).astype(np.float32) * 0.1),
                               aics.constant(rng.standard_normal(c).astype(np.float32) * 0.1),
                               aics.constant(rng.uniform(0.5, 2, c).astype(np.float32)), epsilon=1e-3,
                               is_training=False)
    return y


def vgg_like(x, rng):
    """3x3 conv + bias + ReLU, two per stage, then a 2x2 max pool: compute-bound."""
    h, c = x, 3
    for width in (16, 32, 64):
        for _ in range(2):
            h = aics.nn.relu(aics.nn.bias_add(aics.nn.conv2d(h, _w(rng, 3, 3, c, width), 1, "SAME"),
                                              aics.constant(np.full(width, 0.01, np.float32))))
            c = width
        h = aics.nn.max_pool(h, 2, 2, "VALID")
    return h


def resnet_like(x, rng, width=32):
    """conv + batch norm (inference) + ReLU, with residual additions."""
    h = aics.nn.relu(_bn(rng, aics.nn.conv2d(x, _w(rng, 3, 3, 3, width), 1, "SAME"), width))
    for _ in range(3):
        r = aics.nn.relu(_bn(rng, aics.nn.conv2d(h, _w(rng, 3, 3, width, width), 1, "SAME"), width))
        h = aics.nn.relu(_bn(rng, aics.nn.conv2d(r, _w(rng, 3, 3, width, width), 1, "SAME"), width) + h)
    return h


def mobilenet_like(x, rng):
    """Depthwise separable blocks: 3x3 depthwise + bias + ReLU6, then 1x1 conv + BN + ReLU6."""
    h = aics.nn.relu6(_bn(rng, aics.nn.conv2d(x, _w(rng, 3, 3, 3, 32), 1, "SAME"), 32))
    c = 32
    for i, width in enumerate((32, 64, 128, 128)):
        s = 2 if i in (1, 3) else 1
        h = aics.nn.relu6(aics.nn.bias_add(aics.nn.depthwise_conv2d(h, _w(rng, 3, 3, c, 1), [1, s, s, 1], "SAME"),
                                           aics.constant(np.full(c, 0.01, np.float32))))
        h = aics.nn.relu6(_bn(rng, aics.nn.conv2d(h, _w(rng, 1, 1, c, width), 1, "SAME"), width))
        c = width
    return h


NETWORKS = {"VGG-like": vgg_like, "ResNet-like": resnet_like, "MobileNet-like": mobilenet_like}


def build_network(name, batch, hw, rng):
    """(graph, out, feed) for network ``name`` on a batch of ``batch`` hw x hw RGB images."""
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [batch, hw, hw, 3], name="x")
        out = aics.reduce_mean(NETWORKS[name](x, rng), axis=[1, 2], name="out")
    return g, out, {x: rng.standard_normal((batch, hw, hw, 3)).astype(np.float32)}
