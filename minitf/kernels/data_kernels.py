"""Kernels of the tf.data iterator ops (see ``minitf/data/iterator_ops.py``).

An :class:`IteratorResource` holds the running pipeline: a Python generator
made from the dataset description and this step's values of the dataset's
input tensors. ``IteratorGetNext`` takes one element from it (under a lock,
so two threads never get the same element) and fails with OutOfRangeError
"End of sequence" when the generator is done.
"""

import itertools
import threading

import numpy as np

from minitf.framework import errors
from minitf.kernels.registry import register

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
    from minitf.data.iterator_ops import lookup_dataset
    dataset = lookup_dataset(op.graph, op.get_attr("dataset_key"))
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


@register("OneShotIterator", ("CPU",))
def _one_shot(op, device):
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


@register("IteratorV2", ("CPU",))
def _iterator(op, device):
    def compute(ctx, inputs):
        name = _iterator_name(op, ctx)
        return [ctx.resources.lookup_or_create(op._attrs.get("container", ""), name,
                                               lambda: IteratorResource(name))]
    return compute


@register("MakeIterator", ("CPU",))
def _make_iterator(op, device):
    dataset = _dataset_of(op)
    inputs_t = dataset._all_inputs()

    def compute(ctx, inputs):
        inputs[0].start(dataset, dict(zip(inputs_t, inputs[1:])))
        return []
    return compute


@register("IteratorGetNext", ("CPU",))
def _get_next(op, device):
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
