"""TF1 iterators over a Dataset, as graph ops.

* one-shot: ``OneShotIterator`` (inputs: the tensors the dataset reads)
  creates the iterator resource and starts it the first time it runs in a
  session; ``get_next()`` pulls from it until OutOfRangeError;
* initializable: ``IteratorV2`` makes an empty iterator resource;
  ``iterator.initializer`` (``MakeIterator``, inputs: the iterator and the
  dataset's tensors, e.g. a fed placeholder) (re)starts it from the
  beginning; ``get_next()`` before that fails with FailedPreconditionError.

The dataset description itself is Python (functions included), so it stays
with the graph in this process: the op carries only a key into
``_DATASETS``. A graph shipped to a server has no such entry, so tf.data
runs in local sessions (queues are the way to share input across tasks).
"""

import itertools
import weakref

from minitf.data.structure import flatten, pack
from minitf.framework import dtypes as _dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.core import make_op, name_scope
from minitf.ops.op_def import register_op

register_op("OneShotIterator", stateful=True)
register_op("IteratorV2", stateful=True)
register_op("MakeIterator", ref_inputs=(0,), stateful=True)
register_op("IteratorGetNext", ref_inputs=(0,), stateful=True)

_DATASETS = weakref.WeakKeyDictionary()  # graph -> {key: Dataset}
_keys = itertools.count(1)


def _remember(graph, dataset):
    key = next(_keys)
    _DATASETS.setdefault(graph, {})[key] = dataset
    return key


def lookup_dataset(graph, key):
    """The Dataset behind an iterator op (None in a graph shipped elsewhere)."""
    return _DATASETS.get(graph, {}).get(key)


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
        op = make_op("IteratorGetNext", [self._handle], [d for d, _ in flat],
                     [s for _, s in flat], name=name or "IteratorGetNext",
                     attrs={"output_types": [d for d, _ in flat],
                            "output_shapes": [s for _, s in flat]})
        return pack(self._structure, op.outputs)


def _make_iterator_op(handle, dataset, name=None):
    graph = handle.graph
    key = _remember(graph, dataset)
    return make_op("MakeIterator", [handle] + dataset._all_inputs(), [], [],
                   name=name or "MakeIterator", attrs={"dataset_key": key})


def make_one_shot_iterator(dataset):
    """An iterator that starts itself on first use and cannot be restarted."""
    graph = get_default_graph()
    key = _remember(graph, dataset)
    with name_scope(None, "OneShotIterator", []) as scope:
        handle = make_op("OneShotIterator", dataset._all_inputs(), [_dtypes.resource],
                         [TensorShape([])], name=scope[:-1] if scope else None,
                         attrs={"dataset_key": key, "container": "", "shared_name": ""},
                         graph=graph).outputs[0]
    return Iterator(handle, None, dataset)


def make_initializable_iterator(dataset, shared_name=None):
    """An iterator started (and restarted) by running ``iterator.initializer``."""
    graph = get_default_graph()
    handle = make_op("IteratorV2", [], [_dtypes.resource], [TensorShape([])],
                     name="Iterator", attrs={"container": "",
                                             "shared_name": shared_name or ""},
                     graph=graph).outputs[0]
    return Iterator(handle, _make_iterator_op(handle, dataset), dataset)

