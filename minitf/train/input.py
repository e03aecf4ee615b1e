"""TF1 input pipelines built from queues and queue runners.

Two patterns, both "a queue plus a QueueRunner that keeps it full":

**Producers** put a list of things (filenames, numbers, indices) into a
FIFOQueue, epoch after epoch::

    string_input_producer(["a.csv", "b.csv"], num_epochs=2, shuffle=False)

builds ``limit_epochs(list) -> [random_shuffle] -> FIFOQueue.enqueue_many``
and registers a QueueRunner. Each run of the enqueue op pushes the whole
list once (one epoch). With ``num_epochs`` a *local variable* counts the
epochs (``CountUpTo``): the run after the last epoch fails with
OutOfRangeError, the runner closes the queue, and readers downstream end
with OutOfRangeError once it is drained. That is why programs run
``tf.local_variables_initializer()`` first.

**Batchers** (``batch``, ``shuffle_batch``, ``batch_join``,
``shuffle_batch_join``) put single examples into a queue from
``num_threads`` enqueue ops (or one per tensor list for the ``_join``
variants) and dequeue ``batch_size`` of them at once: ``dequeue_many``, or
``dequeue_up_to`` with ``allow_smaller_final_batch`` so the last, smaller
batch is not lost. ``dynamic_pad`` uses a PaddingFIFOQueue so examples of
different lengths are zero-padded to the longest in their batch.
"""

from minitf.framework import dtypes as _dtypes
from minitf.framework.graph import GraphKeys, Tensor, get_default_graph
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops import array_ops, data_flow_ops, random_ops, variables
from minitf.ops.core import constant, convert_to_tensor, name_scope

from minitf.train.queue_runner import QueueRunner, add_queue_runner


# -- producers ----------------------------------------------------------------------------
def limit_epochs(tensor, num_epochs=None, name=None):
    """``tensor``, but only ``num_epochs`` times: after that, evaluating the
    result fails with OutOfRangeError. A local ``epochs`` variable counts."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = constant(0, dtype=_dtypes.int64)
        epochs = variables.Variable(zero64, name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = variables.count_up_to(epochs, num_epochs)
        with get_default_graph().control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope[:-1])


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A FIFOQueue fed with the rows of ``input_tensor``, ``num_epochs``
    times (forever if None), each epoch shuffled if ``shuffle``."""
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(
            as_shape(element_shape) if element_shape is not None else TensorShape(None))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = data_flow_ops.FIFOQueue(capacity=capacity,
                                    dtypes=[input_tensor.dtype.base_dtype],
                                    shapes=[element_shape], shared_name=shared_name,
                                    name=name or "fifo_queue")
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    """A queue of filenames for a reader (see :func:`input_producer`)."""
    if not isinstance(string_tensor, Tensor) and len(string_tensor) == 0:
        raise ValueError("string_input_producer requires a non-null input tensor")
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=_dtypes.string)
        return input_producer(string_tensor, num_epochs=num_epochs, shuffle=shuffle,
                              seed=seed, capacity=capacity, shared_name=shared_name,
                              name=scope, cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the integers ``0 .. limit-1`` (int32)."""
    with name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = array_ops.range_(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, "fraction_of_%d_full" % capacity, scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row of every tensor in ``tensor_list`` at a time (the same row of
    each): an index queue from :func:`range_input_producer`, then gathers."""
    with name_scope(name, "input_producer", tensor_list):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = tensor_list[0].shape.as_list()[0] \
            if tensor_list[0].shape.ndims else None
        if range_size is None:
            range_size = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensor_list]


# -- batching -------------------------------------------------------------------------------
def _as_tensor_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    return [tensors]


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if not isinstance(dequeued, (list, tuple)):
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _shapes(tensor_lists, shapes, enqueue_many, dynamic_pad=False):
    if shapes is None:
        shapes = []
        for i, t in enumerate(tensor_lists[0]):
            s = t.shape
            if s.ndims is None:
                raise ValueError("Cannot infer Tensor's rank: %s" % t)
            s = TensorShape(s.as_list()[1:]) if enqueue_many else s
            for other in tensor_lists[1:]:
                o = other[i].shape
                s = s.merge_with(TensorShape(o.as_list()[1:]) if enqueue_many else o)
            shapes.append(s)
    shapes = [as_shape(s) for s in shapes]
    if not dynamic_pad and not all(s.is_fully_defined() for s in shapes):
        raise ValueError("All shapes must be fully defined: %s" % shapes)
    return shapes


def _prepare(tensor_lists):
    out = []
    for tl in tensor_lists:
        tl = [convert_to_tensor(t) for t in tl]
        if not tl:
            raise ValueError("Expected at least one tensor in batch().")
        out.append(tl)
    types = [t.dtype.base_dtype for t in out[0]]
    for tl in out[1:]:
        if [t.dtype.base_dtype for t in tl] != types:
            raise TypeError("Expected types to be consistent: %s vs. %s."
                            % (", ".join(t.name for t in types),
                               ", ".join(t.dtype.base_dtype.name for t in tl)))
    return out, types


def _enqueue(queue, tensor_lists, enqueue_many):
    enq = queue.enqueue_many if enqueue_many else queue.enqueue
    add_queue_runner(QueueRunner(queue, [enq(tl) for tl in tensor_lists]))


def _dequeue(queue, batch_size, allow_smaller_final_batch, name):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch(tensor_lists, original, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
           allow_smaller_final_batch, shared_name, name, default_name):
    with name_scope(name, default_name, [t for tl in tensor_lists for t in tl
                                         if isinstance(t, Tensor)]) as scope:
        tensor_lists, types = _prepare(tensor_lists)
        shapes = _shapes(tensor_lists, shapes, enqueue_many, dynamic_pad)
        cls = data_flow_ops.PaddingFIFOQueue if dynamic_pad else data_flow_ops.FIFOQueue
        queue = cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        _enqueue(queue, tensor_lists, enqueue_many)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope[:-1])
        return _as_original_type(original, dequeued)


def _shuffle_batch(tensor_lists, original, batch_size, capacity, min_after_dequeue, seed,
                   enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                   default_name):
    with name_scope(name, default_name, [t for tl in tensor_lists for t in tl
                                         if isinstance(t, Tensor)]) as scope:
        tensor_lists, types = _prepare(tensor_lists)
        shapes = _shapes(tensor_lists, shapes, enqueue_many)
        if capacity <= min_after_dequeue:
            raise ValueError("capacity %d must be bigger than min_after_dequeue %d."
                             % (capacity, min_after_dequeue))
        queue = data_flow_ops.RandomShuffleQueue(
            capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
            shapes=shapes, shared_name=shared_name)
        _enqueue(queue, tensor_lists, enqueue_many)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope[:-1])
        return _as_original_type(original, dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of ``batch_size`` examples, in order, filled by ``num_threads``
    threads (so with more than one thread the order across threads is not
    fixed). One tensor in -> one tensor out (TF's rule)."""
    tensor_list = _as_tensor_list(tensors)
    return _batch([tensor_list] * num_threads, tensors, batch_size, capacity, enqueue_many,
                  shapes, dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch")


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """Like :func:`batch`, with one enqueue thread per tensor list (e.g. one
    reader per file), all of the same types and shapes."""
    lists = [_as_tensor_list(t) for t in tensors_list]
    return _batch(lists, tensors_list[0], batch_size, capacity, enqueue_many, shapes,
                  dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch_join")


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Random batches drawn from a RandomShuffleQueue that keeps at least
    ``min_after_dequeue`` examples in it (until closed), for a good mix."""
    tensor_list = _as_tensor_list(tensors)
    return _shuffle_batch([tensor_list] * num_threads, tensors, batch_size, capacity,
                          min_after_dequeue, seed, enqueue_many, shapes,
                          allow_smaller_final_batch, shared_name, name, "shuffle_batch")


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """:func:`shuffle_batch` with one enqueue thread per tensor list."""
    lists = [_as_tensor_list(t) for t in tensors_list]
    return _shuffle_batch(lists, tensors_list[0], batch_size, capacity, min_after_dequeue,
                          seed, enqueue_many, shapes, allow_smaller_final_batch, shared_name,
                          name, "shuffle_batch_join")
