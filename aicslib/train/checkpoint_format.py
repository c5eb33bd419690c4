"""The checkpoint format: what a checkpoint's files are (TF's tensor bundle, as NumPy and JSON).

A checkpoint with prefix ``dir/model-60`` is two files, plus the graph when
there is one, and the directory keeps a small state file, as in TensorFlow:

* ``model-60.npz`` -- the values, a NumPy archive (loaded with ``allow_pickle=False``;
  no pickle anywhere);
* ``model-60.index.json`` -- the index: every variable's name, dtype, shape and
  key in the archive, the archive's file name and its SHA-256;
* ``model-60.meta`` -- for graph variables (``Saver.save(write_meta_graph=True)``,
  the default): the meta graph, TF's MetaGraphDef as JSON: the GraphDef (as
  ``Graph.as_graph_def()``, so ``aics.import_graph_def(meta["graph_def"])``
  rebuilds the graph), the saver's variables and the graph's collections by name;
* ``checkpoint`` -- which checkpoints exist, newest last (TF's text format;
  checkpoint_management.py)::

      model_checkpoint_path: "model-60"
      all_model_checkpoint_paths: "model-50"
      all_model_checkpoint_paths: "model-60"

A string variable is stored without pickle: all its bytes in one uint8 member, their
lengths in another (``STRING_LENGTHS_SUFFIX``). Writing: checkpoint_writer.py (crash-safe);
reading: checkpoint_reader.py (trusting nothing).
"""
import hashlib

FORMAT = "aicslib-checkpoint"
META_GRAPH_FORMAT = "aicslib-meta-graph"
VERSION = 1
DATA_SUFFIX = ".npz"
INDEX_SUFFIX = ".index.json"
STATE_FILENAME = "checkpoint"
STRING_LENGTHS_SUFFIX = "_len"    # a string variable's byte lengths, beside its bytes


def sha256(path):
    """The SHA-256 of a file, hexadecimal (the index's ``data_sha256``)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def strip_suffix(path):
    """The checkpoint prefix of ``path``, which may name the index or the data file."""
    for suffix in (INDEX_SUFFIX, DATA_SUFFIX):
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path
