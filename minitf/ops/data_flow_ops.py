"""Queues as TF1 builds them: ``tf.FIFOQueue``, ``tf.RandomShuffleQueue``,
``tf.PaddingFIFOQueue``, ``tf.PriorityQueue``.

A queue object holds one op, the queue itself (``FIFOQueueV2``, output: a
resource handle). Each method adds an op that takes that handle:
``q.enqueue(x)`` -> ``QueueEnqueueV2``, ``q.dequeue()`` -> ``QueueDequeueV2``,
and so on. Running those ops moves elements in and out of the queue kept by
the device that owns it (see ``minitf/ops/queues.py`` for the blocking
rules). The placer keeps every op of a queue on the queue's device.

The queue op (``FIFOQueueV2``...) outputs a handle: the
:class:`~minitf.ops.queues.QueueResource` itself, looked up in the
device's resource manager. With a ``shared_name`` every session on a server
finds the same queue; without one, each session gets a queue of its own
(named ``_N_opname`` as in TF), so a local session's queue is private.

The enqueue/dequeue kernels check what they are given against the queue's
dtypes and shapes (InvalidArgumentError, as TF) and hand elements to the
queue as one block of rows (copied once); dequeue kernels get a block back,
stacked (padded for a PaddingFIFOQueue) by the queue.
"""

import hashlib
import itertools

import numpy as np

from minitf.framework import dtypes as _dtypes
from minitf.framework import errors
from minitf.framework.graph import get_default_graph
from minitf.framework.op_def import NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.random_seed import get_seed, seed_attrs
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops import queues
from minitf.ops.core import EVERY_DEVICE, convert_to_tensor, make_op, name_scope

_private_ids = itertools.count()


# -- the queue ops: a queue of each kind, made on first use ---------------------------------
def _queue_kernel(cls):
    def kernel(op, backend):
        attrs = op._attrs
        container = attrs.get("container", "")
        shared = attrs.get("shared_name", "")
        dtypes_ = attrs["component_types"]
        shapes = attrs.get("shapes") or []
        capacity = attrs.get("capacity", -1)
        min_after = attrs.get("min_after_dequeue", 0)
        seeded = "seed" in op.op_def.attrs   # a RandomShuffleQueue: its Philox stream
        seeds = (attrs.get("seed", 0), attrs.get("seed2", 0))

        def compute(ctx, inputs):
            name = shared
            if not name:  # private to this session: a name of its own
                key = ("queue", op.name)
                name = ctx.session_state.get(key)
                if name is None:
                    name = ctx.session_state[key] = "_%d_%s" % (next(_private_ids), op.name)
            queue = ctx.resources.lookup_or_create(
                container, name,
                lambda: cls(name, capacity, dtypes_, shapes, min_after,
                            backend.shuffle_queue_picker(*seeds) if seeded else None))
            return [queue]
        return compute
    return kernel


def _queue_row(name, cls, extra_attrs=()):
    return declare(OpDef(name, attrs=("component_types", "shapes", "capacity", "container",
                                      "shared_name") + extra_attrs,
                         gradient=NOT_DIFFERENTIABLE, stateful=True, resource=True,
                         kernel=_queue_kernel(cls)))


FIFO_QUEUE_V2 = _queue_row("FIFOQueueV2", queues.QueueResource)
RANDOM_SHUFFLE_QUEUE_V2 = _queue_row("RandomShuffleQueueV2", queues.RandomShuffleQueue,
                                     ("min_after_dequeue", "seed", "seed2"))
PADDING_FIFO_QUEUE_V2 = _queue_row("PaddingFIFOQueueV2", queues.PaddingFIFOQueue)
PRIORITY_QUEUE_V2 = _queue_row("PriorityQueueV2", queues.PriorityQueue)


# -- the element ops: they take the queue (input 0) by reference -------------------------------
def _check_component(queue, i, value, many):
    dt = queue.dtypes[i]
    if value.dtype != dt.np_dtype and not (dt.name == "string" and value.dtype == object):
        raise errors.InvalidArgumentError(
            None, None, "Type mismatch in tuple component %d. Expected %s, got %s"
            % (i, dt.name, value.dtype))
    shape = queue.shapes[i] if i < len(queue.shapes) else None
    if shape is not None and shape.ndims is not None:
        got = value.shape[1:] if many else value.shape
        if not shape.is_compatible_with(got):
            raise errors.InvalidArgumentError(
                None, None, "Shape mismatch in tuple component %d. Expected %s, got %s"
                % (i, shape.as_list(), list(got)))


def _enqueue_kernel(op, backend):
    many = op.op_def is QUEUE_ENQUEUE_MANY_V2

    def compute(ctx, inputs):
        queue, values = inputs[0], inputs[1:]
        for i, v in enumerate(values):
            _check_component(queue, i, v, many)
        if many:
            n = values[0].shape[0] if values[0].ndim else None
            if n is None or any(v.ndim == 0 or v.shape[0] != n for v in values):
                raise errors.InvalidArgumentError(
                    None, None, "Expected all components to have the same size in the first "
                    "dimension: %s" % [list(v.shape) for v in values])
            # One copy of the whole block (TF copies the rows too): the queue
            # keeps it, while the caller's arrays (a feed, a variable) may change.
            queue.enqueue(tuple(np.array(v, order="C") for v in values), ctx.step)
        else:
            # TF keeps the tensor itself: an element is read when dequeued.
            queue.enqueue(tuple(v[np.newaxis] for v in values), ctx.step, owned=False)
        return []
    return compute


def _dequeue_kernel(op, backend):
    batched = op.op_def is not QUEUE_DEQUEUE_V2
    allow_smaller = op.op_def is QUEUE_DEQUEUE_UP_TO_V2

    def compute(ctx, inputs):
        queue = inputs[0]
        if batched and all(s is None for s in queue.shapes):
            # Without shapes TF cannot promise that elements stack into a batch.
            raise errors.InvalidArgumentError(
                None, None, "%s's DequeueMany and DequeueUpTo require the components to "
                "have specified shapes." % queue.type_name)
        n = int(inputs[1]) if batched else None
        if batched and n < 0:
            raise errors.InvalidArgumentError(None, None, "DequeueMany requested %d < 0 "
                                              "elements" % n)
        if batched and n == 0:
            return [np.zeros((0,) + tuple(d or 0 for d in (s.as_list() if s is not None
                                                          else [])),
                             dtype=dt.np_dtype)
                    for dt, s in zip(queue.dtypes, queue.shapes)]
        return list(queue.dequeue(n, ctx.step, allow_smaller))
    return compute


def _close_kernel(op, backend):
    cancel = op.get_attr("cancel_pending_enqueues")

    def compute(ctx, inputs):
        inputs[0].close(cancel, ctx.step)
        return []
    return compute


def _size_kernel(op, backend):
    return lambda ctx, inputs: [np.array(inputs[0].size(), dtype=np.int32)]


def _is_closed_kernel(op, backend):
    return lambda ctx, inputs: [np.array(inputs[0].closed)]


def _element_row(name, kernel, inputs, attrs=(), blocking=True):
    return declare(OpDef(name, inputs=("handle",) + inputs, attrs=attrs,
                         gradient=NOT_DIFFERENTIABLE, ref_inputs=(0,), stateful=True,
                         blocking=blocking, devices=EVERY_DEVICE, kernel=kernel))


QUEUE_ENQUEUE_V2 = _element_row("QueueEnqueueV2", _enqueue_kernel, ("*components",),
                                ("Tcomponents", "timeout_ms"))
QUEUE_ENQUEUE_MANY_V2 = _element_row("QueueEnqueueManyV2", _enqueue_kernel, ("*components",),
                                     ("Tcomponents", "timeout_ms"))
QUEUE_DEQUEUE_V2 = _element_row("QueueDequeueV2", _dequeue_kernel, (),
                                ("component_types", "timeout_ms"))
QUEUE_DEQUEUE_MANY_V2 = _element_row("QueueDequeueManyV2", _dequeue_kernel, ("n",),
                                     ("component_types", "timeout_ms"))
QUEUE_DEQUEUE_UP_TO_V2 = _element_row("QueueDequeueUpToV2", _dequeue_kernel, ("n",),
                                      ("component_types", "timeout_ms"))
QUEUE_CLOSE_V2 = _element_row("QueueCloseV2", _close_kernel, (),
                              ("cancel_pending_enqueues",))
QUEUE_SIZE_V2 = _element_row("QueueSizeV2", _size_kernel, (), blocking=False)
QUEUE_IS_CLOSED_V2 = _element_row("QueueIsClosedV2", _is_closed_kernel, (), blocking=False)


# -- the Python classes ---------------------------------------------------------------------------
class QueueBase:
    """What every queue type shares: the handle op and the methods."""

    _op_type = None

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        self._shapes = shapes
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name

    # -- properties ----------------------------------------------------------------------
    queue_ref = property(lambda self: self._queue_ref)
    name = property(lambda self: self._name)
    dtypes = property(lambda self: list(self._dtypes))
    shapes = property(lambda self: list(self._shapes))
    names = property(lambda self: self._names)

    # -- building --------------------------------------------------------------------------
    def _check_vals(self, vals, many):
        if self._names is not None:
            if not isinstance(vals, dict):
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals.keys()):
                raise ValueError("Keys in dictionary to enqueue %s do not match names of "
                                 "Queue.  Dictionary: %s, Queue: %s"
                                 % ("", sorted(vals.keys()), sorted(self._names)))
            vals = [vals[k] for k in self._names]
        elif isinstance(vals, dict):
            raise ValueError("Queue must have names to enqueue a dictionary")
        if not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError("Expected %d tensors to enqueue, got %d"
                             % (len(self._dtypes), len(vals)))
        tensors = []
        batch = None      # enqueue_many: the first dimension every component shares
        for i, (v, dt) in enumerate(zip(vals, self._dtypes)):
            t = convert_to_tensor(v, dtype=dt, name="component_%d" % i)
            if many:
                if t.shape.ndims == 0:
                    raise ValueError("Shape %s must have rank at least 1" % t.shape)
                first = t.shape[0].value if t.shape.ndims is not None else None
                if batch is not None and first is not None and first != batch:
                    raise ValueError("Dimensions %d and %d are not compatible"
                                     % (batch, first))
                batch = batch if first is None else first
            shape = self._shapes[i] if self._shapes else None
            if shape is not None:
                got = t.shape[1:] if many and t.shape.ndims is not None else t.shape
                if many and t.shape.ndims == 0:
                    raise ValueError("Shape must be at least rank 1 to enqueue_many: %s"
                                     % t.shape)
                if not shape.is_compatible_with(got):
                    raise ValueError("Shapes %s and %s are incompatible" % (got, shape))
            tensors.append(t)
        return tensors

    def enqueue(self, vals, name=None):
        """An op that adds one element (blocks while the queue is full)."""
        with name_scope(name, "%s_enqueue" % self._name, []) as scope:
            tensors = self._check_vals(vals, False)
            return make_op(QUEUE_ENQUEUE_V2, [self._queue_ref] + tensors, [], [], name=scope,
                           attrs={"Tcomponents": [t.dtype for t in tensors],
                                  "timeout_ms": -1})

    def enqueue_many(self, vals, name=None):
        """An op that adds the slices of ``vals`` along dimension 0."""
        with name_scope(name, "%s_EnqueueMany" % self._name, []) as scope:
            tensors = self._check_vals(vals, True)
            return make_op(QUEUE_ENQUEUE_MANY_V2, [self._queue_ref] + tensors, [], [],
                           name=scope, attrs={"Tcomponents": [t.dtype for t in tensors],
                                              "timeout_ms": -1})

    def _result(self, outputs):
        if self._names is not None:
            return dict(zip(self._names, outputs))
        if len(outputs) == 1:
            return outputs[0]
        return outputs

    def _element_shapes(self):
        return [s if s is not None else TensorShape(None) for s in
                (self._shapes or [None] * len(self._dtypes))]

    def dequeue(self, name=None):
        """One element (blocks until there is one)."""
        with name_scope(name, "%s_Dequeue" % self._name, []) as scope:
            op = make_op(QUEUE_DEQUEUE_V2, [self._queue_ref], self._dtypes,
                         self._element_shapes(), name=scope,
                         attrs={"component_types": self._dtypes, "timeout_ms": -1})
        return self._result(op.outputs)

    def _dequeue_n(self, row, suffix, n, name, batch_dim):
        with name_scope(name, "%s_%s" % (self._name, suffix), [n]) as scope:
            n_t = convert_to_tensor(n, dtype=_dtypes.int32, name="n")
            shapes = [TensorShape([batch_dim]).concatenate(s) for s in self._element_shapes()]
            op = make_op(row, [self._queue_ref, n_t], self._dtypes, shapes, name=scope,
                         attrs={"component_types": self._dtypes, "timeout_ms": -1})
        return self._result(op.outputs)

    def dequeue_many(self, n, name=None):
        """``n`` elements stacked into a batch (blocks until there are ``n``)."""
        known = n if isinstance(n, int) else None
        return self._dequeue_n(QUEUE_DEQUEUE_MANY_V2, "DequeueMany", n, name, known)

    def dequeue_up_to(self, n, name=None):
        """Up to ``n`` elements: fewer only once the queue is closed."""
        return self._dequeue_n(QUEUE_DEQUEUE_UP_TO_V2, "DequeueUpTo", n, name, None)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Close the queue: no more enqueues; what is left can still drain."""
        return make_op(QUEUE_CLOSE_V2, [self._queue_ref], [], [],
                       name=name or "%s_Close" % self._name,
                       attrs={"cancel_pending_enqueues": bool(cancel_pending_enqueues)})

    def is_closed(self, name=None):
        return make_op(QUEUE_IS_CLOSED_V2, [self._queue_ref], [_dtypes.bool], [TensorShape([])],
                       name=name or "%s_Is_Closed" % self._name).outputs[0]

    def size(self, name=None):
        return make_op(QUEUE_SIZE_V2, [self._queue_ref], [_dtypes.int32], [TensorShape([])],
                       name=name or "%s_Size" % self._name).outputs[0]


def _normalize(dtypes, shapes, names, allow_unknown=False):
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]
    dtypes = [_dtypes.as_dtype(d).base_dtype for d in dtypes]
    if shapes is not None:
        # TF's rule (data_flow_ops._as_shape_list): one TensorShape, or a list
        # of ints and Nones (the empty list included: a scalar), is one shape.
        if isinstance(shapes, TensorShape):
            shapes = [shapes]
        if not isinstance(shapes, (list, tuple)):
            raise TypeError("Shapes must be a TensorShape or a list or tuple of TensorShapes, "
                            "got %s instead." % type(shapes))
        if all(s is None or isinstance(s, int) for s in shapes):
            shapes = [shapes]
        shapes = [as_shape(s) for s in shapes]
        if len(shapes) != len(dtypes):
            raise ValueError("Queue shapes must have the same length as dtypes")
        if not allow_unknown and not all(s.is_fully_defined() for s in shapes):
            raise ValueError("All shapes must be fully defined: %s" % shapes)
    else:
        shapes = []
    if names is not None:
        if isinstance(names, str):
            names = [names]
        if len(names) != len(dtypes):
            raise ValueError("Queue names must have the same length as dtypes")
        names = list(names)
    return dtypes, shapes, names


def _queue_op(row, name, attrs):
    graph = get_default_graph()
    op = make_op(row, [], [_dtypes.resource], [TensorShape([])], name=name,
                 attrs=attrs, graph=graph)
    return op.outputs[0]


class FIFOQueue(QueueBase):
    """First in, first out."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes, shapes, names = _normalize(dtypes, shapes, names)
        ref = _queue_op(FIFO_QUEUE_V2, name, {
            "component_types": dtypes, "shapes": shapes, "capacity": capacity,
            "container": "", "shared_name": shared_name or ""})
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """FIFO whose shapes may contain ``None``; ``dequeue_many`` zero-pads."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        dtypes, shapes, names = _normalize(dtypes, shapes, names, allow_unknown=True)
        if not shapes:
            raise ValueError("PaddingFIFOQueue needs shapes (None marks a dimension to pad)")
        ref = _queue_op(PADDING_FIFO_QUEUE_V2, name, {
            "component_types": dtypes, "shapes": shapes, "capacity": capacity,
            "container": "", "shared_name": shared_name or ""})
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """Dequeues elements in random order; until closed it keeps at least
    ``min_after_dequeue`` elements so each draw comes from a good mix."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        dtypes, shapes, names = _normalize(dtypes, shapes, names)
        seed1, seed2 = get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            # As TF: a shared queue's seed2 depends on the graph seed and the
            # shared name only, not on how many random ops the graph has.
            digest = hashlib.md5((str(seed1) + shared_name).encode("utf-8")).hexdigest()
            seed2 = int(digest[:8], 16) & 0x7FFFFFFF
        seed1, seed2 = seed_attrs(seed1, seed2)
        ref = _queue_op(RANDOM_SHUFFLE_QUEUE_V2, name, {
            "component_types": dtypes, "shapes": shapes, "capacity": capacity,
            "min_after_dequeue": min_after_dequeue, "seed": seed1, "seed2": seed2,
            "container": "", "shared_name": shared_name or ""})
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """Dequeues the element with the smallest priority first. Every element
    starts with an int64 priority: ``enqueue((priority, value, ...))``."""

    def __init__(self, capacity, types, shapes, names=None, shared_name=None,
                 name="priority_queue"):
        if shapes is None:
            raise TypeError("Expected list for 'shapes' argument to 'priority_queue_v2' Op, "
                            "not None.")
        types, shapes, names = _normalize(types, shapes, names)
        dtypes = [_dtypes.int64] + types
        shapes = [TensorShape([])] + shapes if shapes else []
        if names is not None:
            names = ["priority"] + names  # not part of TF's API: minitf keeps it simple
        ref = _queue_op(PRIORITY_QUEUE_V2, name, {
            "component_types": dtypes, "shapes": shapes, "capacity": capacity,
            "container": "", "shared_name": shared_name or ""})
        super().__init__(dtypes, shapes, names, ref)

