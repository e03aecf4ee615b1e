"""TF1 ref variables: ``VariableV2``, ``v/read``, ``v/Assign``.

A ``tf.Variable(0.0, name="v")`` adds four ops to the graph::

    v/initial_value (Const) --> v/Assign (Assign) <-- v (VariableV2)
                                                        |
                                                        v
                                                     v/read (Identity)

``v`` outputs a *reference* to a buffer kept in the session's (or server's)
resource manager, not a value. ``v/Assign`` writes the initial value through
that reference; it is ``v.initializer``. ``v/read`` reads the current value;
it is what ``v`` means when used in math (``v * 2``). Reading before the
initializer ran fails with "Attempting to use uninitialized value v".

The buffer outlives ``sess.run`` calls, and on a server it outlives sessions:
that is how two sessions on one server share a variable.
"""

import collections
import threading

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.default_session import session_for
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.framework.op_def import ANY_DTYPE, NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.protos import proto
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops import array_ops, control_flow_ops, math_ops
from minitf.ops.core import constant, convert_to_tensor, make_op, name_scope
from minitf.ops.elementwise import FLOAT_NAMES


# -- the buffer behind a variable -------------------------------------------------------------
class VariableResource:
    """The buffer behind a TF1 ref variable, kept in a device's resource manager.

    As in TF1, a read (``v/read``) does not copy: it hands out a read-only
    *view* of the buffer, and assignments write into the buffer in place. So
    an op that runs after an assign sees the new value even through a read
    made earlier in the step - TF1's ref semantics, which
    ``control_dependencies`` lessons rely on. Fetching a variable copies it
    (read-only arrays are copied on the way to the client).

    ``lock`` serialises read-modify-write updates (``assign_add``) so
    concurrent steps never lose an increment.
    """

    kind = "Variable"

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value = None   # read-only view of _buffer, handed to readers
        self._buffer = None
        self.lock = threading.Lock()
        self.version = 0  # number of writes so far (staleness measurements use it)
        # staleness -> count: for each update by an optimizer, how many other
        # updates happened between the step's read of the variable and it.
        self.staleness = collections.Counter()

    @property
    def initialized(self):
        return self.value is not None

    def read(self):
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None, "Attempting to use uninitialized value %s" % self.name)
        return value

    def write(self, value):
        """Store ``value``: in place when shape and dtype match, else in a new
        buffer (``validate_shape=False`` assignments may change the shape)."""
        buf = self._buffer
        if buf is not None and buf.shape == value.shape and buf.dtype == value.dtype:
            np.copyto(buf, value)
        else:
            buf = self._buffer = np.array(value, copy=True)
            view = buf.view()
            view.flags.writeable = False
            self.value = view
        self.version += 1

    def record_update(self, read_version):
        """Count one optimizer update; ``read_version`` is the version the
        step read (None when the step did not read this variable)."""
        if read_version is not None:
            self.staleness[self.version - read_version] += 1
        self.version += 1

    def summary(self):
        v = self.value
        out = {"kind": self.kind, "name": self.name, "dtype": self.dtype.name,
               "shape": list(v.shape) if v is not None else self.shape.as_tuple_or_none(),
               "initialized": v is not None, "version": self.version}
        if self.staleness:
            out["staleness"] = dict(self.staleness)
        return out

    def nbytes(self):
        v = self.value
        return 0 if v is None or v.dtype == np.dtype(object) else int(v.nbytes)


def read_ref(value):
    """A variable reference becomes its current value (a plain array passes)."""
    if isinstance(value, VariableResource):
        return value.read()
    return value


# -- the ops ------------------------------------------------------------------------------------
# On a GPU, variables of float types only (TF has no int32 GPU variable kernel:
# ``tf.Variable(1)`` pinned to a GPU needs soft placement).
_VARIABLE_DEVICES = {"CPU": ANY_DTYPE, "GPU": FLOAT_NAMES}


def _variable_kernel(op, backend):
    container = op.get_attr("container")
    name = op.get_attr("shared_name") or op.name
    dt, shape = op.get_attr("dtype"), op.get_attr("shape")

    def compute(ctx, inputs):
        resource = ctx.resources.lookup_or_create(
            container, name, lambda: VariableResource(op.name, dt, shape))
        return [resource]
    return compute


#: The variable itself: outputs a reference to its buffer (dtype ``float32_ref``).
VARIABLE_V2 = declare(OpDef(
    "VariableV2", attrs=("shape", "dtype", "container", "shared_name"),
    gradient=NOT_DIFFERENTIABLE, stateful=True, resource=True, devices=_VARIABLE_DEVICES,
    kernel=_variable_kernel))


def _write(ctx, ref, value):
    """Store ``value`` in the variable (the caller holds its lock). On a GPU the new
    buffer is charged to the device's allocator *before* it is written, so running
    out of memory leaves the variable untouched, and reads of it are then known
    to be views of memory already charged."""
    allocator = ctx.device.allocator
    if allocator is not None and hasattr(value, "nbytes"):
        allocator.charge_variable(ref, value.nbytes, value.shape, value.dtype.name)
    ref.write(value)
    if allocator is not None:
        allocator.alias_variable(ref, ref._buffer)


def _snapshot(value):
    """``value`` as the output of an assign: the value written, which nothing may
    change later. A read-only *view* may look into another variable's buffer
    (``v.assign(w)``), which a later step may overwrite, so it is copied; any
    other array is already immutable for the rest of the step."""
    if isinstance(value, np.ndarray) and not value.flags.writeable and value.base is not None:
        return value.copy()
    return value


def _assign_kernel(op, backend):
    """Write ``value`` into the variable. The output is the value written, not a
    reference read later: so ``sess.run(v.assign(x))`` and every op that reads
    the output see exactly this write, even while other threads write too."""
    validate = op.get_attr("validate_shape")
    shape_text = array_ops.shape_text

    def compute(ctx, inputs):
        ref, value = inputs
        with ref.lock:
            if validate and ref.value is not None and ref.value.shape != value.shape:
                raise errors.InvalidArgumentError(
                    None, None, "Assign requires shapes of both tensors to match. lhs shape= "
                    "%s rhs shape= %s" % (list(ref.value.shape), list(value.shape)))
            if validate and ref.shape.ndims is not None and \
                    not ref.shape.is_compatible_with(value.shape):
                raise errors.InvalidArgumentError(
                    None, None, "Assign requires shapes of both tensors to match. lhs shape= "
                    "%s rhs shape= %s" % (shape_text(ref.shape), list(value.shape)))
            _write(ctx, ref, value)
        return [_snapshot(value)]
    return compute


ASSIGN = declare(OpDef(
    "Assign", inputs=("ref", "value"), attrs=("T", "validate_shape", "use_locking"),
    gradient=NOT_DIFFERENTIABLE, ref_inputs=(0,), stateful=True, devices=_VARIABLE_DEVICES,
    kernel=_assign_kernel))


def _update_kernel(row):
    """AssignAdd / AssignSub: ``ref = ref + delta`` (``row``: math_ops' add or sub row),
    under the variable's lock so that concurrent updates never lose one.

    The output is the new value computed under the lock (a fresh array), so
    three threads running ``counter.assign_add(1)`` each get a different count:
    a reference read after the lock is released could already show another
    thread's add (TF's output is such a reference, so it is usually but not
    always distinct)."""
    def kernel(op, backend):
        binary = backend.binary

        def compute(ctx, inputs):
            ref, delta = inputs
            with ref.lock:
                old = ref.read()
                if old.shape != delta.shape:
                    raise errors.InvalidArgumentError(
                        None, None, "Must have the same shape: %s vs %s" % (
                            list(old.shape), list(delta.shape)))
                new = binary(row, old, delta)
                _write(ctx, ref, new)
            return [new]
        return compute
    return kernel


#: The op types whose output is the value they wrote rather than a reference
#: (see ``_assign_kernel``). An op that takes such an output *as a reference*
#: (``tf.assign(v.assign(1.0), 2.0)``) is wired by the executor to the
#: variable itself, after the assign.
VALUE_OUTPUT_OPS = frozenset({"Assign", "AssignAdd", "AssignSub"})

ASSIGN_ADD = declare(OpDef(
    "AssignAdd", inputs=("ref", "value"), attrs=("T", "use_locking"),
    gradient=NOT_DIFFERENTIABLE, ref_inputs=(0,), stateful=True, devices=_VARIABLE_DEVICES,
    kernel=_update_kernel(math_ops.ADD_V2)))
ASSIGN_SUB = declare(OpDef(
    "AssignSub", inputs=("ref", "value"), attrs=("T", "use_locking"),
    gradient=NOT_DIFFERENTIABLE, ref_inputs=(0,), stateful=True, devices=_VARIABLE_DEVICES,
    kernel=_update_kernel(math_ops.SUB)))


def _is_initialized_kernel(op, backend):
    return lambda ctx, inputs: [np.array(inputs[0].value is not None)]


IS_VARIABLE_INITIALIZED = declare(OpDef(
    "IsVariableInitialized", inputs=("ref",), attrs=("dtype",), gradient=NOT_DIFFERENTIABLE,
    ref_inputs=(0,), stateful=True, devices=_VARIABLE_DEVICES,
    kernel=_is_initialized_kernel))


def _report_uninitialized_kernel(op, backend):
    names = op.get_attr("names")

    def compute(ctx, inputs):
        flags = np.asarray(inputs[0], dtype=bool)
        return [names[~flags]]
    return compute


#: A minitf op: the names of the variables whose flag (IsVariableInitialized) is False.
REPORT_UNINITIALIZED = declare(OpDef(
    "ReportUninitialized", inputs=("flags",), attrs=("names",), gradient=NOT_DIFFERENTIABLE,
    kernel=_report_uninitialized_kernel))


def _count_up_to_kernel(op, backend):
    limit = op.get_attr("limit")

    def compute(ctx, inputs):
        ref = inputs[0]
        with ref.lock:
            value = ref.read()
            if value >= limit:
                raise errors.OutOfRangeError(None, None, "Reached limit of %d" % limit)
            before = value.copy()
            ref.write(value + np.ones((), dtype=value.dtype))
        return [before]
    return compute


#: Increment an int variable and return its value before; the input producers'
#: epoch counter (``limit_epochs``) is one.
COUNT_UP_TO = declare(OpDef(
    "CountUpTo", inputs=("ref",), attrs=("limit", "T"), gradient=NOT_DIFFERENTIABLE,
    ref_inputs=(0,), stateful=True, kernel=_count_up_to_kernel))


def count_up_to(ref, limit, name=None):
    """Increment the int variable ``ref``; the result is its value *before*
    the increment. Once it reaches ``limit``: OutOfRangeError."""
    if isinstance(ref, Variable):
        ref = ref._ref()
    return make_op(COUNT_UP_TO, [ref], [ref.dtype.base_dtype], [ref.shape],
                   name=name or "CountUpTo",
                   attrs={"limit": int(limit), "T": ref.dtype.base_dtype}).outputs[0]


def _variable_op(shape, dtype, name, container="", shared_name=""):
    op = make_op(VARIABLE_V2, [], [dtype._as_ref], [shape], name=name,
                 attrs={"shape": shape, "dtype": dtype, "container": container,
                        "shared_name": shared_name}, graph=get_default_graph())
    return op.outputs[0]


def _assign_like(row, ref, value, name, validate_shape=True, use_locking=None):
    # As in TF, a Python value becomes a constant named after the op: "inc/value".
    with name_scope(name, row.name, [ref]) as scope:
        value = convert_to_tensor(value, dtype=ref.dtype.base_dtype, name="value")
        if row is ASSIGN and validate_shape and \
                not ref.shape.is_compatible_with(value.shape):
            raise ValueError("Dimension %s and %s are not compatible: shapes must be equal "
                             "for '{{node %s}} = Assign'" % (ref.shape, value.shape, scope[:-1]))
        if row is not ASSIGN and not ref.shape.is_compatible_with(value.shape):
            raise ValueError("Shapes %s and %s are incompatible" % (ref.shape, value.shape))
        shape = ref.shape if (row is not ASSIGN or validate_shape) else value.shape
        if use_locking is None:        # TF's op defaults: Assign locks, AssignAdd/Sub do not
            use_locking = row is ASSIGN
        attrs = {"T": ref.dtype.base_dtype, "use_locking": bool(use_locking)}
        if row is ASSIGN:
            attrs["validate_shape"] = bool(validate_shape)
        op = make_op(row, [ref, value], [ref.dtype], [shape], name=scope, attrs=attrs)
    return op.outputs[0]


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Write ``value`` into variable ``ref``; the result reads the new value."""
    if isinstance(ref, Variable):
        return ref.assign(value, use_locking=use_locking, name=name)
    return _assign_like(ASSIGN, ref, value, name,
                        True if validate_shape is None else validate_shape, use_locking)


def assign_add(ref, value, use_locking=None, name=None):
    if isinstance(ref, Variable):
        return ref.assign_add(value, use_locking=use_locking, name=name)
    return _assign_like(ASSIGN_ADD, ref, value, name, use_locking=use_locking)


def assign_sub(ref, value, use_locking=None, name=None):
    if isinstance(ref, Variable):
        return ref.assign_sub(value, use_locking=use_locking, name=name)
    return _assign_like(ASSIGN_SUB, ref, value, name, use_locking=use_locking)


class VariableAggregation:
    """How replicas' updates of a variable combine (TF's enum values; minitf
    keeps the value, for VariableDefs)."""
    NONE, SUM, MEAN, ONLY_FIRST_REPLICA = 0, 1, 2, 3


class VariableSynchronization:
    """When a distributed variable is synchronized (TF's enum values; kept for
    VariableDefs)."""
    AUTO, NONE, ON_WRITE, ON_READ = 0, 1, 2, 3


def _enum_value(value, default):
    if value is None:
        return default
    return int(getattr(value, "value", value))


def _prefixed(name, scope):
    return scope.rstrip("/") + "/" + name if scope else name


def _unprefixed(name, scope):
    if scope and name.startswith(scope.rstrip("/") + "/"):
        return name[len(scope.rstrip("/")) + 1:]
    return name


class _NotYetMade:
    """Stands for an op about to be made, so that ``colocate_with`` can name it."""

    device = ""

    def __init__(self, name):
        self.name = name

    def colocation_groups(self):
        return [("loc:@" + self.name).encode()]


class Variable:
    """A TF1 ref variable (see the module docstring for the ops it creates)."""

    def __init__(self, initial_value=None, trainable=True, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None, shape=None):
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        graph = get_default_graph()
        self._aggregation = _enum_value(aggregation, VariableAggregation.NONE)
        self._synchronization = _enum_value(synchronization, VariableSynchronization.AUTO)
        # As TF's init_scope: a variable made while a tf.cond branch or a
        # while loop is being built belongs to the whole graph, not to the
        # construct (it must exist and be initializable however the step goes).
        context, graph._control_flow_context = graph._control_flow_context, None
        try:
            self._init(graph, initial_value, trainable, collections, validate_shape, name,
                       dtype, shape)
        finally:
            graph._control_flow_context = context

    def _init(self, graph, initial_value, trainable, collections, validate_shape, name,
              dtype, shape):
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        self._trainable = trainable
        init_is_callable = callable(initial_value)
        with name_scope(name, "Variable", [] if init_is_callable else [initial_value]) as scope:
            if init_is_callable:
                # As TF: the initializer's ops ignore device scopes but are
                # colocated with the variable (made just below, named scope[:-1]).
                with graph.name_scope("Initializer"), graph.device(None), \
                        graph.colocate_with(_NotYetMade(scope[:-1])):
                    initial_value = convert_to_tensor(initial_value(), dtype=dtype,
                                                      name="initial_value")
            else:
                initial_value = convert_to_tensor(initial_value, dtype=dtype,
                                                  name="initial_value")
            var_shape = as_shape(shape) if shape is not None else (
                initial_value.shape if validate_shape else TensorShape(None))
            if validate_shape and not var_shape.is_fully_defined():
                raise ValueError("initial_value must have a shape specified: %s"
                                 % initial_value)
            self._variable = _variable_op(var_shape, initial_value.dtype.base_dtype,
                                          name=scope)
            self._initial_value = initial_value
            with graph.colocate_with(self._variable.op):
                self._initializer_op = _assign_like(
                    ASSIGN, self._variable, initial_value, "Assign",
                    validate_shape=validate_shape).op
            with graph.colocate_with(self._variable.op):
                self._snapshot = make_op(array_ops.IDENTITY, [self._variable],
                                         [self._variable.dtype.base_dtype],
                                         [self._variable.shape], name="read",
                                         attrs={"T": self._variable.dtype.base_dtype}
                                         ).outputs[0]
        graph.add_to_collections(collections, self)
        self._graph = graph
        self._save_slice_info = None

    # -- as TF's VariableDef (meta graphs) -------------------------------------------------
    def _init_from_proto(self, variable_def, import_scope=None):
        """Rebuild the Python object around ops already in the default graph
        (an imported meta graph): the variable, its initializer, its snapshot."""
        graph = get_default_graph()

        def find(name):
            full = _prefixed(name, import_scope)
            return graph.as_graph_element(full)
        self._variable = find(variable_def.variable_name)
        self._initializer_op = find(variable_def.initializer_name)
        self._snapshot = find(variable_def.snapshot_name)
        self._initial_value = find(variable_def.initial_value_name) \
            if variable_def.initial_value_name else None
        self._trainable = bool(variable_def.trainable)
        self._aggregation = variable_def.aggregation
        self._synchronization = variable_def.synchronization
        self._graph = graph
        self._save_slice_info = None
        if variable_def.is_resource:
            raise ValueError("minitf has TF1 ref variables only; the resource variable %s "
                             "(TF2's kind) cannot be imported" % variable_def.variable_name)

    def to_proto(self, export_scope=None):
        """This variable as TF's ``VariableDef`` (the names of its ops)."""
        if export_scope is not None and not self._variable.name.startswith(export_scope):
            return None
        pb = proto("variable_pb2").VariableDef()
        pb.variable_name = _unprefixed(self._variable.name, export_scope)
        pb.initializer_name = _unprefixed(self._initializer_op.name, export_scope)
        pb.snapshot_name = _unprefixed(self._snapshot.name, export_scope)
        if self._initial_value is not None:
            pb.initial_value_name = _unprefixed(self._initial_value.name, export_scope)
        pb.trainable = self._trainable
        pb.aggregation = self._aggregation
        pb.synchronization = self._synchronization
        return pb

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        """The ``Variable`` a ``VariableDef`` names, in the default graph."""
        return Variable(variable_def=variable_def, import_scope=import_scope)

    # -- identity ----------------------------------------------------------------------
    name = property(lambda self: self._variable.name)
    op = property(lambda self: self._variable.op)
    graph = property(lambda self: self._graph)
    dtype = property(lambda self: self._variable.dtype)
    device = property(lambda self: self._variable.device)
    initializer = property(lambda self: self._initializer_op)
    initial_value = property(lambda self: self._initial_value)
    trainable = property(lambda self: self._trainable)

    @property
    def shape(self):
        return self._variable.shape

    def get_shape(self):
        return self._variable.shape

    def value(self):
        """The ``v/read`` tensor: the variable's current value in a step."""
        return self._snapshot

    def read_value(self):
        """A fresh read of the value (an ``Identity`` of ``v/read``)."""
        return array_ops.identity(self._variable, name="read")

    def _ref(self):
        """The ``VariableV2`` output itself (dtype ``float32_ref``)."""
        return self._variable

    def _as_graph_element(self):
        """What ``sess.run(v)`` fetches and ``feed_dict={v: ...}`` feeds."""
        return self._variable

    def _as_tensor(self):
        """What ``v`` means inside an op (``v * 2``): the ``v/read`` value."""
        return self._snapshot

    def eval(self, session=None):
        return self._variable.eval(session=session)

    def load(self, value, session=None):
        sess = session_for(session, self._graph)
        sess.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    # -- updates ------------------------------------------------------------------------
    def assign(self, value, use_locking=False, name=None, read_value=True):
        with self._graph.as_default():
            t = _assign_like(ASSIGN, self._variable, value, name, True, use_locking)
        return t if read_value else t.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        with self._graph.as_default():
            t = _assign_like(ASSIGN_ADD, self._variable, delta, name, use_locking=use_locking)
        return t if read_value else t.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        with self._graph.as_default():
            t = _assign_like(ASSIGN_SUB, self._variable, delta, name, use_locking=use_locking)
        return t if read_value else t.op

    def is_initialized(self, name=None):
        return is_variable_initialized(self, name=name)

    def set_shape(self, shape):
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def __repr__(self):
        return "<tf.Variable '%s' shape=%s dtype=%s>" % (self.name, self.shape, self.dtype.name)


# Math on a variable means math on its value: ``v * 2`` reads ``v/read``.
def _forward_operator(name):
    def op(self, *args):
        return getattr(self._snapshot, name)(*args)
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
              "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__getitem__",
              "__and__", "__rand__", "__or__", "__ror__", "__invert__"):
    setattr(Variable, _name, _forward_operator(_name))
Variable.__hash__ = object.__hash__
Variable.__array_priority__ = 100

VariableV1 = Variable
RefVariable = Variable


def is_variable_initialized(variable, name=None):
    ref = variable._ref() if isinstance(variable, Variable) else variable
    op = make_op(IS_VARIABLE_INITIALIZED, [ref], [dtypes.bool], [TensorShape([])],
                 name=name or "IsVariableInitialized", attrs={"dtype": ref.dtype.base_dtype})
    return op.outputs[0]


# -- collections and initializers ------------------------------------------------------------
def global_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def local_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """One op that runs every listed variable's initializer."""
    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return control_flow_ops.no_op(name=name)


initialize_variables = variables_initializer


def global_variables_initializer():
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    return variables_initializer(local_variables())


initialize_local_variables = local_variables_initializer


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A string tensor with the names of the variables not yet initialized."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    with name_scope(name, "report_uninitialized_variables", []) as scope:
        if not var_list:
            return constant(np.array([], dtype=object), dtype=dtypes.string, name=scope)
        flags = array_ops.stack([is_variable_initialized(v) for v in var_list])
        names = np.array([v.op.name.encode() for v in var_list], dtype=object)
        op = make_op(REPORT_UNINITIALIZED, [flags], [dtypes.string], [TensorShape([None])],
                     name=scope, attrs={"names": names})
    return op.outputs[0]

