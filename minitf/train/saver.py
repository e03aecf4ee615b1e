"""``tf.train.Saver``: write variables to a checkpoint and read them back.

The Saver builds TF's save and restore ops into the graph (names as TF's)::

    save/filename/input  Const "model"         the default prefix
    save/filename        PlaceholderWithDefault
    save/Const           PlaceholderWithDefault  <- the prefix is fed here
    save/SaveV2          SaveV2(prefix, names, slices, every variable)
    save/control_dependency  Identity(prefix) after SaveV2: "saved, here is where"
    save/RestoreV2       RestoreV2(prefix, names, slices) on the CPU
    save/Assign, save/Assign_1 ...  one Assign per variable
    save/restore_all     NoOp after every Assign

``save(sess, path, global_step)`` runs ``save/control_dependency`` with the
prefix fed (``path-STEP``), so the variables travel to wherever the SaveV2
op runs and are written there (``minitf/ops/save_restore_ops.py``: one
``PREFIX.npz``, written atomically); then it records the checkpoint in the
``checkpoint`` state file (``checkpoint_management.py``, also written
atomically), deletes the ones ``max_to_keep`` no longer keeps, and writes the
meta graph (``PREFIX.meta``: graph, collections and this Saver's
``SaverDef``), which ``tf.train.import_meta_graph`` reads back - in minitf
or in real TensorFlow.

``restore(sess, path)`` runs ``save/restore_all`` with the prefix fed. The
names that tie it together (``save/Const:0``, ``save/control_dependency:0``,
``save/restore_all``) are the Saver's ``SaverDef``; a Saver made from a
SaverDef (an imported meta graph) uses the ops already in the graph.
"""

import os
import time
import warnings

from minitf.framework import dtypes, errors
from minitf.framework import tf_logging as logging
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.framework.protos import proto
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, save_restore_ops
from minitf.ops import variables as _variables
from minitf.ops.control_flow_ops import group
from minitf.ops.core import constant, make_op, name_scope
from minitf.train import checkpoint_management as _cm
from minitf.train import meta_graph
from minitf.train import training_util

V2 = 2


def _saveables(var_list):
    """``[(name, variable-or-tensor)]`` sorted by name, as TF's Saver orders them."""
    if var_list is None:
        var_list = _variables.global_variables() + \
            get_default_graph().get_collection("saveable_objects")
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = []
        for v in var_list:
            if isinstance(v, (list, tuple)):
                raise TypeError("minitf's Saver takes variables (or a dict name -> variable), "
                                "not partitioned variables")
            items.append((v.op.name, v))
    names = [n for n, _ in items]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError("At least two variables have the same name: %s" % dupes[0])
    return sorted(items, key=lambda kv: kv[0])


class Saver:
    """Saves and restores variables (see the module docstring)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=V2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        for flag, what in ((reshape, "reshape=True (restoring into variables of another "
                                     "shape)"),
                           (sharded, "sharded=True (one checkpoint file per device)"),
                           (builder is not None, "a custom SaverBuilder")):
            if flag:
                raise errors.UnimplementedError(None, None, "minitf's Saver does not support %s;"
                                                " leave it at its default." % what)
        if write_version != V2:
            raise errors.UnimplementedError(None, None, "minitf writes one checkpoint format "
                                            "(TF's V2 API, SaverDef.V2); V1 is not supported.")
        self._var_list = var_list
        self._name = name
        self._restore_sequentially = restore_sequentially
        self._allow_empty = allow_empty
        self._filename = filename
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._last_checkpoints = []          # [(prefix, time)], oldest first
        self._to_delete = []
        self._next_keep_time = time.time() + keep_checkpoint_every_n_hours * 3600
        self._is_empty = False
        self._built = False
        self._warned_meta = False
        if saver_def is not None:
            self._from_saver_def(saver_def)
        elif not defer_build:
            self.build()

    # -- building the ops ----------------------------------------------------------------------
    def build(self):
        """Add the save and restore ops (done by the constructor unless ``defer_build``)."""
        if self._built:
            return
        items = _saveables(self._var_list)
        if not items:
            if not self._allow_empty:
                raise ValueError("No variables to save")
            self._is_empty = True
            self._built = True
            return
        graph = get_default_graph()
        with name_scope(self._name, "save", [v for _, v in items]) as scope:
            default = constant(self._filename or "model", dtype=dtypes.string,
                               name="filename/input")
            filename = make_op(array_ops.PLACEHOLDER_WITH_DEFAULT, [default], [dtypes.string],
                               [TensorShape([])], name="filename",
                               attrs={"dtype": dtypes.string, "shape": TensorShape([])}
                               ).outputs[0]
            filename = make_op(array_ops.PLACEHOLDER_WITH_DEFAULT, [filename], [dtypes.string],
                               [TensorShape([])], name="Const",
                               attrs={"dtype": dtypes.string, "shape": TensorShape([])}
                               ).outputs[0]
            names = [n for n, _ in items]
            tensors = [v._ref() if hasattr(v, "_ref") else v for _, v in items]
            save = save_restore_ops.save_v2(filename, names, [""] * len(items), tensors)
            with graph.colocate_with(filename.op), graph.control_dependencies([save]):
                save_tensor = array_ops.identity(filename, name="control_dependency")
            with graph.device("/device:CPU:0"):
                restored = save_restore_ops.restore_v2(
                    filename, names, [""] * len(items), [t.dtype.base_dtype for t in tensors],
                    shapes=[t.shape for t in tensors])
            assigns = []
            for (key, v), value in zip(items, restored):
                deps = [assigns[-1]] if self._restore_sequentially and assigns else []
                with graph.control_dependencies(deps):
                    ref = v._ref() if hasattr(v, "_ref") else v
                    assigns.append(_variables.assign(
                        ref, value, validate_shape=ref.shape.is_fully_defined()).op)
            restore_op = group(*assigns, name="restore_all")
        self._filename_tensor_name = filename.name
        self._save_tensor_name = save_tensor.name
        self._restore_op_name = restore_op.name
        self._scope = scope
        self._built = True

    def _from_saver_def(self, saver_def):
        if not saver_def.filename_tensor_name:
            raise ValueError("The saver_def must specify filename_tensor_name: %s"
                             % str(saver_def))
        if not saver_def.save_tensor_name:
            raise ValueError("The saver_def must specify save_tensor_name: %s" % str(saver_def))
        if not saver_def.restore_op_name:
            raise ValueError("The saver_def must specify restore_op_name: %s" % str(saver_def))
        if saver_def.sharded:
            raise errors.UnimplementedError(None, None, "this SaverDef saves one file per "
                                            "device (sharded), which minitf does not support")
        self._filename_tensor_name = saver_def.filename_tensor_name
        self._save_tensor_name = saver_def.save_tensor_name
        self._restore_op_name = saver_def.restore_op_name
        self._max_to_keep = saver_def.max_to_keep
        self._keep_hours = saver_def.keep_checkpoint_every_n_hours
        self._next_keep_time = time.time() + self._keep_hours * 3600
        self._scope = self._restore_op_name.rsplit("/", 1)[0] + "/" \
            if "/" in self._restore_op_name else ""
        self._built = True

    # -- the SaverDef ---------------------------------------------------------------------------
    def as_saver_def(self):
        """This Saver as TF's ``SaverDef`` (the names of its ops, and its policy)."""
        saver_pb2 = proto("saver_pb2")
        return saver_pb2.SaverDef(
            filename_tensor_name=self._filename_tensor_name,
            save_tensor_name=self._save_tensor_name, restore_op_name=self._restore_op_name,
            max_to_keep=self._max_to_keep, sharded=False,
            keep_checkpoint_every_n_hours=self._keep_hours, version=saver_pb2.SaverDef.V2)

    saver_def = property(as_saver_def)

    def to_proto(self, export_scope=None):
        if export_scope is None:
            return self.as_saver_def()
        if not self._save_tensor_name.startswith(export_scope):
            return None
        pb = self.as_saver_def()
        strip = lambda n: n[len(export_scope.rstrip("/")) + 1:]  # noqa: E731
        pb.filename_tensor_name = strip(pb.filename_tensor_name)
        pb.save_tensor_name = strip(pb.save_tensor_name)
        pb.restore_op_name = strip(pb.restore_op_name)
        return pb

    @staticmethod
    def from_proto(saver_def, import_scope=None):
        if import_scope:
            saver_def = type(saver_def).FromString(saver_def.SerializeToString())
            prefix = import_scope.rstrip("/") + "/"
            saver_def.filename_tensor_name = prefix + saver_def.filename_tensor_name
            saver_def.save_tensor_name = prefix + saver_def.save_tensor_name
            saver_def.restore_op_name = prefix + saver_def.restore_op_name
        return Saver(saver_def=saver_def)

    # -- which checkpoints are kept ---------------------------------------------------------
    @property
    def last_checkpoints(self):
        """The checkpoints still kept, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        if not isinstance(last_checkpoints, list):
            raise AssertionError("last_checkpoints must be a list")
        self._last_checkpoints = [(p, None) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        if not isinstance(last_checkpoints_with_time, list):
            raise AssertionError("last_checkpoints_with_time must be a list")
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Take over the checkpoints a previous program kept (those still on disk)."""
        found = []
        for path in checkpoint_paths:
            mtimes = _cm.get_checkpoint_mtimes([path])
            if mtimes:
                found.append((path, mtimes[0]))
        self.set_last_checkpoints_with_time(found)

    def _record(self, prefix):
        if not self._max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix]
        self._last_checkpoints.append((prefix, time.time()))
        if len(self._last_checkpoints) > self._max_to_keep:
            self._to_delete.append(self._last_checkpoints.pop(0))

    def _delete_old(self, meta_graph_suffix):
        if not self._to_delete:
            return
        prefix, saved_at = self._to_delete.pop(0)
        if saved_at is not None and saved_at > self._next_keep_time:
            self._next_keep_time += self._keep_hours * 3600
            return
        _cm.remove_checkpoint(prefix, meta_graph_suffix=meta_graph_suffix)

    # -- save and restore -------------------------------------------------------------------
    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Save the variables to ``save_path`` (``save_path-STEP`` with a
        ``global_step``) and return that prefix."""
        if not self._built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        if save_debug_info:
            raise errors.UnimplementedError(None, None, "minitf keeps no GraphDebugInfo; "
                                            "leave save_debug_info=False")
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, int) or isinstance(global_step, bool):
                global_step = training_util.global_step(sess, global_step)
            checkpoint_file = ("%s-%08d" if self._pad_step_number else "%s-%d") \
                % (save_path, global_step)
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename:
                raise ValueError("'latest_filename' collides with 'save_path': '%s' and '%s'"
                                 % (latest_filename, save_path))
        if not hasattr(sess, "run") or not hasattr(sess, "graph"):
            raise TypeError("'sess' must be a Session; %s" % sess)
        parent = os.path.dirname(save_path)
        model_checkpoint_path = None
        if not self._is_empty:
            try:
                result = sess.run(self._save_tensor_name,
                                  {self._filename_tensor_name: checkpoint_file})
            except (errors.FailedPreconditionError, errors.NotFoundError) as exc:
                if not os.path.isdir(parent or "."):
                    raise ValueError("Parent directory of {} doesn't exist, can't save."
                                     .format(save_path)) from None
                raise exc
            model_checkpoint_path = result.decode("utf-8") if isinstance(result, bytes) \
                else str(result)
            if write_state:
                self._record(model_checkpoint_path)
                _cm.update_checkpoint_state(
                    parent, model_checkpoint_path, self.last_checkpoints, latest_filename,
                    save_relative_paths=self._save_relative_paths)
                self._delete_old(meta_graph_suffix)
        if write_meta_graph:
            self._write_meta_graph(sess, _cm.meta_graph_filename(checkpoint_file,
                                                                 meta_graph_suffix),
                                   strip_default_attrs)
        return model_checkpoint_path

    def _write_meta_graph(self, sess, filename, strip_default_attrs):
        try:
            with sess.graph.as_default():
                self.export_meta_graph(filename, strip_default_attrs=strip_default_attrs)
        except ImportError as e:       # no tensorboard package: no TF protos
            if not self._warned_meta:
                warnings.warn("minitf wrote the checkpoint but no .meta file: %s" % e)
                self._warned_meta = True

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False,
                          export_scope=None, clear_devices=False,
                          clear_extraneous_savers=False, strip_default_attrs=False,
                          save_debug_info=False):
        """The graph's ``MetaGraphDef`` with this Saver's SaverDef (written to
        ``filename`` if given)."""
        return meta_graph.export_scoped_meta_graph(
            filename=filename, graph_def=get_default_graph().as_graph_def(add_shapes=True),
            saver_def=self.as_saver_def(), collection_list=collection_list, as_text=as_text,
            export_scope=export_scope, clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs, save_debug_info=save_debug_info)

    def restore(self, sess, save_path):
        """Load every variable from checkpoint ``save_path`` (a prefix)."""
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not _cm.checkpoint_exists(save_path):
            raise ValueError("The passed save_path is not a valid checkpoint: " + save_path)
        logging.info("Restoring parameters from %s", save_path)
        try:
            sess.run(self._restore_op_name, {self._filename_tensor_name: save_path})
        except errors.NotFoundError as err:
            raise _wrap_restore_error(err, "a Variable name or other graph key that is "
                                           "missing") from None
        except errors.InvalidArgumentError as err:
            raise _wrap_restore_error(err, "a mismatch between the current graph and the "
                                           "graph") from None


def _wrap_restore_error(err, what):
    message = ("Restoring from checkpoint failed. This is most likely due to %s from the "
               "checkpoint. Please ensure that you have not altered the graph expected based "
               "on the checkpoint. Original error:\n\n%s" % (what, err.message))
    return type(err)(err.node_def, err.op, message)


# A SaverDef in a meta graph's "savers" collection becomes a Saver on import.
meta_graph.register_proto_function(GraphKeys.SAVERS, "saver_pb2.SaverDef",
                                   to_proto=Saver.to_proto, from_proto=Saver.from_proto)


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, **kwargs):
    """``tf.train.export_meta_graph``: the graph, its collections and a SaverDef
    as TF's ``MetaGraphDef`` (written to ``filename`` if given: binary, or
    text with ``as_text``)."""
    if kwargs:
        raise TypeError("export_meta_graph() got unexpected keyword arguments: %s"
                        % ", ".join(sorted(kwargs)))
    return meta_graph.export_scoped_meta_graph(
        filename=filename, meta_info_def=meta_info_def, graph_def=graph_def,
        saver_def=saver_def, collection_list=collection_list, as_text=as_text, graph=graph,
        export_scope=export_scope, clear_devices=clear_devices,
        clear_extraneous_savers=clear_extraneous_savers,
        strip_default_attrs=strip_default_attrs, save_debug_info=save_debug_info)


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """``tf.train.import_meta_graph``: add a ``.meta`` file's graph and
    collections to the default graph; returns the Saver its SaverDef
    describes (or a new Saver of its variables, or None without variables)."""
    for key in kwargs:
        if key not in ("input_map", "return_elements"):
            raise TypeError("import_meta_graph() got an unexpected keyword argument '%s'" % key)
    meta_graph_def = meta_graph.read_meta_graph_file(meta_graph_or_file) \
        if isinstance(meta_graph_or_file, (str, os.PathLike)) else meta_graph_or_file
    imported = meta_graph.import_scoped_meta_graph(
        meta_graph_def, clear_devices=clear_devices, import_scope=import_scope,
        input_map=kwargs.get("input_map"), return_elements=kwargs.get("return_elements"))
    if meta_graph_def.HasField("saver_def"):
        saver = Saver.from_proto(meta_graph_def.saver_def, import_scope=import_scope)
    elif _variables.global_variables(scope=import_scope):
        saver = Saver()
    else:
        saver = None
    if kwargs.get("return_elements") is not None:
        return saver, imported
    return saver


def add_to_savers_collection(saver):
    """Make ``saver`` the one hooks and MonitoredSession use (TF's default saver)."""
    get_default_graph().add_to_collection(GraphKeys.SAVERS, saver)
    return saver


# TF's functions, re-exported where TF1 programs find them (tf.train.*).
latest_checkpoint = _cm.latest_checkpoint
checkpoint_exists = _cm.checkpoint_exists
get_checkpoint_state = _cm.get_checkpoint_state
update_checkpoint_state = _cm.update_checkpoint_state
generate_checkpoint_state_proto = _cm.generate_checkpoint_state_proto
get_checkpoint_mtimes = _cm.get_checkpoint_mtimes
remove_checkpoint = _cm.remove_checkpoint
