"""The capstone's references: the straightforward style-transfer step a faster one must match,
and the way its speedup is measured (the grader's, beside the student's own exercise).

Notebook 21 (capstone). The step is the gradient of Gatys et al.'s loss with respect to the
image (what every training step of chapter 12 computes); ``naive_step`` is a first version: it
recomputes the content and style targets at every call and runs the network on the image once
per loss term.
"""
import time

import numpy as np

import aicslib as aics
from aicslib.models import style_transfer, vgg19

LAST_LAYER = "conv5_1"


def features(x, weights):
    return vgg19.vgg19_features(x, weights, pooling="avg", last_layer=LAST_LAYER)


def targets(content, style, weights):
    """{"content": {layer: P}, "gram": {layer: A}} as NumPy arrays."""
    cf, sf = features(aics.constant(content), weights), features(aics.constant(style), weights)
    return {"content": {n: cf[n].numpy() for n, _ in style_transfer.CONTENT_LAYERS},
            "gram": {n: style_transfer.gram_matrix(sf[n]).numpy() for n, _ in style_transfer.STYLE_LAYERS}}


def naive_step(image, content, style, weights):
    """(loss, d loss / d image) as a first version writes it: the targets recomputed at every call,
    and the network run twice on the image, once for each term of the loss."""
    tg = targets(content, style, weights)
    x = aics.constant(image)
    with aics.GradientTape() as tape:
        tape.watch(x)
        (layer, w), = style_transfer.CONTENT_LAYERS
        l_content = w * style_transfer.content_loss(features(x, weights)[layer], tg["content"][layer])
        l_style = style_transfer.style_loss(features(x, weights), tg["gram"])
        total = 1.0 * l_content + 1e3 * l_style          # alpha and beta as total_loss's defaults
    return float(total), tape.gradient(total, x).numpy()


def relative_error(got, expected):
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    return float(np.linalg.norm(got - expected) / max(np.linalg.norm(expected), 1e-30))


def speedup(reference, candidate, rounds=5, timer=time.perf_counter):
    """median(reference's times) / median(candidate's times): one untimed warm-up call each (first
    calls trace, allocate and fill caches), then ``rounds`` rounds that time one call of each, the
    two interleaved so that a slow spell of the machine falls on both."""
    reference()
    candidate()
    ref_times, cand_times = [], []
    for _ in range(rounds):
        for fn, times in ((reference, ref_times), (candidate, cand_times)):
            t0 = timer()
            fn()
            times.append(timer() - t0)
    return float(np.median(ref_times) / np.median(cand_times))
