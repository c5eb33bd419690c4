"""Flattening nested structures of tensors (TF's python/util/nest.py, in brief).

Lists, tuples, namedtuples and dicts (by sorted key) are structure; anything
else is a leaf. ``sequences`` names the sequence types that are structure: tf.data
passes ``(tuple,)``, since there a list is one tensor (TF's python/data/util/nest.py).
"""

SEQUENCES = (list, tuple)


def is_nested(structure, sequences=SEQUENCES):
    return isinstance(structure, (dict, *sequences))


def flatten(structure, sequences=SEQUENCES):
    if isinstance(structure, dict):
        return [x for k in sorted(structure) for x in flatten(structure[k], sequences)]
    if isinstance(structure, sequences):
        return [x for v in structure for x in flatten(v, sequences)]
    return [structure]


def pack_sequence_as(structure, flat, sequences=SEQUENCES):
    """Rebuilds ``structure`` with the leaves taken in order from ``flat``."""
    it = iter(flat)

    def pack(s):
        if isinstance(s, dict):
            return {k: pack(s[k]) for k in sorted(s)}
        if isinstance(s, sequences):
            items = [pack(v) for v in s]
            return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
        return next(it)
    return pack(structure)


def map_structure(fn, structure, sequences=SEQUENCES):
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure, sequences)], sequences)


def flatten_up_to(shallow, structure, sequences=SEQUENCES):
    """``structure`` flattened only as deep as ``shallow`` is nested: with ``shallow`` the
    output types ``(tf.float32, tf.int32)``, the shapes ``((2,), ())`` give two leaves, the
    tuples ``(2,)`` and ``()``, as TF's ``nest.flatten_up_to``."""
    if isinstance(shallow, dict):
        if not isinstance(structure, dict) or set(structure) != set(shallow):
            raise ValueError(f"The two structures don't have the same keys: {shallow} vs {structure}")
        return [x for k in sorted(shallow) for x in flatten_up_to(shallow[k], structure[k], sequences)]
    if isinstance(shallow, sequences):
        if not isinstance(structure, (list, tuple)) or len(structure) != len(shallow):
            raise ValueError(f"The two structures don't have the same sequence length: {shallow} "
                             f"vs {structure}")
        return [x for s, t in zip(shallow, structure) for x in flatten_up_to(s, t, sequences)]
    return [structure]
