"""The ``tf`` namespace: ``import minitf.compat.v1 as tf``.

Everything a TF1 program reaches through ``tf.`` is re-exported here from the
module that implements it, so a learner can jump from ``tf.matmul`` to its
source in one step.
"""

import importlib
import types as _types

from minitf.framework import dtypes as _dtypes
from minitf.framework import errors  # noqa: F401  (tf.errors)
from minitf.framework.device_spec import MutableDeviceSpec as DeviceSpec  # noqa: F401
from minitf.framework.dtypes import (DType, as_dtype, bfloat16, bool, double,  # noqa: F401,A004
                                     float16, float32, float64, half, int8, int16, int32,
                                     int64, string, uint8, uint16)
from minitf.framework.graph import (Graph, GraphKeys, Operation, Tensor,  # noqa: F401
                                    get_default_graph, reset_default_graph)
from minitf.framework.tensor_shape import Dimension, TensorShape  # noqa: F401
from minitf.ops import array_ops as _array_ops
from minitf.ops import control_flow_ops as _control_flow_ops
from minitf.ops import rnn as _rnn
from minitf.ops import rnn_cell as _rnn_cell
from minitf.ops import while_loop as _while_loop
from minitf.ops import tensor_array_ops as _tensor_array_ops
from minitf import layers, losses, metrics  # noqa: F401  (tf.layers, tf.losses, tf.metrics)
from minitf.ops.accumulator_ops import ConditionalAccumulator  # noqa: F401
from minitf.ops import training_ops as _training_ops  # noqa: F401
from minitf.ops.gradients import (NotDifferentiable, RegisterGradient,  # noqa: F401
                                  gradients)
from minitf.ops.data_flow_ops import (FIFOQueue, PaddingFIFOQueue,  # noqa: F401
                                      PriorityQueue, QueueBase, RandomShuffleQueue)
from minitf.ops.io_ops import (FixedLengthRecordReader, ReaderBase,  # noqa: F401
                               TextLineReader, TFRecordReader, WholeFileReader, decode_csv,
                               decode_raw, read_file, string_to_number)
from minitf.framework import tf_record as _tf_record
from minitf.ops import math_ops as _math_ops
from minitf.ops import special_math_ops as _special
from minitf.ops import scan_ops as _scan_ops
from minitf.ops import sort_ops as _sort_ops
from minitf.ops import linalg_ops as _linalg_ops
from minitf.ops import embedding_ops as _embedding_ops
from minitf.ops import reduction_ops as _reduction_ops
from minitf.ops import nn_ops as _nn_ops
from minitf.ops import conv_ops as _conv_ops
from minitf.ops import batch_norm_ops as _batch_norm_ops
from minitf.ops import random_ops as _random_ops
from minitf.ops import clip_ops as _clip_ops
from minitf.ops import debug_ops as _debug_ops
from minitf.ops import init_ops as _init_ops
from minitf.ops import variable_scope as _variable_scope
from minitf.ops import variables as _variables
from minitf.ops import core as _core
from minitf.ops.core import constant, convert_to_tensor, is_tensor  # noqa: F401
from minitf.runtime.config import (ConfigProto, GPUOptions, GraphOptions,  # noqa: F401
                                   OptimizerOptions, RunMetadata, RunOptions)
from minitf.distributed import client as _client  # noqa: F401  (the grpc:// session factory)
from minitf.runtime.session import (InteractiveSession, Session,  # noqa: F401
                                    get_default_session)

# -- graph building --------------------------------------------------------------------------
placeholder = _array_ops.placeholder
placeholder_with_default = _array_ops.placeholder_with_default
identity = _array_ops.identity
stop_gradient = _array_ops.stop_gradient
reshape = _array_ops.reshape
transpose = _array_ops.transpose
stack = _array_ops.stack
unstack = _array_ops.unstack
concat = _array_ops.concat
one_hot = _array_ops.one_hot
tile = _array_ops.tile
split = _array_ops.split
fill = _array_ops.fill
zeros = _array_ops.zeros
ones = _array_ops.ones
zeros_like = _array_ops.zeros_like
ones_like = _array_ops.ones_like
shape = _array_ops.shape
size = _array_ops.size
rank = _array_ops.rank
expand_dims = _array_ops.expand_dims
squeeze = _array_ops.squeeze
where = _array_ops.where
where_v2 = _array_ops.where_v2
gather_nd = _array_ops.gather_nd
scatter_nd = _array_ops.scatter_nd
boolean_mask = _array_ops.boolean_mask
sequence_mask = _array_ops.sequence_mask

add = _math_ops.add
subtract = _math_ops.subtract
multiply = _math_ops.multiply
divide = _math_ops.divide
truediv = _math_ops.truediv
realdiv = _math_ops.realdiv
floordiv = _math_ops.floordiv
floormod = _math_ops.floormod
mod = _math_ops.mod
pow = _math_ops.pow  # noqa: A001
maximum = _math_ops.maximum
minimum = _math_ops.minimum
squared_difference = _math_ops.squared_difference
negative = _math_ops.negative
abs = _math_ops.abs  # noqa: A001
square = _math_ops.square
sqrt = _math_ops.sqrt
rsqrt = _math_ops.rsqrt
exp = _math_ops.exp
log = _math_ops.log
sign = _math_ops.sign
reciprocal = _math_ops.reciprocal
floor = _math_ops.floor
ceil = _math_ops.ceil
round = _math_ops.round  # noqa: A001
tanh = _math_ops.tanh
sigmoid = _math_ops.sigmoid
cast = _math_ops.cast
to_float = _math_ops.to_float
to_int32 = _math_ops.to_int32
to_int64 = _math_ops.to_int64
equal = _math_ops.equal
not_equal = _math_ops.not_equal
less = _math_ops.less
less_equal = _math_ops.less_equal
greater = _math_ops.greater
greater_equal = _math_ops.greater_equal
logical_and = _math_ops.logical_and
logical_or = _math_ops.logical_or
logical_not = _math_ops.logical_not
add_n = _math_ops.add_n
matmul = _math_ops.matmul
div = _math_ops.div
truncatediv = _math_ops.truncatediv
truncatemod = _math_ops.truncatemod
div_no_nan = _math_ops.div_no_nan
for _name in ("sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh",
              "acosh", "atanh", "expm1", "log1p", "rint", "erf", "erfc", "lgamma", "digamma",
              "polygamma", "zeta"):
    globals()[_name] = getattr(_special, _name)
cumsum = _scan_ops.cumsum
cumprod = _scan_ops.cumprod
sort = _sort_ops.sort
argsort = _sort_ops.argsort
eye = _linalg_ops.eye
trace = _linalg_ops.trace
tensordot = _linalg_ops.tensordot
einsum = _linalg_ops.einsum
matrix_transpose = _linalg_ops.matrix_transpose
matrix_inverse = _linalg_ops.matrix_inverse
matrix_determinant = _linalg_ops.matrix_determinant
cholesky = _linalg_ops.cholesky
matrix_solve = _linalg_ops.matrix_solve
matrix_triangular_solve = _linalg_ops.matrix_triangular_solve
matrix_diag = _linalg_ops.matrix_diag
matrix_diag_part = _linalg_ops.matrix_diag_part
matrix_set_diag = _linalg_ops.matrix_set_diag
matrix_band_part = _linalg_ops.matrix_band_part
dynamic_partition = _embedding_ops.dynamic_partition
dynamic_stitch = _embedding_ops.dynamic_stitch
parallel_dynamic_stitch = _embedding_ops.parallel_dynamic_stitch
reduce_sum = _reduction_ops.reduce_sum
reduce_mean = _reduction_ops.reduce_mean
reduce_max = _reduction_ops.reduce_max
reduce_min = _reduction_ops.reduce_min
reduce_prod = _reduction_ops.reduce_prod
reduce_all = _reduction_ops.reduce_all
reduce_any = _reduction_ops.reduce_any
reduce_logsumexp = _reduction_ops.reduce_logsumexp
count_nonzero = _reduction_ops.count_nonzero
argmax = _reduction_ops.argmax
argmin = _reduction_ops.argmin

random_uniform = _random_ops.random_uniform
random_normal = _random_ops.random_normal
truncated_normal = _random_ops.truncated_normal
multinomial = _random_ops.multinomial
set_random_seed = _random_ops.set_random_seed
get_seed = _random_ops.get_seed

no_op = _control_flow_ops.no_op
cond = _control_flow_ops.cond
reverse = _array_ops.reverse
reverse_v2 = _array_ops.reverse
reverse_sequence = _array_ops.reverse_sequence
while_loop = _while_loop.while_loop
TensorArray = _tensor_array_ops.TensorArray
group = _control_flow_ops.group
tuple = _control_flow_ops.tuple_  # noqa: A001

Variable = _variables.Variable
VariableAggregation = _variables.VariableAggregation
VariableSynchronization = _variables.VariableSynchronization
assign = _variables.assign
assign_add = _variables.assign_add
assign_sub = _variables.assign_sub
is_variable_initialized = _variables.is_variable_initialized
global_variables = _variables.global_variables
all_variables = _variables.all_variables
local_variables = _variables.local_variables
trainable_variables = _variables.trainable_variables
model_variables = _variables.model_variables
variables_initializer = _variables.variables_initializer
initialize_variables = _variables.initialize_variables
global_variables_initializer = _variables.global_variables_initializer
initialize_all_variables = _variables.initialize_all_variables
local_variables_initializer = _variables.local_variables_initializer
initialize_local_variables = _variables.initialize_local_variables
report_uninitialized_variables = _variables.report_uninitialized_variables

Print = _debug_ops.Print
Assert = _debug_ops.Assert
assert_greater_equal = _debug_ops.assert_greater_equal
assert_less_equal = _debug_ops.assert_less_equal
check_numerics = _debug_ops.check_numerics
is_nan = _debug_ops.is_nan
is_inf = _debug_ops.is_inf
is_finite = _debug_ops.is_finite

clip_by_value = _clip_ops.clip_by_value
clip_by_norm = _clip_ops.clip_by_norm
global_norm = _clip_ops.global_norm
clip_by_global_norm = _clip_ops.clip_by_global_norm

AUTO_REUSE = _variable_scope.AUTO_REUSE
VariableScope = _variable_scope.VariableScope
variable_scope = _variable_scope.variable_scope
get_variable = _variable_scope.get_variable
get_variable_scope = _variable_scope.get_variable_scope

zeros_initializer = _init_ops.Zeros
ones_initializer = _init_ops.Ones
constant_initializer = _init_ops.Constant
random_uniform_initializer = _init_ops.RandomUniform
random_normal_initializer = _init_ops.RandomNormal
truncated_normal_initializer = _init_ops.TruncatedNormal
variance_scaling_initializer = _init_ops.VarianceScaling
glorot_uniform_initializer = _init_ops.GlorotUniform
glorot_normal_initializer = _init_ops.GlorotNormal

newaxis = None


# -- scopes -------------------------------------------------------------------------------------
def device(device_name_or_function):
    """Request a device for the ops created in the block (see Graph.device)."""
    return get_default_graph().device(device_name_or_function)


def name_scope(name, default_name=None, values=None):
    """TF1's ``tf.name_scope(name, default_name=None, values=None)``."""
    return _core.name_scope(name, default_name, values)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def container(container_name):
    """Stateful ops created in the block keep their state in this container."""
    return get_default_graph().container(container_name)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


# -- TF2 switches (minitf is always TF1-style) ---------------------------------------------
def disable_eager_execution():
    """minitf only builds graphs, so there is nothing to disable."""


def disable_v2_behavior():
    """minitf already behaves like TF1 (graphs, ref variables, v1 shapes)."""


def disable_resource_variables():
    """minitf variables are TF1 ref variables already."""


def enable_eager_execution(*args, **kwargs):
    raise errors.UnimplementedError(None, None, "minitf runs TF1-style graphs only; eager "
                                    "execution is not part of it. Build a graph and run it "
                                    "in a tf.Session.")


def executing_eagerly():
    return False


def disable_control_flow_v2():
    """minitf always builds TF1's control flow: ``tf.while_loop`` and ``tf.cond``
    are made of Enter/Merge/Switch/NextIteration/Exit ops (TF 2's functional
    ``While`` and ``If`` ops are not part of it), so there is nothing to disable.
    On TF 2 this call is what makes a graph's loops look like minitf's."""


def enable_control_flow_v2():
    raise errors.UnimplementedError(None, None, "minitf builds TF1's control flow only "
                                    "(Enter/Merge/Switch/NextIteration/Exit); TF 2's "
                                    "functional While and If ops are not part of it. Leave "
                                    "control flow v2 disabled.")


def control_flow_v2_enabled():
    return False


# -- sub-namespaces ------------------------------------------------------------------------------
nn = _types.ModuleType("minitf.compat.v1.nn", "tf.nn: activations, losses, "
                        "convolutions, pooling, batch normalization.")
nn.relu = _nn_ops.relu
nn.sigmoid = _nn_ops.sigmoid
nn.tanh = _nn_ops.tanh
nn.softmax = _nn_ops.softmax
nn.log_softmax = _nn_ops.log_softmax
nn.softmax_cross_entropy_with_logits = _nn_ops.softmax_cross_entropy_with_logits
nn.softmax_cross_entropy_with_logits_v2 = _nn_ops.softmax_cross_entropy_with_logits_v2
nn.sparse_softmax_cross_entropy_with_logits = _nn_ops.sparse_softmax_cross_entropy_with_logits
nn.sigmoid_cross_entropy_with_logits = _nn_ops.sigmoid_cross_entropy_with_logits
nn.l2_loss = _nn_ops.l2_loss
nn.bias_add = _nn_ops.bias_add
nn.leaky_relu = _nn_ops.leaky_relu
nn.dropout = _nn_ops.dropout
nn.moments = _nn_ops.moments
nn.l2_normalize = _nn_ops.l2_normalize
nn.dynamic_rnn = _rnn.dynamic_rnn
nn.static_rnn = _rnn.static_rnn
nn.bidirectional_dynamic_rnn = _rnn.bidirectional_dynamic_rnn
nn.rnn_cell = _types.ModuleType("minitf.compat.v1.nn.rnn_cell", "tf.nn.rnn_cell: RNN cells.")
for _name in _rnn_cell.__all__:
    setattr(nn.rnn_cell, _name, getattr(_rnn_cell, _name))
nn.conv2d = _conv_ops.conv2d
nn.conv2d_transpose = _conv_ops.conv2d_transpose
nn.conv2d_backprop_input = _conv_ops.conv2d_backprop_input
nn.conv2d_backprop_filter = _conv_ops.conv2d_backprop_filter
nn.max_pool = _conv_ops.max_pool
nn.max_pool2d = _conv_ops.max_pool2d
nn.avg_pool = _conv_ops.avg_pool
nn.avg_pool2d = _conv_ops.avg_pool2d
nn.max_pool_v2 = _conv_ops.max_pool2d        # TF's N-D versions: minitf pools 2-D inputs
nn.avg_pool_v2 = _conv_ops.avg_pool2d
nn.fused_batch_norm = _batch_norm_ops.fused_batch_norm
nn.batch_normalization = _batch_norm_ops.batch_normalization
nn.top_k = _sort_ops.top_k
nn.in_top_k = _sort_ops.in_top_k
nn.relu6 = _nn_ops.relu6
nn.elu = _nn_ops.elu
nn.selu = _nn_ops.selu
nn.softplus = _nn_ops.softplus
nn.softsign = _nn_ops.softsign
nn.xw_plus_b = _nn_ops.xw_plus_b
nn.weighted_cross_entropy_with_logits = _nn_ops.weighted_cross_entropy_with_logits
nn.embedding_lookup = _embedding_ops.embedding_lookup
nn.dynamic_partition = _embedding_ops.dynamic_partition

math = _types.ModuleType("minitf.compat.v1.math", "tf.math")
for _name in ("add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod",
              "maximum", "minimum", "squared_difference", "negative", "abs", "square", "sqrt",
              "rsqrt", "exp", "log", "sign", "reciprocal", "floor", "ceil", "round", "tanh",
              "sigmoid", "equal", "not_equal", "less", "less_equal", "greater",
              "greater_equal", "logical_and", "logical_or", "logical_not", "add_n",
              "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
              "reduce_all", "reduce_any", "argmax", "argmin", "sin", "cos", "tan", "asin",
              "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1",
              "log1p", "rint", "erf", "erfc", "lgamma", "digamma", "polygamma", "zeta",
              "truncatediv", "truncatemod", "realdiv", "cumsum", "cumprod", "reduce_logsumexp",
              "count_nonzero", "mod"):
    setattr(math, _name, globals()[_name])
math.pow = pow
math.divide_no_nan = div_no_nan
math.top_k = _sort_ops.top_k
math.softplus = _nn_ops.softplus
math.softsign = _nn_ops.softsign
math.in_top_k = _sort_ops.in_top_k

linalg = _types.ModuleType("minitf.compat.v1.linalg", "tf.linalg: matrices and their algebra.")
linalg.matmul = matmul
linalg.inv = matrix_inverse
linalg.det = matrix_determinant
linalg.cholesky = cholesky
linalg.solve = matrix_solve
linalg.triangular_solve = matrix_triangular_solve
linalg.diag = matrix_diag
linalg.diag_part = matrix_diag_part
linalg.set_diag = matrix_set_diag
linalg.band_part = matrix_band_part
linalg.eye = eye
linalg.trace = trace
linalg.tensordot = tensordot
linalg.einsum = einsum
linalg.matrix_transpose = matrix_transpose
linalg.transpose = matrix_transpose
linalg.adjoint = matrix_transpose
linalg.l2_normalize = _nn_ops.l2_normalize
linalg.global_norm = global_norm

dtypes = _dtypes
resource = _dtypes.resource

initializers = _types.ModuleType("minitf.compat.v1.initializers", "tf.initializers")
initializers.zeros = zeros_initializer
initializers.ones = ones_initializer
initializers.constant = constant_initializer
initializers.random_uniform = random_uniform_initializer
initializers.random_normal = random_normal_initializer
initializers.truncated_normal = truncated_normal_initializer
initializers.variance_scaling = variance_scaling_initializer
initializers.glorot_uniform = glorot_uniform_initializer
initializers.glorot_normal = glorot_normal_initializer
initializers.global_variables = global_variables_initializer

queue = _types.ModuleType("minitf.compat.v1.queue", "tf.queue: the queue classes.")
queue.FIFOQueue = FIFOQueue
queue.PaddingFIFOQueue = PaddingFIFOQueue
queue.PriorityQueue = PriorityQueue
queue.RandomShuffleQueue = RandomShuffleQueue
queue.QueueBase = QueueBase

random = _types.ModuleType("minitf.compat.v1.random", "tf.random")
random.uniform = random_uniform
random.normal = random_normal
random.truncated_normal = truncated_normal
random.multinomial = multinomial
random.categorical = _random_ops.categorical
random.set_random_seed = set_random_seed
random.get_seed = get_seed

train = _types.ModuleType("minitf.compat.v1.train", "tf.train: servers and training.")


_TRAIN_LAZY = {
    # input pipelines: queue runners, coordinator, producers, batching
    **{_n: "minitf.train.queue_runner" for _n in (
        "QueueRunner", "add_queue_runner", "start_queue_runners")},
    **{_n: "minitf.train.coordinator" for _n in ("Coordinator", "LooperThread")},
    **{_n: "minitf.train.input" for _n in (
        "string_input_producer", "input_producer", "range_input_producer",
        "slice_input_producer", "limit_epochs", "batch", "shuffle_batch",
        "batch_join", "shuffle_batch_join")},
    "queue_runner": "minitf.train",
    # training: optimizers and the global step
    **{_n: "minitf.train.optimizers" for _n in (
        "GradientDescentOptimizer", "MomentumOptimizer", "AdagradOptimizer",
        "RMSPropOptimizer", "AdamOptimizer")},
    "Optimizer": "minitf.train.optimizer",
    "SyncReplicasOptimizer": "minitf.train.sync_replicas_optimizer",
    **{_n: "minitf.train.monitored_session" for _n in (
        "MonitoredTrainingSession", "MonitoredSession", "SingularMonitoredSession", "Scaffold",
        "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator")},
    "SessionManager": "minitf.train.session_manager",
    **{_n: "minitf.train.hooks" for _n in (
        "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues",
        "StopAtStepHook", "CheckpointSaverHook", "CheckpointSaverListener",
        "LoggingTensorHook", "SummarySaverHook", "StepCounterHook")},
    **{_n: "minitf.train.saver" for _n in (
        "Saver", "latest_checkpoint", "checkpoint_exists", "get_checkpoint_state",
        "update_checkpoint_state", "generate_checkpoint_state_proto", "get_checkpoint_mtimes",
        "remove_checkpoint", "export_meta_graph", "import_meta_graph")},
    **{_n: "minitf.train.checkpoint_management" for _n in (
        "list_variables", "load_variable", "load_checkpoint", "NewCheckpointReader",
        "CheckpointState")},
    "write_graph": "minitf.train.graph_io",
    "summary_iterator": "minitf.summary.reader",
    **{_n: "minitf.train.device_setter" for _n in (
        "replica_device_setter", "GreedyLoadBalancingStrategy", "byte_size_load_fn",
        "RandomStrategy")},
    **{_n: "minitf.train.training_util" for _n in (
        "get_global_step", "create_global_step", "get_or_create_global_step",
        "global_step")},
    # name -> module that defines it; imported on first use, so that
    # `python -m minitf.distributed.server` does not import itself twice.
    **{_n: "minitf.train.learning_rate_decay" for _n in (
        "exponential_decay", "piecewise_constant")},
    "ClusterSpec": "minitf.distributed.cluster_spec",
    "Server": "minitf.distributed.server",
    "Supervisor": "minitf.train.supervisor",
}


def _train_getattr(name):
    module = _TRAIN_LAZY.get(name)
    if module is None:
        raise AttributeError("module 'tf.train' has no attribute '%s'" % name)
    value = getattr(importlib.import_module(module), name)   # lazy import (see above)
    setattr(train, name, value)
    return value


train.__getattr__ = _train_getattr

# -- input pipelines: readers and tf.data ------------------------------------------------
count_up_to = _variables.count_up_to
random_shuffle = _random_ops.random_shuffle
random.shuffle = _random_ops.random_shuffle
range = _array_ops.range_  # noqa: A001
gather = _array_ops.gather
io = _types.ModuleType("minitf.compat.v1.io", "tf.io: reading and parsing files.")
io.decode_csv = decode_csv
io.read_file = read_file
io.decode_raw = decode_raw
python_io = _types.ModuleType("minitf.compat.v1.python_io",
                              "tf.python_io: writing and reading TFRecord files.")
for _name in ("TFRecordWriter", "tf_record_iterator", "TFRecordOptions",
              "TFRecordCompressionType"):
    setattr(python_io, _name, getattr(_tf_record, _name))
    setattr(io, _name, getattr(_tf_record, _name))
strings = _types.ModuleType("minitf.compat.v1.strings", "tf.strings")
strings.to_number = string_to_number
from minitf import data  # noqa: E402,F401  (tf.data)
from minitf import summary  # noqa: E402,F401  (tf.summary)
from minitf.ops.importer import import_graph_def  # noqa: E402,F401
io.write_graph = lambda *a, **k: _train_getattr("write_graph")(*a, **k)

# TF's message classes that TF1 exposes as tf.GraphDef, tf.Summary... (from the
# tensorboard package's copy of TF's protos, imported on first use).
_PROTO_CLASSES = {"GraphDef": "graph_pb2", "NodeDef": "node_def_pb2",
                  "AttrValue": "attr_value_pb2", "MetaGraphDef": "meta_graph_pb2",
                  "Summary": "summary_pb2", "SummaryMetadata": "summary_pb2",
                  "Event": "event_pb2", "SessionLog": "event_pb2",
                  "TensorShapeProto": "tensor_shape_pb2", "TensorProto": "tensor_pb2",
                  "HistogramProto": "summary_pb2", "VariableDef": "variable_pb2"}


def __getattr__(name):
    module = _PROTO_CLASSES.get(name)
    if module is None:
        raise AttributeError("module 'minitf.compat.v1' has no attribute '%s'" % name)
    from minitf.framework.protos import proto   # lazy: the tensorboard package is optional
    return getattr(proto(module), name)

test = _types.ModuleType("minitf.compat.v1.test", "tf.test: helpers for tests and lessons.")


def _create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None,
                          ps_config=None):
    # lazy import, as for tf.train.Server (see _TRAIN_LAZY)
    server = importlib.import_module("minitf.distributed.server")
    return server.create_local_cluster(num_workers, num_ps, protocol, worker_config, ps_config)


_create_local_cluster.__doc__ = "tf.test.create_local_cluster: see minitf.distributed.server."
_create_local_cluster.__name__ = "create_local_cluster"
test.create_local_cluster = _create_local_cluster

from minitf import app as _app  # noqa: E402

app = _types.ModuleType("minitf.compat.v1.app", "tf.app: flags and run(main).")
app.flags = _app.flags
app.run = _app.run
flags = _app.flags

from minitf.framework import tf_logging as _tf_logging  # noqa: E402

# tf.logging holds exactly TF's names (tf_logging.py); tf.get_logger is the logger itself.
logging = _types.ModuleType("minitf.compat.v1.logging",
                            "tf.logging: TF1's log (the \"tensorflow\" logger of Python's "
                            "logging).")
for _name in _tf_logging.__all__:
    setattr(logging, _name, getattr(_tf_logging, _name))
get_logger = _tf_logging.get_logger
get_logger()   # as importing TF does: the "tensorflow" logger gets its handler now (if needed)

__all__ = sorted(n for n in list(globals()) if not n.startswith("_"))
