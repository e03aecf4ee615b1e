"""``ConfigProto``, ``RunOptions`` and friends, as plain Python objects.

TF defines these as protocol buffers; minitf keeps the same field names and
defaults, and prints them in protobuf text format (only fields that differ
from their default), so ``print(config)`` looks the same as in TF.
"""

from minitf.framework import errors
from minitf.runtime import run_metadata_proto


class _Message:
    """A tiny protobuf-like record: declared fields with defaults."""

    _fields = ()  # (name, default) pairs; a default that is a class is a sub-message

    def __init__(self, **kwargs):
        for name, default in self._fields:
            value = kwargs.pop(name, None)
            if value is None:
                value = default() if isinstance(default, type) else \
                    type(default)(default) if isinstance(default, (dict, list)) else default
            elif isinstance(default, dict):
                value = dict(value)
            object.__setattr__(self, name, value)
        if kwargs:
            raise ValueError('Protocol message %s has no "%s" field.'
                             % (type(self).__name__, next(iter(kwargs))))

    def __setattr__(self, name, value):
        if name not in dict(self._fields):
            raise AttributeError('Assignment not allowed (no field "%s" in protocol message '
                                 '%s).' % (name, type(self).__name__))
        object.__setattr__(self, name, value)

    def _text(self, indent=""):
        lines = []
        for name, default in self._fields:
            value = getattr(self, name)
            if isinstance(default, type):
                inner = value._text(indent + "  ")
                if inner:
                    lines.append("%s%s {\n%s%s}\n" % (indent, name, inner, indent))
            elif isinstance(default, dict):
                for k in sorted(value):
                    lines.append('%s%s {\n%s  key: "%s"\n%s  value: %s\n%s}\n'
                                 % (indent, name, indent, k, indent, value[k], indent))
            elif isinstance(default, list):
                for item in value:
                    text = item._text(indent + "  ") if isinstance(item, _Message) \
                        else '"%s"' % item
                    lines.append("%s%s {\n%s%s}\n" % (indent, name, text, indent)
                                 if isinstance(item, _Message) else
                                 "%s%s: %s\n" % (indent, name, text))
            elif value != default:
                if isinstance(value, bool):
                    text = "true" if value else "false"
                elif isinstance(value, str):
                    text = '"%s"' % value
                else:
                    text = str(value)
                lines.append("%s%s: %s\n" % (indent, name, text))
        return "".join(lines)

    def __str__(self):
        return self._text()

    def __repr__(self):
        return self._text()

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n, _ in self._fields)

    def CopyFrom(self, other):  # noqa: N802  (protobuf API)
        for name, _ in self._fields:
            object.__setattr__(self, name, getattr(other, name))


class GPUOptions(_Message):
    """GPU memory settings (used by minitf's GPU devices). The budget of a
    virtual GPU, ``virtual_memory_limit_mb`` (0: 2 GiB), is a minitf field."""
    _fields = (("per_process_gpu_memory_fraction", 0.0), ("allow_growth", False),
               ("visible_device_list", ""), ("virtual_memory_limit_mb", 0))


class OptimizerOptions(_Message):
    """TF's graph optimizer settings. ``opt_level``: ``L1`` (0, the default)
    folds constants (minitf/runtime/constant_folding.py, as TF's L1 does),
    fuses elementwise chains and skips ops whose values nobody reads (TF's
    Grappler does that too; TF's L1 also removes common subexpressions).
    ``L0`` (-1) runs every op as built, unless ``do_constant_folding=True``
    asks for folding anyway (TF's GraphOptimizer reads the two fields the same
    way). Common-subexpression elimination is refused: minitf does not do
    it."""
    L1 = 0
    L0 = -1
    DEFAULT = 0
    _fields = (("do_common_subexpression_elimination", False),
               ("do_constant_folding", False), ("opt_level", 0))


class GraphOptions(_Message):
    """Graph optimisations: ``optimizer_options`` (above) and two
    minitf-specific fields: ``fuse_elementwise`` (on by default) and
    ``transfer_compression`` ("", "bfloat16" or "int8": encode float32
    tensors that cross tasks, see minitf/distributed/partition.py).

    ``place_pruned_graph``: minitf always places only the ops a step needs,
    which is TF's ``place_pruned_graph=True``; TF's default, False, places
    the whole graph first (and fails on an op nobody runs). ``infer_shapes``
    (``_output_shapes`` in GraphDefs) is refused: minitf writes no GraphDefs."""
    _fields = (("optimizer_options", OptimizerOptions), ("infer_shapes", False),
               ("place_pruned_graph", False), ("fuse_elementwise", True),
               ("transfer_compression", ""))

    def _text(self, indent=""):
        text = super()._text(indent)
        return "\n".join(line for line in text.split("\n")
                         if not line.strip().startswith("fuse_elementwise")) \
            if self.fuse_elementwise else text


class ConfigProto(_Message):
    """Session configuration, field for field as in TF."""
    _fields = (("device_count", {}), ("intra_op_parallelism_threads", 0),
               ("inter_op_parallelism_threads", 0), ("use_per_session_threads", False),
               ("gpu_options", GPUOptions), ("allow_soft_placement", False),
               ("log_device_placement", False), ("graph_options", GraphOptions),
               ("operation_timeout_in_ms", 0), ("isolate_session_state", False),
               ("device_filters", []))


class RunOptions(_Message):
    """Per-``run`` options: tracing and a deadline."""
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3
    _fields = (("trace_level", 0), ("timeout_in_ms", 0), ("inter_op_thread_pool", 0),
               ("output_partition_graphs", False))


class AllocationDescription(_Message):
    """The memory a tensor took: TF's ``allocation_description``."""
    _fields = (("requested_bytes", 0), ("allocated_bytes", 0))


class TensorDescription(_Message):
    """A tensor an op made: dtype, shape and bytes. ``requested_bytes`` is
    minitf's short way; ``allocation_description.requested_bytes`` is where TF
    keeps the same number, so code written for TF's step stats runs here too."""
    _fields = (("dtype", ""), ("shape", []), ("requested_bytes", 0))

    @property
    def allocation_description(self):
        return AllocationDescription(requested_bytes=self.requested_bytes,
                                     allocated_bytes=self.requested_bytes)


class NodeOutput(_Message):
    _fields = (("slot", 0), ("tensor_description", TensorDescription))


class AllocatorMemoryUsed(_Message):
    """GPU memory seen by one allocator: bytes this op allocated
    (``total_bytes``), the step's peak so far and the live bytes after it."""
    _fields = (("allocator_name", ""), ("total_bytes", 0), ("peak_bytes", 0),
               ("live_bytes", 0), ("allocator_bytes_in_use", 0))


class NodeExecStats(_Message):
    """What one op did in one step: when it ran (µs since the epoch and
    relative to its start), what it produced and (on a GPU) what memory it took."""
    _fields = (("node_name", ""), ("op_type", ""), ("all_start_micros", 0),
               ("op_start_rel_micros", 0), ("op_end_rel_micros", 0),
               ("all_end_rel_micros", 0), ("output", []), ("timeline_label", ""),
               ("thread_id", 0), ("memory", []))


class DeviceStepStats(_Message):
    _fields = (("device", ""), ("node_stats", []))


class Transfer(_Message):
    """A tensor that crossed from one device/task to another (a minitf field).
    ``edge``: the ``tensor_name`` of the Send/Recv pair that carried it (as
    the partition graphs name it), empty for a copy or a fetch."""
    _fields = (("tensor", ""), ("src_device", ""), ("dst_device", ""), ("bytes", 0),
               ("start_micros", 0), ("end_micros", 0), ("wire_bytes", 0), ("edge", ""))


class StepStats(_Message):
    """``memory`` (a minitf field): one AllocatorMemoryUsed per GPU at the end of
    the step, with the step's peak and the bytes still live (variables)."""
    _fields = (("dev_stats", []), ("transfers", []), ("memory", []))


class RunMetadata(_Message):
    """Filled by ``sess.run(..., run_metadata=md)``.

    ``placement`` (op name -> device) and ``soft_placed`` (ops that soft
    placement moved off the device they asked for) are always filled;
    ``step_stats`` when tracing is on; ``partition_graphs`` (TF's
    GraphDefs, one per device, Send/Recv included: partition_graphs.py)
    when ``RunOptions.output_partition_graphs`` is set, else empty.
    ``placement``, ``soft_placed`` and ``step_stats.transfers`` are minitf
    fields that the widgets read.
    """
    _fields = (("step_stats", StepStats), ("partition_graphs", []),
               ("placement", {}), ("soft_placed", []))

    def to_proto(self):
        """TF's ``RunMetadata`` message with this step's stats and partition
        graphs (see minitf/runtime/run_metadata_proto.py)."""
        return run_metadata_proto.run_metadata_to_proto(self)

    def SerializeToString(self):  # noqa: N802  (protobuf API)
        """TF's bytes for this RunMetadata (what ``FileWriter.add_run_metadata``
        and TF's tools store)."""
        return self.to_proto().SerializeToString()


# -- what minitf does with each option -------------------------------------------------------
def _unsupported(what, instead):
    return errors.UnimplementedError(None, None, "minitf does not support %s. %s"
                                     % (what, instead))


def check_supported(config, remote=False):
    """Refuse, with a message, every ConfigProto option minitf cannot honour
    (every other field is honoured; none is silently ignored)."""
    opt = config.graph_options.optimizer_options
    if opt.do_common_subexpression_elimination:
        raise _unsupported("common subexpression elimination "
                           "(optimizer_options.do_common_subexpression_elimination)",
                           "Leave it unset: every op runs as built.")
    if opt.opt_level not in (OptimizerOptions.L1, OptimizerOptions.L0):
        raise _unsupported("optimizer_options.opt_level=%r" % (opt.opt_level,),
                           "Use OptimizerOptions.L1 (the default) or L0.")
    if config.graph_options.infer_shapes:
        raise _unsupported("graph_options.infer_shapes (shapes in GraphDefs)",
                           "Read a tensor's static shape with tensor.shape.")
    if config.isolate_session_state and remote:
        raise _unsupported("isolate_session_state on a server",
                           "Sessions on one server share its resource containers; use "
                           "tf.container(name) to keep a session's state apart.")
    if config.intra_op_parallelism_threads < 0 or config.inter_op_parallelism_threads < 0:
        raise _unsupported("a negative thread count", "Use 0 (one per core) or more.")


def check_run_options(options):
    """Refuse RunOptions minitf cannot honour."""
    if options is not None and options.inter_op_thread_pool:
        raise _unsupported("RunOptions.inter_op_thread_pool=%d" % options.inter_op_thread_pool,
                           "A session has one inter-op pool "
                           "(ConfigProto.inter_op_parallelism_threads).")


def fold_constants(config):
    """Whether a session with ``config`` folds constants (see constant_folding.py):
    at ``opt_level`` L1, the default, or when ``do_constant_folding`` is set."""
    options = config.graph_options.optimizer_options
    return options.opt_level != OptimizerOptions.L0 or bool(options.do_constant_folding)


def skip_unread(config):
    """Whether a session with ``config`` skips ops whose values nobody reads
    (dependency_optimizer.py): unless ``opt_level`` is L0."""
    return config.graph_options.optimizer_options.opt_level != OptimizerOptions.L0


def fuse_elementwise(config):
    """Whether a session with ``config`` fuses elementwise chains: on unless
    ``graph_options.fuse_elementwise`` is False or ``opt_level`` is L0."""
    graph_options = config.graph_options
    return bool(graph_options.fuse_elementwise) and \
        graph_options.optimizer_options.opt_level != OptimizerOptions.L0
