"""Which checkpoints exist: the ``checkpoint`` state file and friends.

Next to its checkpoints a ``Saver`` keeps a small text file, ``checkpoint``,
naming the newest one and every one still kept (``max_to_keep``), in TF's
format - protobuf text format of TF's ``CheckpointState`` message::

    model_checkpoint_path: "model.ckpt-300"
    all_model_checkpoint_paths: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-300"

``tf.train.latest_checkpoint(dir)`` reads it; that is how a restarted
program (or MonitoredTrainingSession's chief) finds where to go on from. So
the file is never rewritten in place: it is written to a temporary file,
flushed to disk (fsync) and renamed over the old one, so whenever a process
dies the file is the old state or the new one, never half of either.

``CheckpointState`` is not among the messages the tensorboard package ships,
so :class:`CheckpointState` here is a small class with the same fields that
writes and reads exactly the text protobuf writes for it (strings C-escaped,
doubles in the shortest form that reads back the same).
"""

import os
import re

from minitf.framework import tf_logging as logging
from minitf.framework import errors
from minitf.ops.save_restore_ops import (checkpoint_dtype, data_path, read_checkpoint,
                                         write_atomically)


_FIELDS = ("model_checkpoint_path", "all_model_checkpoint_paths",
           "all_model_checkpoint_timestamps", "last_preserved_timestamp")


# -- protobuf's text format for the four fields ------------------------------------------
def _escape(text):
    """protobuf's CEscape of a string's UTF-8 bytes (what text_format writes)."""
    out = []
    for b in text.encode("utf-8"):
        c = chr(b)
        if c in '"\'\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif 0x20 <= b < 0x7f:
            out.append(c)
        else:
            out.append("\\%03o" % b)
    return "".join(out)


_UNESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))", re.S)
_SIMPLE = {"n": b"\n", "r": b"\r", "t": b"\t", "a": b"\a", "b": b"\b", "f": b"\f",
           "v": b"\v", "\\": b"\\", "'": b"'", '"': b'"', "?": b"?"}


def _unescape(text):
    raw = bytearray()
    pos = 0
    for m in _UNESCAPE.finditer(text):
        raw += text[pos:m.start()].encode("utf-8")
        octal, hexa, char = m.groups()
        if octal:
            raw.append(int(octal, 8) & 0xFF)
        elif hexa:
            raw.append(int(hexa, 16))
        elif char in _SIMPLE:
            raw += _SIMPLE[char]
        else:
            raise ValueError("Invalid escape sequence \\%s" % char)
        pos = m.end()
    raw += text[pos:].encode("utf-8")
    return raw.decode("utf-8")


def _double(value):
    """A double as protobuf's text format writes it (``1e+10``, ``0.5``, ``3``)."""
    value = float(value)
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    text = repr(value)
    if text.endswith(".0"):
        text = text[:-2]
    return text


class ParseError(ValueError):
    """The ``checkpoint`` file is not a CheckpointState in text format."""


class CheckpointState:
    """TF's ``CheckpointState`` message: the newest checkpoint, every kept one
    (oldest first) and, optionally, when each was written."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=None,
                 all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths or [])
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps or [])
        self.last_preserved_timestamp = float(last_preserved_timestamp or 0.0)

    def __str__(self):
        lines = []
        if self.model_checkpoint_path:
            lines.append('model_checkpoint_path: "%s"' % _escape(self.model_checkpoint_path))
        lines += ['all_model_checkpoint_paths: "%s"' % _escape(p)
                  for p in self.all_model_checkpoint_paths]
        lines += ["all_model_checkpoint_timestamps: %s" % _double(t)
                  for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp:
            lines.append("last_preserved_timestamp: %s" % _double(self.last_preserved_timestamp))
        return "".join(line + "\n" for line in lines)

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, CheckpointState) and str(self) == str(other)

    @classmethod
    def parse(cls, text):
        """Read the text format (TF's ``text_format.Merge``; fields in any order)."""
        state = cls()
        pattern = re.compile(r'\s*(\w+)\s*:\s*("(?:[^"\\\n]|\\.)*"|[-+0-9.eEinfatINFAT]+)\s*',
                             re.S)
        pos = 0
        text = re.sub(r"#[^\n]*", "", text)
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = pattern.match(text, pos)
            if not m:
                raise ParseError("%d:%d : Message type \"tensorflow.CheckpointState\" could "
                                 "not parse the text at %r" % (text.count("\n", 0, pos) + 1,
                                                              pos, text[pos:pos + 20]))
            field, value = m.group(1), m.group(2)
            if field not in _FIELDS:
                raise ParseError('Message type "tensorflow.CheckpointState" has no field '
                                 'named "%s".' % field)
            if field in ("model_checkpoint_path", "all_model_checkpoint_paths"):
                if not value.startswith('"'):
                    raise ParseError("Expected string for field %s" % field)
                value = _unescape(value[1:-1])
                if field == "model_checkpoint_path":
                    state.model_checkpoint_path = value
                else:
                    state.all_model_checkpoint_paths.append(value)
            else:
                try:
                    number = float(value)
                except ValueError:
                    raise ParseError("Couldn't parse double: %s" % value) from None
                if field == "last_preserved_timestamp":
                    state.last_preserved_timestamp = number
                else:
                    state.all_model_checkpoint_timestamps.append(number)
            pos = m.end()
        return state


# -- TF's functions -----------------------------------------------------------------------
def _state_file(save_dir, latest_filename=None):
    return os.path.join(save_dir, latest_filename or "checkpoint")


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None):
    """A CheckpointState; paths are made relative to a relative ``save_dir``, as TF does."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps and \
            len(all_model_checkpoint_timestamps) != len(paths):
        raise ValueError("Checkpoint timestamps, if provided, must match checkpoint paths "
                         "(got paths %s and timestamps %s)"
                         % (paths, all_model_checkpoint_timestamps))
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    return CheckpointState(model_checkpoint_path, paths, all_model_checkpoint_timestamps,
                           last_preserved_timestamp)


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=False):
    """(Re)write the ``checkpoint`` file of ``save_dir``, atomically."""
    paths = list(all_model_checkpoint_paths or [])
    if save_relative_paths:
        rel = lambda p: os.path.relpath(p, save_dir) if os.path.isabs(p) else p  # noqa: E731
        model_checkpoint_path, paths = rel(model_checkpoint_path), [rel(p) for p in paths]
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, paths,
                                            all_model_checkpoint_timestamps,
                                            last_preserved_timestamp)
    filename = _state_file(save_dir, latest_filename)
    if filename == state.model_checkpoint_path:
        raise RuntimeError("Save path '%s' conflicts with path used for checkpoint state.  "
                           "Please use a different save path." % model_checkpoint_path)
    text = str(state).encode("utf-8")
    write_atomically(filename, lambda f: f.write(text))


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of ``checkpoint_dir`` (relative paths joined to it),
    or None if there is no ``checkpoint`` file or it cannot be parsed."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    filename = _state_file(checkpoint_dir, latest_filename)
    try:
        with open(filename, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        _log_ignored(filename, e)
        return None
    try:
        state = CheckpointState.parse(text)
    except ParseError as e:
        _log_ignored(filename, e)
        return None
    if not state.model_checkpoint_path:
        raise ValueError("Invalid checkpoint state loaded from " + checkpoint_dir)
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)
                                        for p in state.all_model_checkpoint_paths]
    return state


def _log_ignored(filename, e):
    logging.warning("%s: %s\n%s: Checkpoint ignored",
                                              type(e).__name__, e, filename)


def checkpoint_exists(checkpoint_prefix):
    """Whether a checkpoint was written under ``checkpoint_prefix``."""
    return os.path.exists(data_path(os.fspath(checkpoint_prefix)))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint named by ``checkpoint_dir/checkpoint``, if its
    file exists; else None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path:
        if checkpoint_exists(state.model_checkpoint_path):
            return state.model_checkpoint_path
        logging.error("Couldn't match files for checkpoint %s",
                                                state.model_checkpoint_path)
    return None


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification time of each checkpoint that exists."""
    out = []
    for prefix in checkpoint_prefixes:
        try:
            out.append(os.stat(data_path(prefix)).st_mtime)
        except OSError:
            pass
    return out


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=2, meta_graph_suffix="meta"):
    """Delete a checkpoint's data file and its ``.meta`` file."""
    for path in (data_path(checkpoint_prefix), meta_graph_filename(checkpoint_prefix,
                                                                   meta_graph_suffix)):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def meta_graph_filename(checkpoint_filename, meta_graph_suffix="meta"):
    """``model.ckpt-300`` -> ``model.ckpt-300.meta`` (without a shard suffix)."""
    base = re.sub(r"-[\d\?]+-of-\d+$", "", checkpoint_filename)
    return ".".join([base, meta_graph_suffix])


# -- reading a checkpoint's variables ------------------------------------------------------
def _checkpoint_prefix(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given "
                             "directory %s" % path)
        return found
    return path


class CheckpointReader:
    """TF's ``NewCheckpointReader``: the tensors of one checkpoint by name."""

    def __init__(self, prefix):
        self._prefix = prefix
        self._values = read_checkpoint(prefix)

    def get_tensor(self, name):
        if name not in self._values:
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint" % name)
        return self._values[name].copy()

    def has_tensor(self, name):
        return name in self._values

    def get_variable_to_shape_map(self):
        return {k: list(v.shape) for k, v in self._values.items()}

    def get_variable_to_dtype_map(self):
        return {k: checkpoint_dtype(v) for k, v in self._values.items()}

    def debug_string(self):
        return "".join("%s (%s) %s\n" % (k, checkpoint_dtype(v).name, list(v.shape))
                       for k, v in sorted(self._values.items())).encode("utf-8")


def load_checkpoint(ckpt_dir_or_file):
    """A :class:`CheckpointReader` of a checkpoint (or of a directory's newest one)."""
    return CheckpointReader(_checkpoint_prefix(ckpt_dir_or_file))


NewCheckpointReader = CheckpointReader


def list_variables(ckpt_dir_or_file):
    """``[(name, shape), ...]`` of every tensor in the checkpoint, sorted by name."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return sorted(reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    """The value of one tensor of a checkpoint (``"w:0"`` reads ``w``)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
