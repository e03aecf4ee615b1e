"""Kernels of the queue ops: they find the queue resource and call it.

The queue op (``FIFOQueueV2``...) outputs a handle: the
:class:`~minitf.runtime.queues.QueueResource` itself, looked up in the
device's resource manager. With a ``shared_name`` every session on a server
finds the same queue; without one, each session gets a queue of its own
(named ``_N_opname`` as in TF), so a local session's queue is private.

The enqueue/dequeue kernels check what they are given against the queue's
dtypes and shapes (InvalidArgumentError, as TF) and hand elements to the
queue; dequeue kernels stack elements into batches (padding them for a
PaddingFIFOQueue).
"""

import itertools

import numpy as np

from minitf.framework import errors
from minitf.kernels.registry import register
from minitf.runtime import queues

_QUEUE_CLASSES = {
    "FIFOQueueV2": queues.QueueResource,
    "RandomShuffleQueueV2": queues.RandomShuffleQueue,
    "PaddingFIFOQueueV2": queues.PaddingFIFOQueue,
    "PriorityQueueV2": queues.PriorityQueue,
}
_private_ids = itertools.count()
ALL = ("CPU", "GPU")


@register(tuple(_QUEUE_CLASSES), ("CPU",))
def _queue_op(op, device):
    cls = _QUEUE_CLASSES[op.type]
    attrs = op._attrs
    container = attrs.get("container", "")
    shared = attrs.get("shared_name", "")
    dtypes_ = attrs["component_types"]
    shapes = attrs.get("shapes") or []
    capacity = attrs.get("capacity", -1)
    min_after = attrs.get("min_after_dequeue", 0)
    seeds = (attrs.get("seed", 0), attrs.get("seed2", 0))

    def compute(ctx, inputs):
        name = shared
        if not name:  # private to this session: a name of its own
            key = ("queue", op.name)
            name = ctx.session_state.get(key)
            if name is None:
                name = ctx.session_state[key] = "_%d_%s" % (next(_private_ids), op.name)
        queue = ctx.resources.lookup_or_create(
            container, name, lambda: cls(name, capacity, dtypes_, shapes, min_after, seeds))
        return [queue]
    return compute


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


@register(("QueueEnqueueV2", "QueueEnqueueManyV2"), ALL)
def _enqueue(op, device):
    many = op.type == "QueueEnqueueManyV2"

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
            elements = [tuple(np.array(v[j]) for v in values) for j in range(n)]
        else:
            elements = [tuple(values)]
        queue.enqueue(elements, ctx.step)
        return []
    return compute


def _pad_to(values, fill):
    """Zero-pad arrays of one component to the largest shape among them."""
    ndim = values[0].ndim
    shape = [max(v.shape[d] for v in values) for d in range(ndim)]
    out = np.full([len(values)] + shape, fill, dtype=values[0].dtype)
    for j, v in enumerate(values):
        out[(j,) + tuple(slice(0, s) for s in v.shape)] = v
    return out


@register(("QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2"), ALL)
def _dequeue(op, device):
    batched = op.type != "QueueDequeueV2"
    allow_smaller = op.type == "QueueDequeueUpToV2"

    def compute(ctx, inputs):
        queue = inputs[0]
        n = int(inputs[1]) if batched else None
        if batched and n < 0:
            raise errors.InvalidArgumentError(None, None, "DequeueMany requested %d < 0 "
                                              "elements" % n)
        if batched and n == 0:
            return [np.zeros((0,) + tuple(d or 0 for d in (s.as_list() if s is not None
                                                          else [])),
                             dtype=dt.np_dtype)
                    for dt, s in zip(queue.dtypes, queue.shapes)]
        elements = queue.dequeue(n, ctx.step, allow_smaller)
        if not batched:
            return list(elements[0])
        out = []
        for i in range(len(queue.dtypes)):
            column = [e[i] for e in elements]
            if isinstance(queue, queues.PaddingFIFOQueue):
                fill = b"" if column[0].dtype == object else 0
                out.append(_pad_to(column, fill))
            else:
                if len({c.shape for c in column}) > 1:
                    raise errors.InvalidArgumentError(
                        None, None, "Shape mismatch in tuple component %d: elements of a "
                        "batch must have one shape (use a PaddingFIFOQueue)" % i)
                out.append(np.stack(column))
        return out
    return compute


@register("QueueCloseV2", ALL)
def _close(op, device):
    cancel = op.get_attr("cancel_pending_enqueues")

    def compute(ctx, inputs):
        inputs[0].close(cancel, ctx.step)
        return []
    return compute


@register("QueueSizeV2", ALL)
def _size(op, device):
    return lambda ctx, inputs: [np.array(inputs[0].size(), dtype=np.int32)]


@register("QueueIsClosedV2", ALL)
def _is_closed(op, device):
    return lambda ctx, inputs: [np.array(inputs[0].closed)]
