"""Queues as TF1 builds them: ``tf.FIFOQueue``, ``tf.RandomShuffleQueue``,
``tf.PaddingFIFOQueue``, ``tf.PriorityQueue``.

A queue object holds one op, the queue itself (``FIFOQueueV2``, output: a
resource handle). Each method adds an op that takes that handle:
``q.enqueue(x)`` -> ``QueueEnqueueV2``, ``q.dequeue()`` -> ``QueueDequeueV2``,
and so on. Running those ops moves elements in and out of the queue kept by
the device that owns it (see ``minitf/runtime/queues.py`` for the blocking
rules). The placer keeps every op of a queue on the queue's device.
"""

from minitf.framework import dtypes as _dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops.core import convert_to_tensor, make_op, name_scope
from minitf.ops.op_def import register_op
from minitf.ops.random_ops import get_seed

for _t in ("FIFOQueueV2", "RandomShuffleQueueV2", "PaddingFIFOQueueV2", "PriorityQueueV2"):
    register_op(_t, stateful=True)
for _t in ("QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
           "QueueDequeueUpToV2", "QueueCloseV2"):
    register_op(_t, ref_inputs=(0,), stateful=True, blocking=True)
for _t in ("QueueSizeV2", "QueueIsClosedV2"):
    register_op(_t, ref_inputs=(0,), stateful=True)


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
        for i, (v, dt) in enumerate(zip(vals, self._dtypes)):
            t = convert_to_tensor(v, dtype=dt, name="component_%d" % i)
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
            return make_op("QueueEnqueueV2", [self._queue_ref] + tensors, [], [], name=scope,
                           attrs={"Tcomponents": [t.dtype for t in tensors],
                                  "timeout_ms": -1})

    def enqueue_many(self, vals, name=None):
        """An op that adds the slices of ``vals`` along dimension 0."""
        with name_scope(name, "%s_EnqueueMany" % self._name, []) as scope:
            tensors = self._check_vals(vals, True)
            return make_op("QueueEnqueueManyV2", [self._queue_ref] + tensors, [], [],
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
            op = make_op("QueueDequeueV2", [self._queue_ref], self._dtypes,
                         self._element_shapes(), name=scope,
                         attrs={"component_types": self._dtypes, "timeout_ms": -1})
        return self._result(op.outputs)

    def _dequeue_n(self, op_type, suffix, n, name, batch_dim):
        with name_scope(name, "%s_%s" % (self._name, suffix), [n]) as scope:
            n_t = convert_to_tensor(n, dtype=_dtypes.int32, name="n")
            shapes = [TensorShape([batch_dim]).concatenate(s) for s in self._element_shapes()]
            op = make_op(op_type, [self._queue_ref, n_t], self._dtypes, shapes, name=scope,
                         attrs={"component_types": self._dtypes, "timeout_ms": -1})
        return self._result(op.outputs)

    def dequeue_many(self, n, name=None):
        """``n`` elements stacked into a batch (blocks until there are ``n``)."""
        known = n if isinstance(n, int) else None
        return self._dequeue_n("QueueDequeueManyV2", "DequeueMany", n, name, known)

    def dequeue_up_to(self, n, name=None):
        """Up to ``n`` elements: fewer only once the queue is closed."""
        return self._dequeue_n("QueueDequeueUpToV2", "DequeueUpTo", n, name, None)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Close the queue: no more enqueues; what is left can still drain."""
        return make_op("QueueCloseV2", [self._queue_ref], [], [],
                       name=name or "%s_Close" % self._name,
                       attrs={"cancel_pending_enqueues": bool(cancel_pending_enqueues)})

    def is_closed(self, name=None):
        return make_op("QueueIsClosedV2", [self._queue_ref], [_dtypes.bool], [TensorShape([])],
                       name=name or "%s_Is_Closed" % self._name).outputs[0]

    def size(self, name=None):
        return make_op("QueueSizeV2", [self._queue_ref], [_dtypes.int32], [TensorShape([])],
                       name=name or "%s_Size" % self._name).outputs[0]


def _normalize(dtypes, shapes, names, allow_unknown=False):
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]
    dtypes = [_dtypes.as_dtype(d).base_dtype for d in dtypes]
    if shapes is not None:
        if len(shapes) and not isinstance(shapes[0], (list, tuple, TensorShape)) \
                and len(dtypes) == 1:
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


def _queue_op(op_type, name, attrs):
    graph = get_default_graph()
    op = make_op(op_type, [], [_dtypes.resource], [TensorShape([])], name=name,
                 attrs=attrs, graph=graph)
    return op.outputs[0]


class FIFOQueue(QueueBase):
    """First in, first out."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes, shapes, names = _normalize(dtypes, shapes, names)
        ref = _queue_op("FIFOQueueV2", name, {
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
        ref = _queue_op("PaddingFIFOQueueV2", name, {
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
            seed2 = 0  # as TF: a shared queue's seed must not depend on the graph
        ref = _queue_op("RandomShuffleQueueV2", name, {
            "component_types": dtypes, "shapes": shapes, "capacity": capacity,
            "min_after_dequeue": min_after_dequeue, "seed": seed1, "seed2": seed2,
            "container": "", "shared_name": shared_name or ""})
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """Dequeues the element with the smallest priority first. Every element
    starts with an int64 priority: ``enqueue((priority, value, ...))``."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        types, shapes, names = _normalize(types, shapes, names)
        dtypes = [_dtypes.int64] + types
        shapes = [TensorShape([])] + shapes if shapes else []
        if names is not None:
            names = ["priority"] + names  # not part of TF's API: minitf keeps it simple
        ref = _queue_op("PriorityQueueV2", name, {
            "component_types": dtypes, "shapes": shapes, "capacity": capacity,
            "container": "", "shared_name": shared_name or ""})
        super().__init__(dtypes, shapes, names, ref)

