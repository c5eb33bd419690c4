"""``tf.train.Saver`` (TF's python/training/saver.py): saves and restores a graph's variables.

The files it writes and reads are the checkpoint format (checkpoint_format.py), written
crash-safely (checkpoint_writer.py), read trusting nothing (checkpoint_reader.py), and
listed in the folder's ``checkpoint`` state file (checkpoint_management.py). Beside the
values a Saver writes the meta graph, ``<prefix>.meta``: TF's MetaGraphDef as JSON.
"""
import json
import os

import numpy as np

from ..framework import context, errors, file_io, logging
from . import checkpoint_writer
from .checkpoint_format import META_GRAPH_FORMAT, VERSION, strip_suffix
from .checkpoint_management import (CheckpointState, checkpoint_exists, get_checkpoint_state,
                                    latest_checkpoint, update_checkpoint_state)
from .checkpoint_reader import DataLossError, list_variables, load_checkpoint, load_variable, read_checkpoint

__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists",
           "list_variables", "load_variable", "load_checkpoint", "DataLossError",
           "CheckpointState"]


def _var_name(v):
    name = v.name
    return name[:-2] if name.endswith(":0") else name


class Saver:
    """Saves and restores variables (TF 1.x ``tf.train.Saver``).

    ``var_list``: None (all global variables of the default graph), a list of
    variables (saved under their names) or a dict {name: variable}.
    ``max_to_keep``: how many recent checkpoints to keep (None or 0: all files are kept and,
    as in TF, none is recorded: ``last_checkpoints`` stays empty and the state file lists
    only the newest).
    ``sharded``: TF writes one shard per device the variables are placed on; when
    they all share one device that is a single shard, the same files as unsharded,
    so True is accepted then and raises NotImplementedError otherwise.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        from ..ops.variables import Variable, global_variables
        if var_list is None:
            if context.executing_eagerly():
                raise RuntimeError("When eager execution is enabled, `var_list` must specify a "
                                   "list or dict of variables to save")
            var_list = global_variables()
        if isinstance(var_list, dict):
            items = list(var_list.items())
        else:
            items = []
            for v in var_list:
                items.append((_var_name(v), v))
        self._vars = {}
        for name, v in items:
            if not isinstance(v, Variable):
                raise TypeError(f"Saver: {name!r} is not a aics.Variable but "
                                f"{type(v).__name__}.")
            if name in self._vars:
                raise ValueError(f"At least two variables have the same name: {name}")
            self._vars[name] = v
        if not self._vars and not allow_empty:
            raise ValueError("No variables to save")
        if sharded:
            devices = sorted({v.device for v in self._vars.values()})
            if len(devices) > 1:
                raise NotImplementedError(
                    f"Saver(sharded=True) would write one checkpoint shard per device, and "
                    f"these variables are on {len(devices)} devices "
                    f"({', '.join(repr(d) for d in devices)}); aicslib writes every checkpoint "
                    f"as one .npz data file with one index. Pass sharded=False: restoring "
                    f"works the same.")
        self._max_to_keep = max_to_keep
        self._pad_step_number = pad_step_number
        self._last_checkpoints = []

    @property
    def last_checkpoints(self):
        """Prefixes of the checkpoints this Saver keeps, oldest first."""
        return list(self._last_checkpoints)

    def set_last_checkpoints(self, last_checkpoints):
        self._last_checkpoints = list(last_checkpoints)

    def recover_last_checkpoints(self, checkpoint_paths):
        self._last_checkpoints = [p for p in checkpoint_paths if checkpoint_exists(p)]

    @property
    def var_list(self):
        return dict(self._vars)

    def _values(self, sess):
        names = list(self._vars)
        variables = [self._vars[n] for n in names]
        if sess is None:
            if any(v.graph is not None for v in variables):
                raise ValueError("Saver.save/restore need a session for graph variables.")
            arrays = [v.numpy() for v in variables]
        else:
            arrays = sess.run(variables)
        return {n: (a, v.dtype.name) for n, a, v in zip(names, arrays, variables)}

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Saves the variables; returns the checkpoint prefix (``save_path-<step>``).

        With ``write_meta_graph`` (the default, as in TF) and graph variables, also
        writes ``<prefix>.<meta_graph_suffix>``, the graph as JSON (see the module
        docstring); eager variables have no graph to write, as in TF.
        ``strip_default_attrs`` leaves attrs at their default value out of it.
        """
        if save_debug_info:
            raise NotImplementedError(
                "Saver.save(save_debug_info=True) is not supported: aicslib records no "
                "stack traces of the ops it builds to save. Pass save_debug_info=False.")
        save_path = os.fspath(save_path)
        if not os.path.isdir(os.path.dirname(os.path.abspath(save_path))):
            # TF names the path it was given, before the step number is appended
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        step = None
        if global_step is not None:
            if isinstance(global_step, (int, np.integer)):
                step = int(global_step)
            elif sess is not None and getattr(global_step, "graph", None) is not None:
                step = int(sess.run(global_step))
            else:
                step = int(np.asarray(global_step))
            prefix = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        else:
            prefix = save_path
        values = self._values(sess)
        checkpoint_writer.write_checkpoint(prefix, values, global_step=step)
        if write_meta_graph:
            # TF writes <prefix>.meta by default (the graph, for import_meta_graph), so a student
            # expects the file next to the values: here JSON (no pickle), read back with
            # aics.import_graph_def(meta["graph_def"]).
            graph = sess.graph if sess is not None else None
            if graph is None:
                graph = next((v.graph for v in self._vars.values() if v.graph is not None), None)
            if graph is not None:
                self._write_meta_graph(graph, f"{prefix}.{meta_graph_suffix}",
                                       strip_default_attrs)
                checkpoint_writer.crash_point("meta_written")
        if write_state:
            removed = []
            if self._max_to_keep:
                if prefix in self._last_checkpoints:
                    self._last_checkpoints.remove(prefix)
                self._last_checkpoints.append(prefix)
                while len(self._last_checkpoints) > self._max_to_keep:
                    removed.append(self._last_checkpoints.pop(0))
                listed = self._last_checkpoints
            else:
                # TF (_RecordLastCheckpoint): with max_to_keep None or 0 the Saver records no
                # checkpoint, so none is deleted, last_checkpoints stays empty and the state
                # file lists only the newest one.
                listed = [prefix]
            folder = os.path.dirname(os.path.abspath(prefix))
            update_checkpoint_state(folder, prefix, listed, latest_filename)
            checkpoint_writer.crash_point("state_written")
            for old in removed:
                checkpoint_writer.remove_checkpoint(old, meta_graph_suffix)
        return prefix

    def _write_meta_graph(self, graph, path, strip_default_attrs):
        """Writes the meta graph as JSON; warns (and writes none) for a graph that
        cannot be written as JSON, so the checkpoint itself still counts."""
        try:
            graph_def = graph.as_graph_def()
            if strip_default_attrs:
                # as_graph_def lists nodes in graph.get_operations() order.
                for op, node in zip(graph.get_operations(), graph_def["node"]):
                    for a in op.op_def.attr:
                        if a.has_default and a.type != "tensor" \
                                and op.get_attr(a.name) == a.default_value:
                            node["attr"].pop(a.name, None)
            collections = {}
            for key in graph.get_all_collection_keys():
                names = [item.name for item in graph.get_collection(key)
                         if isinstance(getattr(item, "name", None), str)]
                if names:
                    collections[str(key)] = names
            meta = {"format": META_GRAPH_FORMAT, "version": VERSION,
                    "meta_info_def": {"stripped_default_attrs": bool(strip_default_attrs)},
                    "graph_def": graph_def, "saver_def": self.as_saver_def(),
                    "collection_def": collections}
            text = json.dumps(meta, indent=1)
        except (TypeError, ValueError) as e:
            logging.warning(f"Saver.save: the meta graph {path!r} was not written, the graph "
                            f"cannot be written as JSON ({e}). The checkpoint itself is "
                            f"complete; pass write_meta_graph=False to skip the meta graph.")
            return
        file_io.atomic_write(path, lambda f: f.write(text), binary=False)

    def restore(self, sess, save_path):
        """Restores every variable of this Saver from the checkpoint ``save_path``."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        values, index = read_checkpoint(save_path)
        prefix = strip_suffix(os.fspath(save_path))
        entries = index["variables"]
        missing = [n for n in self._vars if n not in values]
        if missing:
            raise errors.NotFoundError(
                None, None, f"Restoring from checkpoint failed: key {missing[0]} not found in "
                f"checkpoint {prefix}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1
                                         else "") +
                f". The checkpoint holds: {', '.join(sorted(values)) or 'nothing'}. The graph "
                f"may have changed since the checkpoint was written.")
        for name, var in self._vars.items():
            arr = values[name]
            want = var.shape
            if not want.is_compatible_with(arr.shape):
                raise errors.InvalidArgumentError(
                    None, None, f"Restoring from checkpoint failed: shape mismatch for "
                    f"variable '{name}': the variable has shape {want}, the checkpoint "
                    f"{prefix} holds shape {tuple(arr.shape)}.")
            saved_dtype = entries[name]["dtype"]
            if saved_dtype != var.dtype.name:
                raise errors.InvalidArgumentError(
                    None, None, f"Restoring from checkpoint failed: dtype mismatch for variable "
                    f"'{name}': the variable is {var.dtype.name}, the checkpoint {prefix} "
                    f"holds {saved_dtype}.")
        for name, var in self._vars.items():
            arr = values[name].astype(var.dtype.as_numpy_dtype, copy=False)
            if var.graph is None:
                var.assign(arr)
            else:
                if sess is None:
                    raise ValueError("Saver.restore needs a session for graph variables.")
                var.load(arr, sess)

    def as_saver_def(self):
        return {"version": VERSION, "max_to_keep": self._max_to_keep,
                "variables": sorted(self._vars)}

    def __repr__(self):
        return f"<aics.train.Saver {len(self._vars)} variables, max_to_keep={self._max_to_keep}>"
