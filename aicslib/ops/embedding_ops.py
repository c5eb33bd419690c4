"""``tf.nn.embedding_lookup`` (TF's python/ops/embedding_ops.py): rows of an embedding matrix.

``embedding_lookup(params, ids)`` is ``gather(params, ids)``: for ids of shape S
the result has shape ``S + params.shape[1:]``. Its gradient flows only into the
looked-up rows (GatherV2's gradient). ``params`` given as a list of shards is
split TF's default way (``partition_strategy='mod'``: id ``i`` lives in shard
``i % n`` at row ``i // n``).
"""
from ..framework import dtypes
from ..framework.ops import convert_to_tensor, name_scope
from . import array_ops, math_ops


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    with name_scope(name, "embedding_lookup"):
        ids = convert_to_tensor(ids)
        if isinstance(params, (list, tuple)):
            if len(params) == 1:
                params = params[0]
            else:
                if partition_strategy != "mod":
                    raise NotImplementedError("embedding_lookup over shards supports "
                                              "partition_strategy='mod' only in aicslib.")
                n = len(params)
                table = array_ops.concat([array_ops.expand_dims(p, 1) for p in params], 1)
                rows = convert_to_tensor(params[0]).shape.as_list()[0]
                dim = convert_to_tensor(params[0]).shape.dims[1:]
                if rows is None or None in dim:
                    raise ValueError("embedding_lookup over shards needs shards of known shape.")
                # Row r of shard s holds id r * n + s: interleave the shards back into one table.
                params = array_ops.reshape(table, [rows * n] + dim)
        result = array_ops.gather(params, ids)
        if max_norm is not None:
            norm = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(result), axis=-1, keepdims=True))
            result = result * math_ops.minimum(1.0, max_norm / math_ops.maximum(norm, 1e-12))
        return result


def embedding_lookup_v2(params, ids, max_norm=None, name=None):
    """TF2 signature of ``tf.nn.embedding_lookup``."""
    return embedding_lookup(params, ids, "mod", name, max_norm=max_norm)


del dtypes
