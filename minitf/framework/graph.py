"""Graphs, operations and tensors: the data structure a TF1 program builds.

Building a graph runs nothing. Each call such as ``x + 300`` adds an
:class:`Operation` (a node: a type such as ``Mul``, input tensors, attributes,
a requested device) to the default :class:`Graph` and returns its output
:class:`Tensor` (an edge: "output 0 of op ``add``", written ``add:0``).
A session later prunes, places and runs the part of the graph a fetch needs.

While an op is created the graph applies the context the program set up with
``with`` blocks:

* ``name_scope``        -> the op's name prefix (``layer1/add``), made unique;
* ``device``            -> the requested device (nested scopes merge);
* ``control_dependencies`` -> extra "run after" edges;
* ``colocate_with``     -> a ``_class: loc:@other`` constraint for the placer;
* ``container``         -> which resource container stateful ops use.
"""

import contextlib
import re
import threading

from minitf.framework import graph_def
from minitf.framework import op_def as _op_def
from minitf.framework.default_session import session_for
from minitf.framework.default_stack import DefaultStack
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.tensor_shape import as_shape


class GraphKeys:
    """Standard collection names, as in ``tf.GraphKeys``."""
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    QUEUE_RUNNERS = "queue_runners"
    GLOBAL_STEP = "global_step"
    SUMMARIES = "summaries"
    SUMMARY_OP = "summary_op"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    SAVERS = "savers"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES


class Tensor:
    """Output ``value_index`` of operation ``op``: a symbolic value, not data.

    ``sess.run(t)`` or ``t.eval()`` computes it. Arithmetic operators build new
    ops (``t * 2`` adds a ``Mul`` node); see ``minitf.ops.math_ops``. Indexing
    (``t[0]``) and iterating (``a, b = t``) come from ``minitf.ops.array_ops``.
    """

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_name", "__weakref__")
    # numpy must not treat a Tensor as an array-like when it is on the right of
    # an operator (``np.float32(2) * t`` should call ``t.__rmul__``).
    __array_priority__ = 100

    def __init__(self, op, value_index, dtype, shape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = as_shape(shape)
        self._name = "%s:%d" % (op.name, value_index)

    op = property(lambda self: self._op)
    value_index = property(lambda self: self._value_index)
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)
    graph = property(lambda self: self._op.graph)
    device = property(lambda self: self._op.device)

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        self._shape = self._shape.merge_with(shape)

    def consumers(self):
        return [op for op in self._op.graph._consumers.get(self, ())]

    def eval(self, feed_dict=None, session=None):
        """Run this tensor in ``session`` (default: the default session)."""
        return session_for(session, self.graph).run(self, feed_dict)

    def __repr__(self):
        return "<tf.Tensor '%s' shape=%s dtype=%s>" % (self._name, self._shape, self._dtype.name)

    def __str__(self):
        return 'Tensor("%s", shape=%s, dtype=%s)' % (self._name, self._shape, self._dtype.name)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        # TF1 graph tensors compare by identity (``tf.equal`` builds the op).
        return self is other

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t "
                        "is not None:` instead of `if t:` to test if a tensor is defined, "
                        "and use TensorFlow ops such as tf.cond to execute subgraphs "
                        "conditioned on the value of a tensor.")

    def __len__(self):
        raise TypeError("len is not well defined for a symbolic Tensor (%s). Please call "
                        "`x.shape` rather than `len(x)` for shape information." % self._name)

    def __array__(self, *args, **kwargs):
        raise TypeError("Cannot convert a symbolic tf.Tensor (%s) to a numpy array. Run it "
                        "in a session first: sess.run(%s)." % (self._name, self._op.name))


class Operation:
    """A node of the graph.

    ``type`` names what it computes (``Mul``), a row of the op table
    (``minitf.framework.op_def``); ``inputs`` are the tensors it
    reads; ``control_inputs`` are ops that must finish first; ``outputs`` are
    the tensors it produces; ``device`` is the *requested* device spec (the
    placer decides the actual one at run time).
    """

    def __init__(self, graph, op_type, name, inputs, output_dtypes, output_shapes,
                 attrs, control_inputs, device, colocation):
        self._graph = graph
        self._type = op_type
        self._name = name
        self._inputs = tuple(inputs)
        self._control_inputs = list(control_inputs)
        self._attrs = dict(attrs)
        self._device = device
        self._colocation = list(colocation)
        self._outputs = [Tensor(self, i, dt, sh)
                         for i, (dt, sh) in enumerate(zip(output_dtypes, output_shapes))]
        self._id = len(graph._nodes_by_id)
        self._traceback = None
        self._op_def = None       # its row of the op table, set by Graph.create_op
        self._control_flow_context = None   # the cond branch or while loop it is in

    graph = property(lambda self: self._graph)
    type = property(lambda self: self._type)
    name = property(lambda self: self._name)
    inputs = property(lambda self: list(self._inputs))
    outputs = property(lambda self: list(self._outputs))
    control_inputs = property(lambda self: list(self._control_inputs))
    device = property(lambda self: self._device)
    op_def = property(lambda self: self._op_def)

    @property
    def node_def(self):
        """A plain-dict stand-in for TF's NodeDef (name, op, input, device, attr)."""
        ins = [t.name if t.value_index else t.op.name for t in self._inputs]
        ins += ["^" + op.name for op in self._control_inputs]
        attrs = dict(self._attrs)
        if self._colocation:
            attrs["_class"] = list(self._colocation)
        return {"name": self._name, "op": self._type, "input": ins,
                "device": self._device, "attr": attrs}

    def get_attr(self, name):
        if name == "_class":
            if not self._colocation:
                raise ValueError("Operation '%s' has no attr named '_class'." % self._name)
            return [c.encode() for c in self._colocation]
        if name not in self._attrs:
            raise ValueError("Operation '%s' has no attr named '%s'." % (self._name, name))
        return self._attrs[name]

    def colocation_groups(self):
        """The names this op must share a device with (``loc:@name`` entries)."""
        if self._colocation:
            return [c.encode() for c in self._colocation]
        return [("loc:@" + self._name).encode()]

    def values(self):
        return tuple(self._outputs)

    def _set_device(self, device):
        # As in TF, a device function's string is kept verbatim ("/cpu:0");
        # only string scopes are normalised ("/device:CPU:0") by merging.
        if isinstance(device, DeviceSpec):
            device = device.to_string()
        elif not isinstance(device, str):
            # TF's own words (a device function returned None or a number).
            raise TypeError("Expected binary or unicode string, got %r" % (device,))
        if device:
            DeviceSpec.from_string(device)  # reject malformed names now
        self._device = device or ""

    def _add_control_input(self, op):
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            self._graph._version += 1

    def _update_input(self, index, tensor):
        """Make input ``index`` read ``tensor`` instead (a while loop's ``Merge``
        gets its back edge from ``NextIteration`` once the body is built)."""
        with self._graph._lock:
            old = self._inputs[index]
            consumers = self._graph._consumers.get(old, [])
            if self in consumers:
                consumers.remove(self)
            self._inputs = self._inputs[:index] + (tensor,) + self._inputs[index + 1:]
            self._graph._consumers.setdefault(tensor, []).append(self)
            self._graph._version += 1

    def run(self, feed_dict=None, session=None):
        """Run this op in ``session`` (default: the default session)."""
        session_for(session, self._graph, "operation").run(self, feed_dict)

    def __repr__(self):
        return "<tf.Operation '%s' type=%s>" % (self._name, self._type)

    def __str__(self):
        nd = self.node_def
        lines = ['name: "%s"' % nd["name"], 'op: "%s"' % nd["op"]]
        lines += ['input: "%s"' % i for i in nd["input"]]
        if nd["device"]:
            lines.append('device: "%s"' % nd["device"])
        return "\n".join(lines)


class _DeviceScope:
    """One entry of the device stack: a merged string spec or a user function."""

    __slots__ = ("spec", "function")

    def __init__(self, spec=None, function=None):
        self.spec = spec
        self.function = function


class _ControlDependencies:
    """One ``control_dependencies`` block: its ops, and the ops created in it."""

    __slots__ = ("ops", "seen")

    def __init__(self, ops):
        self.ops = ops
        self.seen = set()


class Graph:
    """A TF1 dataflow graph: ops by name, plus the build-time scope stacks."""

    def __init__(self):
        self._lock = threading.RLock()
        self._nodes_by_name = {}
        self._nodes_by_id = []
        self._names_in_use = {}
        self._consumers = {}
        self._collections = {}
        self._unfeedable = set()
        self._unfetchable = set()
        self._seed = None
        self._random_seed_count = 0  # get_seed(None) calls under a graph seed (random_seed.py)
        self._finalized = False
        self._building_function = False
        self._version = 0
        self._thread_local = threading.local()
        # Ops created since the graph was last shipped to a master (see
        # minitf.distributed): remote sessions extend their copy incrementally.
        self._last_id = 0
        # The tf.data pipelines of this graph's iterators (minitf/ops/iterator_ops.py):
        # Python objects that stay with the graph, keyed by the iterator op's
        # ``dataset_key`` attr (TF keeps them as functions in its graph library).
        self._datasets = {}

    # -- per-thread scope stacks --------------------------------------------------
    def _stack(self, name, factory):
        tl = self._thread_local
        value = getattr(tl, name, None)
        if value is None:
            value = factory()
            setattr(tl, name, value)
        return value

    @property
    def _name_stack(self):
        return getattr(self._thread_local, "name_stack", "")

    @property
    def _control_flow_context(self):
        """The control-flow construct being built in this thread, or None: a
        branch of a ``tf.cond`` or the body of a ``tf.while_loop``
        (ops/control_flow_ops.py, ops/while_loop.py). Every op created while
        it is set belongs to it and goes through its ``enter`` hook."""
        return getattr(self._thread_local, "control_flow_context", None)

    @_control_flow_context.setter
    def _control_flow_context(self, value):
        self._thread_local.control_flow_context = value

    @_name_stack.setter
    def _name_stack(self, value):
        self._thread_local.name_stack = value

    @property
    def _device_stack(self):
        return self._stack("device_stack", list)

    @property
    def _control_stack(self):
        return self._stack("control_stack", list)

    @property
    def _colocation_stack(self):
        return self._stack("colocation_stack", list)

    @property
    def _container(self):
        return getattr(self._thread_local, "container", "")

    # -- default graph ---------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        """Make this graph the default graph of the current thread in the block."""
        with _GRAPHS.default(self):
            yield self

    # -- seeds, version, finalize -------------------------------------------------------
    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, value):
        self._seed = value

    @property
    def version(self):
        return self._version

    @property
    def finalized(self):
        return self._finalized

    def finalize(self):
        self._finalized = True

    def _unsafe_unfinalize(self):
        self._finalized = False

    def _release(self):
        """Forget every op, for a copy of a graph that will never run again (a
        closed remote session's, on its server): their attrs -- large
        constants -- are freed at once, instead of when Python's garbage
        collector finds the op <-> tensor <-> graph reference cycles."""
        with self._lock:
            ops, self._nodes_by_id = self._nodes_by_id, []
            self._nodes_by_name, self._consumers = {}, {}
            self._collections, self._datasets = {}, {}
        for op in ops:
            op._attrs, op._inputs, op._outputs, op._control_inputs = {}, (), [], []

    # -- names --------------------------------------------------------------------------
    def unique_name(self, name, mark_as_used=True):
        """``name`` under the current name scope, with ``_1``, ``_2``... appended
        if taken. Names are compared lowercased, as in TF."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        name_key = name.lower()
        i = self._names_in_use.get(name_key, 0)
        if mark_as_used:
            self._names_in_use[name_key] = i + 1
        if i > 0:
            base_name_key = name_key
            while name_key in self._names_in_use:
                name_key = "%s_%d" % (base_name_key, i)
                i += 1
            if mark_as_used:
                self._names_in_use[name_key] = 1
            name = "%s_%d" % (name, i - 1)
        return name

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Enter a name scope; yields the scope string ending in ``/``.

        ``None``/``""`` resets to the top level; a name ending in ``/`` is used
        as is (re-entering an existing scope); anything else is made unique.
        """
        old = self._name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    # -- devices --------------------------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Request a device for the ops created in the block.

        A string (or DeviceSpec) is merged with the enclosing scopes, inner
        parts winning. A function is called with each new op and returns its
        device. ``None`` ignores all enclosing device scopes.
        """
        stack = self._device_stack
        if device_name_or_function is None:
            entry = _DeviceScope(spec=None, function=None)
        elif callable(device_name_or_function) and \
                not isinstance(device_name_or_function, (str, DeviceSpec)):
            entry = _DeviceScope(function=device_name_or_function)
        else:
            spec = device_name_or_function
            if not isinstance(spec, DeviceSpec):
                spec = DeviceSpec.from_string(spec)
            entry = _DeviceScope(spec=spec)
        stack.append(entry)
        try:
            yield
        finally:
            stack.pop()

    def _apply_device_scopes(self, op):
        """Give a new op its requested device, innermost scope first.

        This is TF's rule: string scopes merge (the device already chosen by an
        inner scope keeps its parts, the outer scope fills missing ones);
        a function scope replaces the device with whatever it returns; a
        ``tf.device(None)`` scope stops the walk.
        """
        device = ""
        for entry in reversed(self._device_stack):
            if entry.function is None and entry.spec is None:
                break
            if entry.function is not None:
                result = entry.function(op)
                op._set_device(result)
                device = op._device
            else:
                if entry.spec.to_string() == "":
                    continue
                merged = entry.spec.make_merged_spec(DeviceSpec.from_string(device))
                device = merged.to_string()
                op._device = device
        op._device = device

    # -- control dependencies ------------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created in the block run after ``control_inputs``.

        Nested blocks accumulate; ``None`` clears the enclosing ones. Only ops
        *created* inside the block get the edges, exactly as in TF.
        """
        stack = self._control_stack
        if control_inputs is None:
            saved = list(stack)
            stack.clear()
            stack.append(_ControlDependencies([]))
            try:
                yield
            finally:
                stack.clear()
                stack.extend(saved)
            return
        # As in TF, an op an enclosing block already adds is not repeated here.
        current = {op for level in stack for op in level.ops}
        ops = []
        for given in control_inputs:
            c = as_operation(given)
            if c is None:
                raise TypeError("Can not convert a %s into a Tensor or Operation."
                                % type(given).__name__)
            if c not in current:
                current.add(c)
                ops.append(c)
                c._manual_control_dep = True     # (TF's _has_manual_control_dependencies)
        stack.append(_ControlDependencies(ops))
        try:
            yield
        finally:
            stack.pop()

    def _current_control_inputs(self, data_inputs):
        """TF's rule for a new op's control inputs: every enclosing block adds
        its ops, except ops the new op already reads as data, and except when
        one of its data inputs was itself created inside that block (that
        input already waits for the block's ops, so the new op does too)."""
        result = []
        input_ops = [t.op for t in data_inputs]
        for level in self._control_stack:
            if any(op in level.seen for op in input_ops):
                continue
            for op in level.ops:
                if op not in input_ops and op not in result:
                    result.append(op)
        return result

    # -- colocation and containers ------------------------------------------------------------
    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """Ops created in the block must be placed on ``op``'s device."""
        if hasattr(op, "_as_graph_element"):
            op = op._as_graph_element()
        if isinstance(op, Tensor):
            op = op.op
        stack = self._colocation_stack
        saved = list(stack)
        if ignore_existing:
            stack.clear()
        if op is not None:
            stack.append(op)
        # As in TF, colocation overrides device scopes for the ops in the block.
        device_stack = self._device_stack
        saved_devices = list(device_stack)
        if op is not None:
            device_stack.append(_DeviceScope(spec=None, function=None))
        try:
            yield
        finally:
            stack.clear()
            stack.extend(saved)
            device_stack.clear()
            device_stack.extend(saved_devices)

    @contextlib.contextmanager
    def container(self, container_name):
        """Stateful ops created in the block keep their state in ``container_name``."""
        old = self._container
        self._thread_local.container = container_name
        try:
            yield container_name
        finally:
            self._thread_local.container = old

    # -- creating ops ----------------------------------------------------------------------
    def create_op(self, op_type, inputs, output_dtypes, output_shapes, name=None,
                  attrs=None, device=None):
        """Add an op. Applies the current name, device, control-dependency,
        colocation and container scopes. Returns the new :class:`Operation`.

        Inside a branch of ``tf.cond`` or a ``tf.while_loop`` the construct's
        context first routes each input made outside it (through a ``Switch``
        into a branch, an ``Enter`` into a loop) and adjusts the control
        inputs (control_flow_ops.py, while_loop.py)."""
        row = _op_def.lookup(op_type)      # an undeclared op type is an error
        context = self._control_flow_context
        with self._lock:
            if self._finalized:
                raise RuntimeError("Graph is finalized and cannot be modified.")
            for t in inputs:
                if t.graph is not self:
                    raise ValueError("Tensor %s must be from the same graph as the op "
                                     "being created (%s)." % (t.name, name or op_type))
            name = name or op_type
            if name.endswith("/"):
                name = name[:-1]
            else:
                name = self.unique_name(name)
        if context is not None:
            # (an Enter made for the op is named after it: ``while/mul/Enter``)
            inputs = context.capture_inputs(list(inputs), name)
        with self._lock:
            controls = self._current_control_inputs(inputs)
        if context is not None:
            controls = context.control_inputs(inputs, controls)
        with self._lock:
            attrs = dict(attrs or {})
            if row.resource and "container" in attrs and \
                    not attrs["container"]:
                attrs["container"] = self._container
            colocation = set()
            for c in self._colocation_stack:
                colocation.update(x.decode() for x in c.colocation_groups())
            op = Operation(self, op_type, name, inputs, output_dtypes, output_shapes,
                           attrs, controls, "", sorted(colocation))
            op._op_def = row
            op._control_flow_context = context
            self._apply_device_scopes(op)
            for c in reversed(self._colocation_stack):
                if c.device:
                    op._device = c.device
                    break
            if device is not None:
                op._set_device(device)
            self._nodes_by_name[name] = op
            self._nodes_by_id.append(op)
            for level in self._control_stack:
                level.seen.add(op)
            for t in inputs:
                self._consumers.setdefault(t, []).append(op)
            self._version += 1
            return op

    # -- lookup -------------------------------------------------------------------------
    def get_operations(self):
        return list(self._nodes_by_id)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Operation names are strings (or similar), not %s."
                            % type(name).__name__)
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Tensor names are strings (or similar), not %s."
                            % type(name).__name__)
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """Resolve a Tensor, Operation, Variable or name to this graph's element,
        with TF's error types and messages."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                op_name, _, index = obj.rpartition(":")
                try:
                    index = int(index)
                except ValueError:
                    raise ValueError("The name %r looks a like a Tensor name, but is not a "
                                     "valid one. Tensor names must be of the form "
                                     "\"<op_name>:<output_index>\"." % obj) from None
                op = self._nodes_by_name.get(op_name)
                if op is None:
                    raise KeyError("The name %r refers to a Tensor which does not exist. The "
                                   "operation, %r, does not exist in the graph."
                                   % (obj, op_name))
                if index >= len(op._outputs):
                    raise KeyError("The name %r refers to a Tensor which does not exist. The "
                                   "operation, %r, exists but only has %d outputs."
                                   % (obj, op_name, len(op._outputs)))
                return op._outputs[index]
            if ":" in obj:
                raise ValueError("Name %r appears to refer to a Tensor, not a Operation." % obj)
            if not allow_operation:
                raise ValueError("The name %r refers to an Operation, not a Tensor. Tensor "
                                 "names must be of the form \"<op_name>:<output_index>\"."
                                 % obj)
            op = self._nodes_by_name.get(obj)
            if op is None:
                raise KeyError("The name %r refers to an Operation not in the graph." % obj)
            return op
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError("Tensor %s is not an element of this graph." % obj)
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError("Operation %s is not an element of this graph." % obj)
            return obj
        kinds = " or ".join(k for k, ok in (("Tensor", allow_tensor),
                                             ("Operation", allow_operation)) if ok)
        raise TypeError("Can not convert a %s into a %s." % (type(obj).__name__, kinds))

    # -- feeding -----------------------------------------------------------------------
    def prevent_feeding(self, tensor):
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor):
        return tensor not in self._unfeedable

    def prevent_fetching(self, op):
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op):
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable

    # -- collections ---------------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection(self, key, scope=None):
        items = list(self._collections.get(key, ()))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [i for i in items if hasattr(i, "name") and pattern.match(i.name)]

    def get_collection_ref(self, key):
        return self._collections.setdefault(key, [])

    def get_all_collection_keys(self):
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # -- as TF's protocol buffer --------------------------------------------------------
    def as_graph_def(self, from_version=None, add_shapes=False):
        """This graph as TF's ``GraphDef`` protocol buffer (see
        ``minitf/framework/graph_def.py``): every op with its requested
        device, TF's attrs and, with ``add_shapes``, its ``_output_shapes``.
        ``from_version`` is accepted and, as in TF 2.21, has no effect: TF 2
        always writes the whole graph."""
        return graph_def.graph_to_graph_def(self, None, add_shapes)

    @property
    def graph_def_versions(self):
        return graph_def.graph_to_graph_def(self, ops=[]).versions

    def __repr__(self):
        return "<minitf.Graph with %d ops at %s>" % (len(self._nodes_by_id), hex(id(self)))


def as_operation(x):
    """The op behind ``x`` (an Operation, a Tensor, or a Variable), or None."""
    if hasattr(x, "_as_graph_element"):
        x = x._as_graph_element()
    if isinstance(x, Tensor):
        x = x.op
    return x if isinstance(x, Operation) else None


# -- the default graph -----------------------------------------------------------------
_global_default_graph = None
_GRAPHS = DefaultStack()    # this thread's ``as_default()`` graphs


def get_default_graph():
    """The graph new ops go into: the innermost ``as_default()`` graph of this
    thread, else the global default graph."""
    global _global_default_graph
    graph = _GRAPHS.top()
    if graph is not None:
        return graph
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph():
    """Replace the global default graph with a new, empty one."""
    global _global_default_graph
    if _GRAPHS:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. "
                             "If you need a cleared graph, exit the nesting and create a "
                             "new graph.")
    _global_default_graph = Graph()
