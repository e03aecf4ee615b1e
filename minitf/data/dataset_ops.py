"""``tf.data.Dataset``: the newer input pipeline, for comparison with queues.

A Dataset is a *description* (``range(10).map(f).batch(4)``), built in
Python without running anything. Nothing happens until an iterator over it
runs inside ``sess.run``:

* ``iterator = dataset.make_one_shot_iterator()`` (or an initializable one)
  adds an iterator op to the graph, and ``iterator.get_next()`` an
  ``IteratorGetNext`` op whose outputs are the next element's components;
* when that op runs, its kernel (``minitf/ops/iterator_ops.py``) asks
  the iterator resource for the next element. The resource holds a chain of
  plain Python generators, one per dataset in the description (see each
  class's ``_generate``), so what tf.data does is readable here, top to
  bottom: a ``batch`` pulls ``batch_size`` elements from the generator below
  it and stacks them;
* after the last element: OutOfRangeError "End of sequence".

Tensors a dataset is made from (``from_tensor_slices(x)``) are *inputs* of
the iterator op, so their values come from the step (a placeholder can be
fed when an initializable iterator is initialized). Functions
(``map(fn)``, ``filter``, ``interleave``) are traced once into a graph of
their own, with one placeholder per component, and run per element in a
private session.

Element order follows TF: ``repeat`` replays its input, ``batch`` keeps
order, ``interleave`` cycles through ``cycle_length`` inner datasets taking
``block_length`` elements from each. ``shuffle`` draws TF's random words in
TF's buffer, so a seeded shuffle gives TF's order.
"""

import os
import threading

import numpy as np

from minitf.framework import dtypes as _dtypes
from minitf.framework import errors
from minitf.framework.graph import Graph, Tensor
from minitf.framework.nest import Spec, flatten, pack
from minitf.framework.random_seed import get_seed
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.framework.tf_record import RecordFile, TFRecordOptions
from minitf.ops import readers
from minitf.ops.array_ops import placeholder
from minitf.ops.core import convert_to_tensor
from minitf.ops.iterator_ops import make_initializable_iterator, make_one_shot_iterator
from minitf.kernels.random_streams import PhiloxWords, nondeterministic_seeds
from minitf.runtime.session import Session

AUTOTUNE = -1


def _to_tensor_structure(value, name="component"):
    if isinstance(value, tuple):
        return type(value)(*[_to_tensor_structure(v, name) for v in value]) \
            if hasattr(value, "_fields") else tuple(_to_tensor_structure(v, name)
                                                    for v in value)
    if isinstance(value, dict):
        return {k: _to_tensor_structure(v, name) for k, v in value.items()}
    if hasattr(value, "_as_graph_element") and not isinstance(value, Tensor):
        value = value._as_graph_element()
    return convert_to_tensor(value, name=name)


class Dataset:
    """Base of every dataset: structure, static types/shapes, and the
    transformations (each returns a new Dataset)."""

    # subclasses set: self._structure (nested, leaves are (dtype, shape) pairs)

    # -- what a dataset must say ----------------------------------------------------------
    def _inputs(self):
        """Main-graph tensors this dataset (and the ones below it) read."""
        return []

    def _generate(self, values):
        """A Python iterator over flat elements (lists of numpy arrays);
        ``values`` maps each input tensor to its value in this step."""
        raise NotImplementedError

    # -- structure ------------------------------------------------------------------------
    @property
    def output_types(self):
        return pack(self._structure, [d for d, _ in flatten(self._structure)])

    @property
    def output_shapes(self):
        return pack(self._structure, [s for _, s in flatten(self._structure)])

    @property
    def output_classes(self):
        return pack(self._structure, [Tensor for _ in flatten(self._structure)])

    def _flat_types(self):
        return [d for d, _ in flatten(self._structure)]

    def _flat_shapes(self):
        return [s for _, s in flatten(self._structure)]

    def _all_inputs(self):
        seen, out = set(), []
        for t in self._inputs():
            if t not in seen:
                seen.add(t)
                out.append(t)
        return out

    # -- sources --------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors):
        """One element per row of ``tensors`` (all must have the same length)."""
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        """A single element: ``tensors`` itself."""
        return TensorDataset(tensors)

    @staticmethod
    def range(*args, **kwargs):
        """``range(stop)``, ``range(start, stop[, step])``: int64 scalars."""
        return RangeDataset(*args, **kwargs)

    @staticmethod
    def zip(datasets):
        return ZipDataset(datasets)

    # -- transformations --------------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        return MapDataset(self, map_func)

    def filter(self, predicate, name=None):
        return FilterDataset(self, predicate)

    def flat_map(self, map_func, name=None):
        return InterleaveDataset(self, map_func, 1, 1)

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        return InterleaveDataset(self, map_func, cycle_length, block_length)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        return BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                  drop_remainder)

    def repeat(self, count=None, name=None):
        return RepeatDataset(self, count)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def skip(self, count, name=None):
        return SkipDataset(self, count)

    def take(self, count, name=None):
        return TakeDataset(self, count)

    def prefetch(self, buffer_size, name=None):
        return PrefetchDataset(self, buffer_size)

    def concatenate(self, dataset, name=None):
        return ConcatenateDataset(self, dataset)

    # -- iterators (TF1 style) -------------------------------------------------------------
    def make_one_shot_iterator(self):
        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        return make_initializable_iterator(self, shared_name)

    def _wire_description(self):
        """This pipeline as plain data, for an iterator op run on a server."""
        return remote.describe(self)

    def __iter__(self):
        raise RuntimeError("`tf.data.Dataset` only supports Python-style iteration in eager "
                           "mode or within tf.function.")

    def __repr__(self):
        return "<%s shapes: %s, types: %s>" % (type(self).__name__, self.output_shapes,
                                               self.output_types)


class DatasetV1(Dataset):
    pass


def _leaf_spec(t):
    return Spec(t.dtype.base_dtype, t.shape)


def _scalar(value, name, dtype=_dtypes.int64):
    return convert_to_tensor(value, dtype=dtype, name=name)


# -- sources ----------------------------------------------------------------------------------
class TensorSliceDataset(Dataset):
    def __init__(self, tensors):
        self._tensors = _to_tensor_structure(tensors)
        flat = flatten(self._tensors)
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        dims = [t.shape.as_list()[0] if t.shape.ndims else None for t in flat]
        for d in dims[1:]:
            if dims[0] is not None and d is not None and d != dims[0]:
                raise ValueError("Dimensions %d and %d are not compatible" % (dims[0], d))
        self._structure = pack(self._tensors, [
            Spec(t.dtype.base_dtype, TensorShape(t.shape.as_list()[1:]) if t.shape.ndims
                 is not None else TensorShape(None)) for t in flat])

    def _inputs(self):
        return flatten(self._tensors)

    def _generate(self, values):
        arrays = [values[t] for t in flatten(self._tensors)]
        n = arrays[0].shape[0]
        if any(a.shape[0] != n for a in arrays):
            raise errors.InvalidArgumentError(None, None, "Dimensions of components must "
                                              "match: %s" % [a.shape[0] for a in arrays])
        for i in range(n):
            yield [a[i] for a in arrays]


class TensorDataset(Dataset):
    def __init__(self, tensors):
        self._tensors = _to_tensor_structure(tensors)
        self._structure = pack(self._tensors, [_leaf_spec(t) for t in flatten(self._tensors)])

    def _inputs(self):
        return flatten(self._tensors)

    def _generate(self, values):
        yield [values[t] for t in flatten(self._tensors)]


class RangeDataset(Dataset):
    def __init__(self, *args, output_type=_dtypes.int64, name=None):
        if len(args) == 1:
            args = (0, args[0], 1)
        elif len(args) == 2:
            args = (args[0], args[1], 1)
        elif len(args) != 3:
            raise ValueError("Invalid arguments to RangeDataset: %s" % (args,))
        self._args = [_scalar(a, n) for a, n in zip(args, ("start", "stop", "step"))]
        self._dtype = _dtypes.as_dtype(output_type)
        self._structure = Spec(self._dtype, TensorShape([]))

    def _inputs(self):
        return self._args

    def _generate(self, values):
        start, stop, step = (int(values[t]) for t in self._args)
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        for i in range(start, stop, step):
            yield [np.array(i, dtype=self._dtype.np_dtype)]


class TextLineDataset(Dataset):
    """The lines of one or more text files, without their line endings."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        if compression_type:
            raise errors.UnimplementedError(None, None, "minitf's TextLineDataset reads plain "
                                            "files only (compression_type=%r)"
                                            % compression_type)
        self._filenames = convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")
        self._structure = Spec(_dtypes.string, TensorShape([]))

    def _inputs(self):
        return [self._filenames]

    def _generate(self, values):
        for name in np.asarray(values[self._filenames]).reshape(-1):
            name = name.decode() if isinstance(name, bytes) else str(name)
            data = readers.read_whole_file(name)
            lines = data.split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            for line in lines:
                yield [np.array(line[:-1] if line.endswith(b"\r") else line, dtype=object)]


class TFRecordDataset(Dataset):
    """The records of one or more TFRecord files, one file after another (each
    element a scalar string: one record's bytes).

    ``compression_type`` is ``""``, ``"GZIP"`` or ``"ZLIB"``. ``buffer_size`` is
    TF's read-buffer size in bytes: it changes how a file is read, not what
    comes out, and minitf reads through tensorboard's record reader whatever it
    is. A damaged file fails ``get_next()`` with DataLossError where the damage
    starts."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        if not (compression_type is None or isinstance(compression_type, str)):
            raise TypeError("Expected string, but got %r of type '%s'."
                            % (compression_type, type(compression_type).__name__))
        self._compression = TFRecordOptions.get_compression_type_string(compression_type)
        if num_parallel_reads not in (None, 1):
            raise errors.UnimplementedError(
                None, None, "minitf's TFRecordDataset reads its files one after another; for "
                "num_parallel_reads=%r write Dataset.from_tensor_slices(files).interleave("
                "tf.data.TFRecordDataset, cycle_length=%r)" % (num_parallel_reads,
                                                               num_parallel_reads))
        self._filenames = convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")
        self._structure = Spec(_dtypes.string, TensorShape([]))

    def _inputs(self):
        return [self._filenames]

    def _generate(self, values):
        for name in np.asarray(values[self._filenames]).reshape(-1):
            name = name.decode() if isinstance(name, bytes) else str(name)
            records = RecordFile(name, self._compression)
            try:
                while True:
                    got = records.next()
                    if got is None:
                        break
                    yield [np.array(got[1], dtype=object)]
            finally:
                records.close()


# -- functions ----------------------------------------------------------------------------------
class _Function:
    """A Python function traced into a graph of its own: one placeholder per
    component of the input element, the function's results as fetches. It
    runs per element in a private session (one per iterator thread-safe via
    a lock)."""

    def __init__(self, fn, structure, what):
        self.graph = Graph()
        with self.graph.as_default():
            flat = flatten(structure)
            self.placeholders = [placeholder(d, s, name="arg%d" % i)
                                 for i, (d, s) in enumerate(flat)]
            args = pack(structure, self.placeholders)
            result = fn(*args) if isinstance(args, tuple) and not hasattr(args, "_fields") \
                else fn(args)
            if isinstance(result, Dataset):
                self.dataset = result
                self.outputs = result._all_inputs()
                self.structure = None
            else:
                self.dataset = None
                if isinstance(result, list):
                    result = tuple(result)
                result = _to_tensor_structure(result, name="result")
                self.outputs = flatten(result)
                self.structure = pack(result, [_leaf_spec(t) for t in self.outputs])
        if what == "interleave" and self.dataset is None:
            raise TypeError("`map_func` must return a `Dataset` object. Got %s"
                            % type(result))
        self._session = None
        self._lock = threading.Lock()

    def __call__(self, flat_values):
        with self._lock:
            if self._session is None:
                self._session = Session(graph=self.graph)
            feeds = {p: v for p, v in zip(self.placeholders, flat_values)}
            fed = set(self.placeholders)
            out = [o for o in self.outputs if o not in fed]
            got = dict(zip(out, self._session.run(out, feeds))) if out else {}
        return [np.asarray(feeds[o]) if o in fed else np.asarray(got[o])
                for o in self.outputs]


class _UnaryDataset(Dataset):
    def __init__(self, input_dataset):
        self._input = input_dataset
        self._structure = input_dataset._structure

    def _inputs(self):
        return self._input._inputs()


class MapDataset(_UnaryDataset):
    def __init__(self, input_dataset, map_func):
        super().__init__(input_dataset)
        self._fn = _Function(map_func, input_dataset._structure, "map")
        self._structure = self._fn.structure

    def _generate(self, values):
        for element in self._input._generate(values):
            yield self._fn(element)


class FilterDataset(_UnaryDataset):
    def __init__(self, input_dataset, predicate):
        super().__init__(input_dataset)
        self._fn = _Function(predicate, input_dataset._structure, "filter")
        spec = self._fn.structure
        if not isinstance(spec, Spec) or spec.dtype != _dtypes.bool or \
                spec.shape.ndims != 0:
            raise ValueError("Invalid `predicate`. `predicate` must return a `tf.bool` scalar "
                             "tensor, but its return type is %s." % (spec,))

    def _generate(self, values):
        for element in self._input._generate(values):
            if bool(self._fn(element)[0]):
                yield element


class InterleaveDataset(_UnaryDataset):
    """TF's interleave: ``cycle_length`` open inner datasets, visited in turn,
    ``block_length`` elements from each; an exhausted one frees its slot,
    which is refilled from the input when the cycle comes back to it."""

    def __init__(self, input_dataset, map_func, cycle_length, block_length):
        super().__init__(input_dataset)
        self._fn = _Function(map_func, input_dataset._structure, "interleave")
        if cycle_length is None or cycle_length == AUTOTUNE:
            cycle_length = os.cpu_count() or 1
        self._cycle_length = int(cycle_length)
        self._block_length = int(block_length or 1)
        if self._cycle_length <= 0:
            raise errors.InvalidArgumentError(None, None, "cycle_length must be > 0")
        self._structure = self._fn.dataset._structure

    def _generate(self, values):
        inputs = self._input._generate(values)
        inner = self._fn.dataset
        cycle = [None] * self._cycle_length
        index, block, num_open, end_of_input = 0, 0, 0, False

        def advance_cycle():
            nonlocal index, block
            block = 0
            index = (index + 1) % self._cycle_length

        while not end_of_input or num_open > 0:
            if cycle[index] is not None:
                try:
                    element = next(cycle[index])
                except StopIteration:
                    cycle[index] = None
                    num_open -= 1
                    advance_cycle()
                    continue
                block += 1
                if block == self._block_length:
                    advance_cycle()
                yield element
            elif not end_of_input:
                try:
                    args = next(inputs)
                except StopIteration:
                    end_of_input = True
                    continue
                captured = self._fn(args)
                cycle[index] = inner._generate(dict(zip(self._fn.outputs, captured)))
                num_open += 1
            else:
                advance_cycle()


class BatchDataset(_UnaryDataset):
    def __init__(self, input_dataset, batch_size, drop_remainder):
        super().__init__(input_dataset)
        self._batch_size = int(batch_size)
        if self._batch_size <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than "
                                              "zero.")
        self._drop = bool(drop_remainder)
        first = self._batch_size if self._drop else None
        self._structure = pack(input_dataset._structure, [
            Spec(d, TensorShape([first]).concatenate(s)) for d, s in
            flatten(input_dataset._structure)])

    def _stack(self, batch):
        out = []
        for c in range(len(batch[0])):
            column = [np.asarray(e[c]) for e in batch]
            for j, x in enumerate(column[1:], 1):
                if x.shape != column[0].shape:
                    raise errors.InvalidArgumentError(
                        None, None, "Cannot batch tensors with different shapes in component "
                        "%d. First element had shape [%s] and element %d had shape [%s]."
                        % (c, ",".join(map(str, column[0].shape)), j,
                           ",".join(map(str, x.shape))))
            out.append(np.stack(column))
        return out

    def _generate(self, values):
        batch = []
        for element in self._input._generate(values):
            batch.append(element)
            if len(batch) == self._batch_size:
                yield self._stack(batch)
                batch = []
        if batch and not self._drop:
            yield self._stack(batch)


class PaddedBatchDataset(BatchDataset):
    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values,
                 drop_remainder):
        super().__init__(input_dataset, batch_size, drop_remainder)
        flat = flatten(input_dataset._structure)
        if padded_shapes is None:
            shapes = [s for _, s in flat]
        else:
            shapes = [as_shape([None if d == -1 else d for d in s]
                               if isinstance(s, (list, tuple)) else s)
                      for s in flatten(padded_shapes)]
        if padding_values is None:
            pads = [b"" if d == _dtypes.string else 0 for d, _ in flat]
        else:
            pads = [np.asarray(v.op.get_attr("value") if isinstance(v, Tensor) else v)
                    for v in flatten(padding_values)]
        self._padded_shapes = shapes
        self._pads = pads
        first = self._batch_size if self._drop else None
        self._structure = pack(input_dataset._structure, [
            Spec(d, TensorShape([first]).concatenate(s)) for (d, _), s in zip(flat, shapes)])

    def _stack(self, batch):
        out = []
        for c, (shape, pad) in enumerate(zip(self._padded_shapes, self._pads)):
            column = [np.asarray(e[c]) for e in batch]
            dims = []
            for d in range(column[0].ndim):
                biggest = max(x.shape[d] for x in column)
                want = shape.as_list()[d] if shape.ndims is not None else None
                if want is not None and biggest > want:
                    raise errors.InvalidArgumentError(
                        None, None, "Attempted to pad to a smaller size than the input "
                        "element.")
                dims.append(biggest if want is None else want)
            arr = np.full([len(column)] + dims, pad, dtype=column[0].dtype)
            for j, x in enumerate(column):
                arr[(j,) + tuple(slice(0, s) for s in x.shape)] = x
            out.append(arr)
        return out


class _Count:
    """A count argument (``repeat(n)``, ``take(n)``...): a Python int, or a
    tensor whose value comes with the dataset's other inputs."""

    def __init__(self, count, name):
        if isinstance(count, Tensor) or hasattr(count, "_as_graph_element"):
            self.tensor = convert_to_tensor(count, dtype=_dtypes.int64, name=name)
            self.value = None
        else:
            self.tensor = None
            self.value = int(count)

    def inputs(self):
        return [self.tensor] if self.tensor is not None else []

    def __call__(self, values):
        return self.value if self.tensor is None else int(values[self.tensor])


class RepeatDataset(_UnaryDataset):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = _Count(-1 if count is None else count, "count")

    def _inputs(self):
        return self._input._inputs() + self._count.inputs()

    def _generate(self, values):
        count = self._count(values)
        epoch = 0
        while count < 0 or epoch < count:
            produced = False
            for element in self._input._generate(values):
                produced = True
                yield element
            epoch += 1
            if not produced:  # an empty input repeated forever is still empty
                return


class ShuffleDataset(_UnaryDataset):
    """TF's shuffle buffer, drawn with TF's random words, so a seeded pipeline
    gives TF's order.

    The buffer is a ring of ``buffer_size`` slots, filled from the input before
    every output. The output is the element at ``start + w % n`` (``n``
    elements buffered, ``w`` the next 32-bit word of the iterator's Philox
    stream); the element at ``start`` moves into its slot and ``start`` moves
    on (TF's ``ShuffleDatasetBase::Iterator``).

    Seeds, as TF's ``ShuffleDataset``: the op's ``(seed, seed2)`` come from
    ``get_seed`` (both 0: random ones, once per pipeline). Each *iterator*
    over this dataset - each epoch of a ``repeat`` - seeds its stream with
    two words of a seed generator started from those seeds
    (``reshuffle_each_iteration``, the default: every epoch another order), or
    with the op's seeds themselves (``reshuffle_each_iteration=False``: every
    epoch the same order). Re-initializing an iterator remakes the dataset,
    so it starts the seed generator over: the same orders again, as in TF.
    """

    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        super().__init__(input_dataset)
        self._buffer_size = int(buffer_size)
        if self._buffer_size <= 0:
            raise ValueError("buffer_size must be greater than zero.")
        if isinstance(seed, Tensor):
            raise TypeError("minitf's Dataset.shuffle takes a Python int seed, not the "
                            "tensor %s" % seed.name)
        seed, seed2 = get_seed(seed)
        self._seeds = (0 if seed is None else int(seed), 0 if seed2 is None else int(seed2))
        self._reshuffle = reshuffle_each_iteration is None or bool(reshuffle_each_iteration)

    def _iterator_seeds(self, values):
        """The seeds of the next iterator over this dataset. The seed generator
        belongs to this pipeline instance, so it is kept in its ``values``."""
        key = ("shuffle seed generator", self)
        generator = values.get(key)
        if generator is None:
            seed, seed2 = self._seeds
            if seed == 0 and seed2 == 0:    # TF's RandomSeeds: fresh random seeds
                seed, seed2 = nondeterministic_seeds()
            generator = PhiloxWords(seed, seed2) if self._reshuffle else (seed, seed2)
            values[key] = generator
        if self._reshuffle:
            return generator(), generator()
        return generator

    def _generate(self, values):
        words = PhiloxWords(*self._iterator_seeds(values))
        size = self._buffer_size
        ring = [None] * size
        start = end = 0                   # buffered elements: ring[start % size .. end % size)
        source = self._input._generate(values)
        exhausted = False
        while True:
            while not exhausted and end - start < size:
                try:
                    ring[end % size] = next(source)
                    end += 1
                except StopIteration:
                    exhausted = True
            if end == start:
                return
            index = (start + words() % (end - start)) % size
            element = ring[index]
            ring[index] = ring[start % size]
            ring[start % size] = None
            start += 1
            yield element


class SkipDataset(_UnaryDataset):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = _Count(count, "count")

    def _inputs(self):
        return self._input._inputs() + self._count.inputs()

    def _generate(self, values):
        count = self._count(values)
        for i, element in enumerate(self._input._generate(values)):
            if count < 0:
                return
            if i >= count:
                yield element


class TakeDataset(_UnaryDataset):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = _Count(count, "count")

    def _inputs(self):
        return self._input._inputs() + self._count.inputs()

    def _generate(self, values):
        count = self._count(values)
        if count == 0:
            return
        for i, element in enumerate(self._input._generate(values)):
            yield element
            if 0 <= count <= i + 1:
                return


class PrefetchDataset(_UnaryDataset):
    """Order-preserving: in TF a background thread fills a buffer so the
    consumer does not wait; here elements are produced on demand."""

    def __init__(self, input_dataset, buffer_size):
        super().__init__(input_dataset)
        self._buffer_size = buffer_size

    def _generate(self, values):
        return self._input._generate(values)


class ConcatenateDataset(Dataset):
    def __init__(self, first, second):
        self._first, self._second = first, second
        if first._flat_types() != second._flat_types():
            raise TypeError("Incompatible dataset elements: %s vs. %s"
                            % (first.output_types, second.output_types))
        self._structure = pack(first._structure, [
            Spec(d, a.most_specific_compatible_shape(b) if hasattr(
                a, "most_specific_compatible_shape") else a)
            for (d, a), (_, b) in zip(flatten(first._structure), flatten(second._structure))])

    def _inputs(self):
        return self._first._inputs() + self._second._inputs()

    def _generate(self, values):
        yield from self._first._generate(values)
        yield from self._second._generate(values)


class ZipDataset(Dataset):
    def __init__(self, datasets):
        self._datasets = datasets
        self._structure = pack(datasets, [d._structure for d in flatten(datasets)])

    def _inputs(self):
        return [t for d in flatten(self._datasets) for t in d._inputs()]

    def _generate(self, values):
        gens = [d._generate(values) for d in flatten(self._datasets)]
        while True:
            element = []
            for g in gens:
                try:
                    element.extend(next(g))
                except StopIteration:
                    return
            yield element


# At the end, not the top: ``remote`` reads this module's classes (a pipeline's
# wire description, for iterators in remote sessions).
from minitf.data import remote  # noqa: E402
