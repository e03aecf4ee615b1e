"""``tf.train.Saver``: write variables to a checkpoint and read them back.

A checkpoint is ``PREFIX.npz`` (one array per variable, keyed by the
variable's op name) and a small ``checkpoint`` text file in the same
directory naming the latest checkpoints, in TF's format::

    model_checkpoint_path: "model.ckpt-300"
    all_model_checkpoint_paths: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-300"

``save`` fetches the variables through the session - so it works from any
client of a cluster, wherever the variables live - and ``restore`` feeds the
values back into one assign op per variable, built once. Files are read
with ``allow_pickle=False``: a checkpoint can never run code.
"""

import os
import re

import numpy as np

from minitf.framework import errors
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.ops import array_ops
from minitf.ops.control_flow_ops import group
from minitf.ops import variables as _variables

_INDEX = "checkpoint"


class Saver:
    def __init__(self, var_list=None, max_to_keep=5, name=None, sharded=False,
                 allow_empty=False, keep_checkpoint_every_n_hours=10000.0, filename=None,
                 **unused):
        if var_list is None:
            var_list = get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES)
        if isinstance(var_list, dict):
            items = sorted(var_list.items())
        else:
            items = sorted(((v.op.name, v) for v in var_list), key=lambda kv: kv[0])
        if not items and not allow_empty:
            raise ValueError("No variables to save")
        self._vars = items
        self._max_to_keep = max_to_keep
        self._kept = []
        graph = get_default_graph()
        self._restore_feeds = []
        restore_ops = []
        with graph.name_scope(name or "save"):
            for key, v in items:
                with graph.colocate_with(v.op):
                    p = array_ops.placeholder(v.dtype.base_dtype, v.shape, name="restore_" +
                                              re.sub(r"[^A-Za-z0-9_.\-]", "_", key))
                    restore_ops.append(v.assign(p).op if isinstance(v, _variables.Variable)
                                       else _variables.assign(v, p).op)
                self._restore_feeds.append(p)
        self._restore_op = group(*restore_ops, name="restore_all") if restore_ops else None
        graph.add_to_collection(GraphKeys.SAVERS, self)

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Write the variables; returns the checkpoint prefix written."""
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = int(sess.run(global_step))
            prefix = "%s-%d" % (save_path, global_step)
        else:
            prefix = save_path
        directory = os.path.dirname(os.path.abspath(prefix))
        if not os.path.isdir(directory):
            raise errors.NotFoundError(None, None, "Failed to create a checkpoint: the "
                                       "directory %s does not exist" % directory)
        values = sess.run([v for _, v in self._vars]) if self._vars else []
        arrays = {}
        for (key, _), value in zip(self._vars, values):
            value = np.asarray(value)
            if value.dtype == object:
                value = value.astype(bytes)  # fixed-width bytes: no pickle needed
            arrays[key] = value
        tmp = prefix + ".tmp.npz"
        np.savez(tmp, **arrays)
        os.replace(tmp, prefix + ".npz")
        if write_state:
            self._remember(prefix, latest_filename)
        return prefix

    def _remember(self, prefix, latest_filename=None):
        if prefix in self._kept:
            self._kept.remove(prefix)
        self._kept.append(prefix)
        while self._max_to_keep and len(self._kept) > self._max_to_keep:
            old = self._kept.pop(0)
            try:
                os.remove(old + ".npz")
            except FileNotFoundError:
                pass
        directory = os.path.dirname(os.path.abspath(prefix))
        lines = ['model_checkpoint_path: "%s"' % os.path.basename(prefix)]
        lines += ['all_model_checkpoint_paths: "%s"' % os.path.basename(p) for p in self._kept]
        with open(os.path.join(directory, latest_filename or _INDEX), "w") as f:
            f.write("\n".join(lines) + "\n")

    @property
    def last_checkpoints(self):
        return list(self._kept)

    def restore(self, sess, save_path):
        """Load every variable from the checkpoint ``save_path`` (a prefix)."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        path = save_path + ".npz"
        if not os.path.exists(path):
            raise errors.NotFoundError(None, None, "Failed to find any matching files for %s "
                                       "(no checkpoint was written there)" % save_path)
        with np.load(path, allow_pickle=False) as data:
            feed = {}
            for (key, v), p in zip(self._vars, self._restore_feeds):
                if key not in data:
                    raise errors.NotFoundError(None, None, "Key %s not found in checkpoint %s"
                                               % (key, save_path))
                value = data[key]
                if value.dtype.kind == "S":
                    value = value.astype(object)
                feed[p] = value
        if self._restore_op is not None:
            sess.run(self._restore_op, feed)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint in ``checkpoint_dir``, or None."""
    index = os.path.join(checkpoint_dir, latest_filename or _INDEX)
    try:
        with open(index) as f:
            text = f.read()
    except OSError:
        return None
    match = re.search(r'^model_checkpoint_path: "(.*)"$', text, re.M)
    if not match:
        return None
    prefix = match.group(1)
    if not os.path.isabs(prefix):
        prefix = os.path.join(checkpoint_dir, prefix)
    return prefix if os.path.exists(prefix + ".npz") else None


def checkpoint_exists(prefix):
    return os.path.exists(prefix + ".npz")
