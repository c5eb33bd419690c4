"""Nested structures of tf.data elements (TF's python/data/util/nest.py).

Unlike ``tf.nest``, tf.data treats a *list* as one tensor (``from_tensor_slices([1, 2])``
slices a vector), so only tuples (also namedtuples) and dicts are structure here.
"""


def is_nested(s):
    return isinstance(s, (tuple, dict))


def flatten(structure):
    """The leaves of a nested structure, dict keys in sorted order (as tf.nest)."""
    if isinstance(structure, dict):
        out = []
        for k in sorted(structure):
            out.extend(flatten(structure[k]))
        return out
    if isinstance(structure, tuple):
        out = []
        for s in structure:
            out.extend(flatten(s))
        return out
    return [structure]


def pack_sequence_as(template, flat):
    """Rebuilds ``template``'s structure from the leaves ``flat``."""
    it = iter(flat)

    def build(t):
        if isinstance(t, dict):
            return {k: build(t[k]) for k in sorted(t)}
        if isinstance(t, tuple):
            items = [build(x) for x in t]
            return type(t)(*items) if hasattr(t, "_fields") else tuple(items)
        return next(it)
    return build(template)


def map_structure(fn, structure):
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])


def normalize(value):
    """Lists become tensors (as in TF), tuples and dicts stay structures."""
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [normalize(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def flatten_up_to(shallow, structure):
    """``structure`` flattened only as deep as ``shallow`` is nested: with ``shallow`` the
    output types ``(tf.float32, tf.int32)``, the shapes ``((2,), ())`` give two leaves, the
    tuples ``(2,)`` and ``()``, as TF's ``nest.flatten_up_to``."""
    if isinstance(shallow, dict):
        if not isinstance(structure, dict) or set(structure) != set(shallow):
            raise ValueError(f"The two structures don't have the same keys: {shallow} vs {structure}")
        return [x for k in sorted(shallow) for x in flatten_up_to(shallow[k], structure[k])]
    if isinstance(shallow, tuple):
        if not isinstance(structure, (tuple, list)) or len(structure) != len(shallow):
            raise ValueError(f"The two structures don't have the same sequence length: {shallow} "
                             f"vs {structure}")
        return [x for s, t in zip(shallow, structure) for x in flatten_up_to(s, t)]
    return [structure]
