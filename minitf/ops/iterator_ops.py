"""TF1 iterators over a Dataset, as graph ops.

* one-shot: ``OneShotIterator`` (inputs: the tensors the dataset reads)
  creates the iterator resource and starts it the first time it runs in a
  session; ``get_next()`` pulls from it until OutOfRangeError;
* initializable: ``IteratorV2`` makes an empty iterator resource;
  ``iterator.initializer`` (``MakeIterator``, inputs: the iterator and the
  dataset's tensors, e.g. a fed placeholder) (re)starts it from the
  beginning; ``get_next()`` before that fails with FailedPreconditionError.

The dataset description itself is Python (functions included), so it stays
with the graph in this process, in the graph's dataset library: the op carries
only a key into it. A graph shipped to a server has no such entry, so tf.data
runs in local sessions (queues are the way to share input across tasks).

An :class:`IteratorResource` holds the running pipeline: a Python generator
made from the dataset description and this step's values of the dataset's
input tensors. ``IteratorGetNext`` takes one element from it (under a lock,
so two threads never get the same element) and fails with OutOfRangeError
"End of sequence" when the generator is done.
"""

import itertools
import threading

import numpy as np

from minitf.framework.nest import flatten, pack
from minitf.framework import dtypes as _dtypes
from minitf.framework import errors
from minitf.framework.graph import get_default_graph
from minitf.framework.op_def import NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.core import make_op, name_scope

_private_ids = itertools.count()


class IteratorResource:
    kind = "Iterator"

    def __init__(self, name):
        self.name = name
        self.lock = threading.Lock()
        self.generator = None
        self.produced = 0

    def start(self, dataset, values):
        with self.lock:
            self.generator = dataset._generate(values)
            self.produced = 0

    def get_next(self):
        with self.lock:
            if self.generator is None:
                raise errors.FailedPreconditionError(
                    None, None, "GetNext() failed because the iterator has not been "
                    "initialized. Ensure that you have run the initializer operation for this "
                    "iterator before getting the next element.")
            try:
                element = next(self.generator)
            except StopIteration:
                raise errors.OutOfRangeError(None, None, "End of sequence") from None
            self.produced += 1
            return element

    def summary(self):
        return {"kind": self.kind, "name": self.name, "produced": self.produced,
                "initialized": self.generator is not None}

    def nbytes(self):
        return 0


def _dataset_of(op):
    """The Dataset an iterator op runs, from its graph's library (a graph shipped
    to a server has none: its pipeline is Python code that stayed with the client)."""
    dataset = op.graph._datasets.get(op.get_attr("dataset_key"))
    if dataset is None:
        raise errors.UnimplementedError(
            None, None, "The tf.data pipeline of %s is Python code kept with the client's "
                        "graph: minitf runs tf.data in local sessions only (use a queue to "
                        "feed input across tasks)." % op.name)
    return dataset


def _iterator_name(op, ctx):
    shared = op._attrs.get("shared_name", "")
    if shared:
        return shared
    key = ("iterator", op.name)
    name = ctx.session_state.get(key)
    if name is None:
        name = ctx.session_state[key] = "_%d_%s" % (next(_private_ids), op.name)
    return name


def _one_shot_kernel(op, backend):
    dataset = _dataset_of(op)
    inputs_t = dataset._all_inputs()

    def compute(ctx, inputs):
        name = _iterator_name(op, ctx)
        it = ctx.resources.lookup_or_create("", name, lambda: IteratorResource(name))
        if it.generator is None:
            with it.lock:
                fresh = it.generator is None
            if fresh:
                it.start(dataset, dict(zip(inputs_t, inputs)))
        return [it]
    return compute


def _iterator_kernel(op, backend):
    def compute(ctx, inputs):
        name = _iterator_name(op, ctx)
        return [ctx.resources.lookup_or_create(op._attrs.get("container", ""), name,
                                               lambda: IteratorResource(name))]
    return compute


def _make_iterator_kernel(op, backend):
    dataset = _dataset_of(op)
    inputs_t = dataset._all_inputs()

    def compute(ctx, inputs):
        inputs[0].start(dataset, dict(zip(inputs_t, inputs[1:])))
        return []
    return compute


def _get_next_kernel(op, backend):
    dtypes_ = op.get_attr("output_types")

    def compute(ctx, inputs):
        element = inputs[0].get_next()
        out = []
        for value, dt in zip(element, dtypes_):
            value = np.asarray(value)
            if dt.name == "string":
                if value.dtype != object:
                    value = value.astype(object)
            elif value.dtype != dt.np_dtype:
                value = value.astype(dt.np_dtype)
            out.append(value)
        return out
    return compute


def _row(name, kernel, inputs=(), **flags):
    return declare(OpDef(name, inputs=inputs, gradient=NOT_DIFFERENTIABLE, stateful=True,
                         kernel=kernel, **flags))


ONE_SHOT_ITERATOR = _row("OneShotIterator", _one_shot_kernel, ("*dataset_inputs",))
ITERATOR_V2 = _row("IteratorV2", _iterator_kernel)
MAKE_ITERATOR = _row("MakeIterator", _make_iterator_kernel, ("iterator", "*dataset_inputs"),
                     ref_inputs=(0,))
ITERATOR_GET_NEXT = _row("IteratorGetNext", _get_next_kernel, ("iterator",), ref_inputs=(0,))


_keys = itertools.count(1)


def _remember(graph, dataset):
    """Put ``dataset`` in the graph's library; its key goes in the iterator op."""
    key = next(_keys)
    graph._datasets[key] = dataset
    return key


class Iterator:
    """``get_next()`` gives the next element's tensors (same nesting as the
    dataset's elements); ``initializer`` restarts an initializable iterator."""

    def __init__(self, handle, initializer, dataset):
        self._handle = handle
        self._initializer = initializer
        self._structure = dataset._structure
        self.output_types = dataset.output_types
        self.output_shapes = dataset.output_shapes
        self.output_classes = dataset.output_classes

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        return _make_iterator_op(self._handle, dataset, name)

    def get_next(self, name=None):
        flat = flatten(self._structure)
        op = make_op(ITERATOR_GET_NEXT, [self._handle], [d for d, _ in flat],
                     [s for _, s in flat], name=name or "IteratorGetNext",
                     attrs={"output_types": [d for d, _ in flat],
                            "output_shapes": [s for _, s in flat]})
        return pack(self._structure, op.outputs)


def _make_iterator_op(handle, dataset, name=None):
    graph = handle.graph
    key = _remember(graph, dataset)
    return make_op(MAKE_ITERATOR, [handle] + dataset._all_inputs(), [], [],
                   name=name or "MakeIterator", attrs={"dataset_key": key})


def make_one_shot_iterator(dataset):
    """An iterator that starts itself on first use and cannot be restarted."""
    graph = get_default_graph()
    key = _remember(graph, dataset)
    with name_scope(None, "OneShotIterator", []) as scope:
        handle = make_op(ONE_SHOT_ITERATOR, dataset._all_inputs(), [_dtypes.resource],
                         [TensorShape([])], name=scope[:-1] if scope else None,
                         attrs={"dataset_key": key, "container": "", "shared_name": ""},
                         graph=graph).outputs[0]
    return Iterator(handle, None, dataset)


def make_initializable_iterator(dataset, shared_name=None):
    """An iterator started (and restarted) by running ``iterator.initializer``."""
    graph = get_default_graph()
    handle = make_op(ITERATOR_V2, [], [_dtypes.resource], [TensorShape([])],
                     name="Iterator", attrs={"container": "",
                                             "shared_name": shared_name or ""},
                     graph=graph).outputs[0]
    return Iterator(handle, _make_iterator_op(handle, dataset), dataset)

