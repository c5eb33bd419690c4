"""Notebook 00 (framework tour): the static shape of ``a + b`` for partly known shapes, by brute force.

A graph knows a result's shape before anything runs: each op's shape function works on static
shapes, where ``None`` is a dimension not known until a value is fed. For broadcasting ops the
rule is NumPy's, applied to every value the unknown dimensions could take: a result dimension is
known when every feedable combination gives the same size, unknown otherwise, and the shapes
are incompatible when no combination broadcasts at all.

``broadcast_static`` tries the combinations (each ``None`` from 1 to 4, enough to tell 1 from
"the other size" from "a size of its own"): O(4^unknowns), for checking only.
"""
import itertools

import numpy as np

TRIES = (1, 2, 3, 4)


def broadcast_static(a, b):
    """The static shape (list, None for unknown) of broadcasting shapes ``a`` and ``b``;
    ValueError when no values of their unknown dimensions broadcast."""
    a, b = list(a), list(b)
    unknown = [i for i, d in enumerate(a + b) if d is None]
    results = []
    for values in itertools.product(TRIES, repeat=len(unknown)):
        dims = a + b
        for i, v in zip(unknown, values):
            dims[i] = v
        try:
            results.append(np.broadcast_shapes(tuple(dims[:len(a)]), tuple(dims[len(a):])))
        except ValueError:
            continue
    if not results:
        raise ValueError(f"shapes {a} and {b} cannot be broadcast")
    return [sizes.pop() if len(sizes) == 1 else None for sizes in map(set, zip(*results))] if results[0] else []
