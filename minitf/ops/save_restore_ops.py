"""``SaveV2`` and ``RestoreV2``: the graph ops a ``tf.train.Saver`` runs.

As in TF, saving is a step of the graph: the Saver builds a ``SaveV2`` op
that reads every variable and writes them under a *prefix*, and a
``RestoreV2`` op whose outputs feed one ``Assign`` per variable. Like every
op they run where they are placed (the variables' values travel to them as
to any op), so a checkpoint can be written by any task of a cluster.

The file: ``PREFIX.npz``, one array per tensor name (numpy's ``.npz``, read
with ``allow_pickle=False``, so a checkpoint can never run code). TF writes
its own "tensor bundle" (``PREFIX.index`` + ``PREFIX.data-00000-of-00001``)
instead; the graph, the names and the Saver's behaviour are TF's, the bytes
on disk are minitf's. A string tensor is stored as its lengths and its
bytes end to end, bfloat16 as its 16 bits, with a small ``__minitf_dtypes__`` table so each
comes back as what it was.

A save is atomic: the file is written to a temporary name that says which
host and process writes it (``PREFIX.npz.tmp.<host>.<pid>.<random>``),
flushed to disk, then renamed over ``PREFIX.npz``; a process killed
mid-save leaves at worst its temporary file, which the next successful save
into that directory removes (:func:`remove_stale_temp_files`).
"""

import os
import re
import socket
import uuid

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.op_def import NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.core import convert_to_tensor, make_op, name_scope

SUFFIX = ".npz"
_DTYPES_KEY = "__minitf_dtypes__"
_BYTES = "__minitf_bytes__/"     # + name: the bytes of a string tensor, end to end
_TEMP = re.compile(r"^(?P<base>.+)\.tmp\.(?P<host>[^.]+)\.(?P<pid>\d+)\.[0-9a-f]+$")


# -- the file ------------------------------------------------------------------------------------
def data_path(prefix):
    """The file that holds checkpoint ``prefix``."""
    return prefix + SUFFIX


def temp_path(path):
    """A temporary name next to ``path``, naming this host and process."""
    return "%s.tmp.%s.%d.%s" % (path, _host(), os.getpid(), uuid.uuid4().hex[:12])


def _host():
    return re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname()) or "host"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_writing = set()   # temporary files this process is writing now


def remove_stale_temp_files(directory):
    """Delete the temporary files in ``directory`` whose writer is gone: a
    process of this host that no longer runs, or this process when it is not
    writing them. Returns the paths removed."""
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    host, me = _host(), os.getpid()
    for name in names:
        match = _TEMP.match(name)
        if not match or match.group("host") != host:
            continue
        path = os.path.join(directory, name)
        pid = int(match.group("pid"))
        if (pid == me and path not in _writing) or (pid != me and not _alive(pid)):
            try:
                os.remove(path)
                removed.append(path)
            except FileNotFoundError:
                pass
    return removed


def write_atomically(path, write):
    """Call ``write(file)`` on a temporary file, fsync it, rename it to ``path``
    and fsync the directory: ``path`` is the old file or the new one, whole."""
    tmp = temp_path(path)
    _writing.add(tmp)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    finally:
        _writing.discard(tmp)
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def write_checkpoint(prefix, named_values):
    """Write ``{name: array}`` as checkpoint ``prefix`` (atomically)."""
    directory = os.path.dirname(os.path.abspath(prefix))
    if not os.path.isdir(directory):
        raise errors.NotFoundError(None, None, "Failed to create a NewWriteableFile: %s : "
                                   "No such file or directory (the directory %s does not "
                                   "exist: create it first)" % (data_path(prefix), directory))
    arrays, kinds = {}, []
    for name, value in named_values.items():
        if name == _DTYPES_KEY or name.startswith(_BYTES):
            raise errors.InvalidArgumentError(None, None, "%s is a reserved tensor name"
                                              % name)
        value = np.asarray(value)
        if value.dtype == object:
            kinds.append((name, "string"))
            flat = [bytes(v) for v in value.reshape(-1)]
            arrays[_BYTES + name] = np.frombuffer(b"".join(flat), dtype=np.uint8)
            value = np.array([len(v) for v in flat], dtype=np.int64).reshape(value.shape)
        elif value.dtype == dtypes.bfloat16.np_dtype:
            kinds.append((name, "bfloat16"))
            value = value.view(np.uint16)
        arrays[name] = value
    if kinds:
        arrays[_DTYPES_KEY] = np.array(["%s=%s" % k for k in kinds], dtype=bytes)
    write_atomically(data_path(prefix), lambda f: np.savez(f, **arrays))
    remove_stale_temp_files(directory)


def read_checkpoint(prefix, names=None):
    """``{name: array}`` of checkpoint ``prefix`` (only ``names`` if given)."""
    path = data_path(prefix)
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, "Unsuccessful TensorSliceReader constructor: "
                                   "Failed to find any matching files for %s" % prefix) \
            from None
    except (ValueError, OSError) as e:
        raise errors.DataLossError(None, None, "Unable to open table file %s: %s (the file is "
                                   "not a minitf checkpoint, or it is damaged)" % (path, e)) \
            from None
    with data:
        kinds = {}
        if _DTYPES_KEY in data.files:
            kinds = dict(k.decode().split("=", 1) for k in data[_DTYPES_KEY])
        wanted = [n for n in data.files if n != _DTYPES_KEY and not n.startswith(_BYTES)] \
            if names is None else names
        out = {}
        for name in wanted:
            if name not in data.files or name == _DTYPES_KEY or name.startswith(_BYTES):
                raise errors.NotFoundError(None, None, "Key %s not found in checkpoint"
                                           % name)
            value = data[name]
            if kinds.get(name) == "string":
                blob = data[_BYTES + name].tobytes()
                lengths = value.reshape(-1)
                ends = np.cumsum(lengths)
                flat = np.empty(lengths.size, dtype=object)
                for i, (end, n) in enumerate(zip(ends, lengths)):
                    flat[i] = blob[end - n:end]
                value = flat.reshape(value.shape)
            elif kinds.get(name) == "bfloat16":
                value = value.view(dtypes.bfloat16.np_dtype)
            out[name] = value
        return out


def checkpoint_dtype(value):
    return dtypes.dtype_of_numpy(np.asarray(value))


# -- the ops --------------------------------------------------------------------------------------
def _slices_supported(slices):
    for s in np.asarray(slices, dtype=object).reshape(-1):
        if s:
            raise errors.UnimplementedError(
                None, None, "minitf saves and restores whole tensors; the slice %r (a "
                "partitioned variable) is not supported" % (s,))


def _scalar_text(value, what):
    value = np.asarray(value, dtype=object)
    if value.shape != ():
        raise errors.InvalidArgumentError(None, None, "Input %s should be a scalar string, "
                                          "but has shape %s" % (what, list(value.shape)))
    v = value.item()
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def _save_kernel(op, backend):
    """Write ``tensors`` under ``tensor_names`` as checkpoint ``prefix``."""
    def compute(ctx, inputs):
        prefix = _scalar_text(inputs[0], "prefix")
        names = [n.decode("utf-8") for n in np.asarray(inputs[1], dtype=object).reshape(-1)]
        _slices_supported(inputs[2])
        tensors = inputs[3:]
        if len(names) != len(tensors):
            raise errors.InvalidArgumentError(None, None, "Got %d tensor names but %d tensors"
                                              % (len(names), len(tensors)))
        write_checkpoint(prefix, dict(zip(names, tensors)))
        return []
    return compute


SAVE_V2 = declare(OpDef(
    "SaveV2", inputs=("prefix", "tensor_names", "shape_and_slices", "*tensors"),
    attrs=("dtypes",), gradient=NOT_DIFFERENTIABLE, stateful=True, kernel=_save_kernel))


def _restore_kernel(op, backend):
    """Read ``tensor_names`` of checkpoint ``prefix``, checking each dtype."""
    wanted = op.get_attr("dtypes")

    def compute(ctx, inputs):
        prefix = _scalar_text(inputs[0], "prefix")
        names = [n.decode("utf-8") for n in np.asarray(inputs[1], dtype=object).reshape(-1)]
        _slices_supported(inputs[2])
        values = read_checkpoint(prefix, names)
        out = []
        for name, dt in zip(names, wanted):
            value = values[name]
            have = checkpoint_dtype(value)
            if have != dt.base_dtype:
                raise errors.InvalidArgumentError(
                    None, None, "tensor_name = %s; expected dtype %s does not equal original "
                    "dtype %s" % (name, dt.base_dtype.name, have.name))
            out.append(value)
        return out
    return compute


RESTORE_V2 = declare(OpDef(
    "RestoreV2", inputs=("prefix", "tensor_names", "shape_and_slices"), attrs=("dtypes",),
    gradient=NOT_DIFFERENTIABLE, stateful=True, kernel=_restore_kernel))


def _strings(values, name):
    return convert_to_tensor(np.array(list(values), dtype=object).astype(object),
                             dtype=dtypes.string, name=name)


def save_v2(prefix, tensor_names, shape_and_slices, tensors, name=None):
    """A ``SaveV2`` op (TF's ``io_ops.save_v2``)."""
    with name_scope(name, "SaveV2", []) as scope:
        names_t = _strings(tensor_names, "tensor_names")
        slices_t = _strings(shape_and_slices, "shape_and_slices")
        tensors = [convert_to_tensor(t) for t in tensors]
        return make_op(SAVE_V2, [convert_to_tensor(prefix), names_t, slices_t] + tensors, [],
                       [], name=scope, attrs={"dtypes": [t.dtype.base_dtype for t in tensors]})


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes_, shapes=None, name=None):
    """A ``RestoreV2`` op; returns its output tensors (``shapes``: their static
    shapes when known, e.g. the variables they restore)."""
    with name_scope(name, "RestoreV2", []) as scope:
        names_t = _strings(tensor_names, "tensor_names")
        slices_t = _strings(shape_and_slices, "shape_and_slices")
        dts = [dtypes.as_dtype(d).base_dtype for d in dtypes_]
        shapes = shapes or [TensorShape(None)] * len(dts)
        op = make_op(RESTORE_V2, [convert_to_tensor(prefix), names_t, slices_t], dts, shapes,
                     name=scope, attrs={"dtypes": dts})
    return op.outputs
