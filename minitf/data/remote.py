"""How a tf.data pipeline travels to a server: its wire description.

A Dataset is Python (``range(10).map(f).batch(4)``: objects, and functions
traced into small graphs). In a local session the iterator op finds it in the
graph's library; a graph shipped to a server has no such library. So every
iterator op also carries its pipeline as *plain data*, the ``dataset`` attr::

    {"kind": "batch", "batch_size": 4, "drop": False,
     "input": {"kind": "map", "function": {graph, placeholders, outputs},
               "input": {"kind": "range", "args": [0, 1, 2], ...}}}

It travels with the graph like any attr (msgpack and raw tensors, never
pickle). The numbers in ``args``/``tensors`` are positions among the iterator
op's inputs, whose values come from the step as in TF. A function is its graph
as node defs (``minitf/distributed/protocol.py``).

On the server the iterator kernel hands the description to :func:`rebuild`
(``minitf/ops/iterator_ops.py`` finds it through
:func:`~minitf.ops.iterator_ops.register_dataset_decoder`), which makes the
same Dataset objects again, and the pipeline runs there: on the task the
iterator was placed on. With a ``shared_name`` every session on that server
shares the one iterator, as it shares a queue.
"""

import threading

import numpy as np

from minitf.data import dataset_ops as d
from minitf.distributed import protocol
from minitf.framework.graph import Graph
from minitf.framework.nest import flatten
from minitf.ops import iterator_ops

__all__ = ["describe", "rebuild"]


# -- describing -----------------------------------------------------------------------------------
def describe(dataset):
    """The wire description of ``dataset``; its inputs are numbered in the order
    of ``dataset._all_inputs()`` (the iterator op's inputs)."""
    return _describe(dataset, {t: i for i, t in enumerate(dataset._all_inputs())})


def _keys(tensors, index):
    return [index[t] for t in tensors]


def _count(count, index):
    return {"value": count.value, "tensor": None if count.tensor is None else index[count.tensor]}


def _function(fn):
    nodes, tensors = protocol.encode_ops(fn.graph.get_operations())
    out = {"nodes": nodes, "tensors": tensors,
           "placeholders": [p.name for p in fn.placeholders],
           "outputs": [t.name for t in fn.outputs]}
    if fn.dataset is not None:
        out["dataset"] = _describe(fn.dataset, {t: i for i, t in enumerate(fn.outputs)})
    return out


def _describe(ds, index):
    kind = type(ds)
    if kind is d.TensorSliceDataset:
        return {"kind": "slices", "tensors": _keys(flatten(ds._tensors), index)}
    if kind is d.TensorDataset:
        return {"kind": "tensors", "tensors": _keys(flatten(ds._tensors), index)}
    if kind is d.RangeDataset:
        return {"kind": "range", "args": _keys(ds._args, index), "dtype": ds._dtype}
    if kind is d.TextLineDataset:
        return {"kind": "text_lines", "filenames": index[ds._filenames]}
    if kind is d.TFRecordDataset:
        return {"kind": "tf_records", "filenames": index[ds._filenames],
                "compression": ds._compression}
    if kind is d.ConcatenateDataset:
        return {"kind": "concatenate", "first": _describe(ds._first, index),
                "second": _describe(ds._second, index)}
    if kind is d.ZipDataset:
        return {"kind": "zip", "datasets": [_describe(x, index) for x in flatten(ds._datasets)]}
    described = {"input": _describe(ds._input, index)}
    if kind is d.MapDataset:
        described.update(kind="map", function=_function(ds._fn))
    elif kind is d.FilterDataset:
        described.update(kind="filter", function=_function(ds._fn))
    elif kind is d.InterleaveDataset:
        described.update(kind="interleave", function=_function(ds._fn),
                         cycle_length=ds._cycle_length, block_length=ds._block_length)
    elif kind is d.PaddedBatchDataset:
        described.update(kind="padded_batch", batch_size=ds._batch_size, drop=ds._drop,
                         padded_shapes=list(ds._padded_shapes),
                         pads=[np.asarray(p) for p in ds._pads])
    elif kind is d.BatchDataset:
        described.update(kind="batch", batch_size=ds._batch_size, drop=ds._drop)
    elif kind in (d.RepeatDataset, d.SkipDataset, d.TakeDataset):
        described.update(kind=kind.__name__, count=_count(ds._count, index))
    elif kind is d.ShuffleDataset:
        s1, s2 = ds._seeds
        described.update(kind="shuffle", buffer_size=ds._buffer_size,
                         seeds=[-1 if s1 is None else s1, -1 if s2 is None else s2],
                         reshuffle=bool(ds._reshuffle))
    elif kind is d.PrefetchDataset:
        size = ds._buffer_size
        described.update(kind="prefetch", buffer_size=size if isinstance(size, int) else None)
    else:
        raise TypeError("minitf cannot send a %s to a server" % kind.__name__)
    return described


# -- rebuilding -----------------------------------------------------------------------------------
def rebuild(description):
    """The Dataset a description stands for; its ``_generate(values)`` takes the
    iterator op's input values keyed by position (0, 1, ...)."""
    return _rebuild(description, None)


def _new(cls, **fields):
    ds = cls.__new__(cls)
    ds.__dict__.update(fields)
    return ds


def _key(keys, i):
    return i if keys is None else keys[i]


def _rebuild_function(desc):
    fn = d._Function.__new__(d._Function)
    fn.graph = Graph()
    protocol.import_nodes(fn.graph, desc["nodes"], desc["tensors"])
    fn.placeholders = [fn.graph.get_tensor_by_name(n) for n in desc["placeholders"]]
    fn.outputs = [fn.graph.get_tensor_by_name(n) for n in desc["outputs"]]
    fn.dataset = _rebuild(desc["dataset"], fn.outputs) if "dataset" in desc else None
    fn.structure = None
    fn._session = None
    fn._lock = threading.Lock()
    return fn


def _rebuild_count(desc, keys):
    count = d._Count.__new__(d._Count)
    count.value = desc["value"]
    count.tensor = None if desc["tensor"] is None else _key(keys, desc["tensor"])
    return count


def _rebuild(desc, keys):
    kind = desc["kind"]
    if kind in ("slices", "tensors"):
        cls = d.TensorSliceDataset if kind == "slices" else d.TensorDataset
        return _new(cls, _tensors=tuple(_key(keys, i) for i in desc["tensors"]))
    if kind == "range":
        return _new(d.RangeDataset, _args=[_key(keys, i) for i in desc["args"]],
                    _dtype=desc["dtype"])
    if kind == "text_lines":
        return _new(d.TextLineDataset, _filenames=_key(keys, desc["filenames"]))
    if kind == "tf_records":
        return _new(d.TFRecordDataset, _filenames=_key(keys, desc["filenames"]),
                    _compression=desc["compression"])
    if kind == "concatenate":
        return _new(d.ConcatenateDataset, _first=_rebuild(desc["first"], keys),
                    _second=_rebuild(desc["second"], keys))
    if kind == "zip":
        return _new(d.ZipDataset, _datasets=tuple(_rebuild(x, keys) for x in desc["datasets"]))
    inner = _rebuild(desc["input"], keys)
    if kind in ("map", "filter"):
        cls = d.MapDataset if kind == "map" else d.FilterDataset
        return _new(cls, _input=inner, _fn=_rebuild_function(desc["function"]))
    if kind == "interleave":
        return _new(d.InterleaveDataset, _input=inner, _fn=_rebuild_function(desc["function"]),
                    _cycle_length=desc["cycle_length"], _block_length=desc["block_length"])
    if kind == "batch":
        return _new(d.BatchDataset, _input=inner, _batch_size=desc["batch_size"],
                    _drop=desc["drop"])
    if kind == "padded_batch":
        return _new(d.PaddedBatchDataset, _input=inner, _batch_size=desc["batch_size"],
                    _drop=desc["drop"], _padded_shapes=list(desc["padded_shapes"]),
                    _pads=list(desc["pads"]))
    if kind in ("RepeatDataset", "SkipDataset", "TakeDataset"):
        return _new(getattr(d, kind), _input=inner, _count=_rebuild_count(desc["count"], keys))
    if kind == "shuffle":
        s1, s2 = (None if s < 0 else s for s in desc["seeds"])
        return _new(d.ShuffleDataset, _input=inner, _buffer_size=desc["buffer_size"],
                    _seeds=(s1, s2), _reshuffle=desc["reshuffle"], _epoch_rng=None)
    if kind == "prefetch":
        return _new(d.PrefetchDataset, _input=inner, _buffer_size=desc["buffer_size"])
    raise ValueError("unknown dataset kind %r in a pipeline description" % kind)


iterator_ops.register_dataset_decoder(rebuild)
