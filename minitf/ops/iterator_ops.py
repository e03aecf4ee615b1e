"""TF1 iterators over a Dataset, as graph ops.

* one-shot: ``OneShotIterator`` (inputs: the tensors the dataset reads)
  creates the iterator resource and starts it the first time it runs in a
  session; ``get_next()`` pulls from it until OutOfRangeError;
* initializable: ``IteratorV2`` makes an empty iterator resource;
  ``iterator.initializer`` (``MakeIterator``, inputs: the iterator and the
  dataset's tensors, e.g. a fed placeholder) (re)starts it from the
  beginning; ``get_next()`` before that fails with FailedPreconditionError.

The dataset description itself is Python (functions included). In this
process it stays with the graph, in the graph's dataset library: the op
carries a key into it. For a graph shipped to a server the op also carries the
pipeline as plain data, its ``dataset`` attr (``minitf/data/remote.py`` writes
it and rebuilds the pipeline from it, through :func:`register_dataset_decoder`),
so an iterator in a remote session lives on the task it is placed on and, with
a ``shared_name``, is shared by every session there, like a queue.

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


_decoders = []    # the function that rebuilds a Dataset from its wire description


def register_dataset_decoder(rebuild):
    """Called by ``minitf.data`` (which imports this module, not the other way
    round): ``rebuild(description) -> Dataset`` for pipelines shipped to a server."""
    _decoders[:] = [rebuild]


def _dataset_of(op):
    """``(dataset, keys)``: the Dataset an iterator op runs, and the keys its
    generators read the op's input values by. In this process the dataset is in
    the graph's library (keys: the input tensors); in a graph shipped to a
    server it is rebuilt from the op's ``dataset`` attr (keys: 0, 1, ...)."""
    dataset = op.graph._datasets.get(op.get_attr("dataset_key"))
    if dataset is not None:
        return dataset, dataset._all_inputs()
    description = op._attrs.get("dataset")
    if description is None or not _decoders:
        raise errors.UnimplementedError(
            None, None, "%s carries no description of its tf.data pipeline, so it cannot "
                        "run away from the graph it was built in" % op.name)
    dataset = _decoders[0](description)
    return dataset, list(range(len(op.inputs) - (1 if op.type == MAKE_ITERATOR.name else 0)))


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
    dataset, inputs_t = _dataset_of(op)

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
    dataset, inputs_t = _dataset_of(op)

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


def _pipeline_attrs(graph, dataset):
    """The key of ``dataset`` in the graph's library, and its wire description
    (``Dataset._wire_description()``: the pipeline as plain data)."""
    return {"dataset_key": _remember(graph, dataset), "dataset": dataset._wire_description()}


def _make_iterator_op(handle, dataset, name=None):
    return make_op(MAKE_ITERATOR, [handle] + dataset._all_inputs(), [], [],
                   name=name or "MakeIterator", attrs=_pipeline_attrs(handle.graph, dataset))


def make_one_shot_iterator(dataset):
    """An iterator that starts itself on first use and cannot be restarted."""
    graph = get_default_graph()
    attrs = dict(_pipeline_attrs(graph, dataset), container="", shared_name="")
    with name_scope(None, "OneShotIterator", []) as scope:
        handle = make_op(ONE_SHOT_ITERATOR, dataset._all_inputs(), [_dtypes.resource],
                         [TensorShape([])], name=scope[:-1] if scope else None,
                         attrs=attrs, graph=graph).outputs[0]
    return Iterator(handle, None, dataset)


def make_initializable_iterator(dataset, shared_name=None):
    """An iterator started (and restarted) by running ``iterator.initializer``;
    with a ``shared_name``, every session on a server shares it."""
    graph = get_default_graph()
    handle = make_op(ITERATOR_V2, [], [_dtypes.resource], [TensorShape([])],
                     name="Iterator", attrs={"container": "",
                                             "shared_name": shared_name or ""},
                     graph=graph).outputs[0]
    return Iterator(handle, _make_iterator_op(handle, dataset), dataset)

