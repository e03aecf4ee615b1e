"""``tf.nn.embedding_lookup`` and the two ops it is built from when the table
is sharded: ``DynamicPartition`` and ``ParallelDynamicStitch``.

An embedding table too big for one task is split into shards, one variable
per parameter server (``replica_device_setter`` puts each on its own ps).
``embedding_lookup(shards, ids)`` then does what TF does:

1. decide which shard holds each id: ``"mod"`` deals ids round-robin (id
   ``i`` is row ``i // n`` of shard ``i % n``), ``"div"`` gives each shard a
   contiguous block of ids;
2. ``DynamicPartition`` splits the ids (and their positions) by shard;
3. one ``gather`` per shard, *colocated with the shard*: it runs on that
   ps task, so only the looked-up rows cross the network, never the table;
4. ``ParallelDynamicStitch`` puts the rows back in the order of ``ids``.

With a single table it is one ``gather``. The gradient of a lookup flows back
through the stitch and the gathers to the rows that were read (minitf's gather
gradient is dense: see ``array_ops._gather_grad``).
"""

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.graph import get_default_graph
from minitf.framework.op_def import ANY_DTYPE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, math_ops
from minitf.ops.core import convert_to_tensor, make_op, name_scope
from minitf.ops.elementwise import FLOAT_NAMES

_MOVE_DEVICES = {"CPU": ANY_DTYPE, "GPU": FLOAT_NAMES + ("int32", "int64")}


# ================================================================ DynamicPartition ===
def _partition_kernel(op, backend):
    n = op.get_attr("num_partitions")

    def compute(ctx, inputs):
        data, partitions = inputs
        if data.shape[:partitions.ndim] != partitions.shape:
            raise errors.InvalidArgumentError(
                None, None, "data.shape must start with partitions.shape, got data.shape = "
                "%s, partitions.shape = %s" % (list(data.shape), list(partitions.shape)))
        bad = (partitions < 0) | (partitions >= n)
        if bad.any():
            i = int(np.argmax(bad.reshape(-1)))
            raise errors.InvalidArgumentError(
                None, None, "partitions[%d] = %d is not in [0, %d)"
                % (i, int(partitions.reshape(-1)[i]), n))
        flat = data.reshape((-1,) + data.shape[partitions.ndim:])
        which = partitions.reshape(-1)
        return [np.ascontiguousarray(flat[which == p]) for p in range(n)]
    return compute


def _partition_grad(op, *grads):
    """Stitch the parts' gradients back into data's order (TF's own trick: the
    same partition of the positions 0..size-1 says where each part came from)."""
    data, partitions = op.inputs
    n = op.get_attr("num_partitions")
    positions = array_ops.reshape(math_ops.cast(array_ops.range_(array_ops.size(partitions)),
                                                dtypes.int32), array_ops.shape(partitions))
    parts = dynamic_partition(positions, partitions, n)
    grads = [g if g is not None else array_ops.zeros_like(t)
             for g, t in zip(grads, op.outputs)]
    stitched = dynamic_stitch(parts, grads)
    return array_ops.reshape(stitched, array_ops.shape(data)), None


DYNAMIC_PARTITION = declare(OpDef(
    "DynamicPartition", inputs=("data", "partitions"), attrs=("T", "num_partitions"),
    gradient=_partition_grad, devices=_MOVE_DEVICES, kernel=_partition_kernel))


# ============================================================ ParallelDynamicStitch ===
def _stitch_kernel(op, backend):
    n = op.get_attr("N")

    def compute(ctx, inputs):
        indices, data = inputs[:n], inputs[n:]
        rows = [d.reshape((-1,) + d.shape[i.ndim:]) for i, d in zip(indices, data)]
        flat = [i.reshape(-1) for i in indices]
        size = max([int(f.max()) + 1 for f in flat if f.size] + [0])
        element = rows[0].shape[1:] if rows else ()
        out = np.zeros((size,) + element, dtype=data[0].dtype)
        for i, (f, r) in enumerate(zip(flat, rows)):
            if r.shape[0] != f.size:
                raise errors.InvalidArgumentError(
                    None, None, "data[%d].shape = %s does not start with indices[%d].shape = "
                    "%s" % (i, list(data[i].shape), i, list(indices[i].shape)))
            if (f < 0).any():
                raise errors.InvalidArgumentError(None, None, "indices[%d] has a negative "
                                                  "index" % i)
            out[f] = r                     # later inputs win on repeated indices, as in TF
        return [out]
    return compute


def _stitch_grad(op, grad):
    n = op.get_attr("N")
    indices = op.inputs[:n]
    return [None] * n + [array_ops.gather(grad, i) for i in indices]


PARALLEL_DYNAMIC_STITCH = declare(OpDef(
    "ParallelDynamicStitch", inputs=("*indices", "*data"), attrs=("N", "T"),
    gradient=_stitch_grad, devices=_MOVE_DEVICES, kernel=_stitch_kernel))


# ============================================================ the tf.* functions ===
def dynamic_partition(data, partitions, num_partitions, name=None):
    """Split ``data`` into ``num_partitions`` tensors: element ``i`` goes to part
    ``partitions[i]`` (order kept within each part)."""
    with name_scope(name, "DynamicPartition", [data, partitions]) as scope:
        data = convert_to_tensor(data, name="data")
        partitions = convert_to_tensor(partitions, dtype=dtypes.int32, name="partitions")
        n = int(num_partitions)
        if n < 1:
            raise ValueError("num_partitions must be at least 1, got %d" % n)
        if data.shape.ndims is not None and partitions.shape.ndims is not None:
            shape = TensorShape([None] + data.shape.as_list()[partitions.shape.ndims:])
        else:
            shape = TensorShape(None)
        op = make_op(DYNAMIC_PARTITION, [data, partitions], [data.dtype.base_dtype] * n,
                     [shape] * n, name=scope, attrs={"T": data.dtype.base_dtype,
                                                     "num_partitions": n})
    return list(op.outputs)


def dynamic_stitch(indices, data, name=None):
    """Interleave ``data`` back into one tensor: ``out[indices[m][i]] = data[m][i]``."""
    with name_scope(name, "DynamicStitch", list(indices) + list(data)) as scope:
        indices = [convert_to_tensor(i, dtype=dtypes.int32, name="indices") for i in indices]
        data = [convert_to_tensor(d, name="data") for d in data]
        if len(indices) != len(data) or not data:
            raise ValueError("dynamic_stitch needs as many data tensors as index tensors, "
                             "got %d and %d" % (len(indices), len(data)))
        dt = data[0].dtype.base_dtype
        shape = TensorShape(None)
        first, idx = data[0].shape, indices[0].shape
        if first.ndims is not None and idx.ndims is not None:
            shape = TensorShape([None] + first.as_list()[idx.ndims:])
        op = make_op(PARALLEL_DYNAMIC_STITCH, indices + data, [dt], [shape], name=scope,
                     attrs={"N": len(indices), "T": dt})
    return op.outputs[0]


parallel_dynamic_stitch = dynamic_stitch


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """The rows of ``params`` named by ``ids`` (``params`` one table, or a list of
    shards; see the module docstring for how shards are looked up)."""
    if max_norm is not None:
        raise errors.UnimplementedError(None, None, "minitf's embedding_lookup does not clip "
                                        "rows (max_norm=%r); clip them with tf.clip_by_norm"
                                        % (max_norm,))
    if params is None:
        raise ValueError("params must be specified")
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    if not shards:
        raise ValueError("Length of params is currently 0. Need at least one param.")
    with name_scope(name, "embedding_lookup", []) as scope:
        graph = get_default_graph()
        ids = convert_to_tensor(ids, name="ids")
        n = len(shards)
        if n == 1:
            with graph.colocate_with(_tensor_op(shards[0])):
                result = array_ops.gather(shards[0], ids, name=scope)
            return array_ops.identity(result)
        flat_ids = array_ops.reshape(ids, [-1])
        positions = math_ops.cast(array_ops.range_(array_ops.size(flat_ids)), dtypes.int32)
        if partition_strategy == "mod":
            assignment = flat_ids % n
            new_ids = flat_ids // n
        elif partition_strategy == "div":
            sizes = [s.shape[0].value if s.shape.ndims else None for s in
                     (convert_to_tensor(p) for p in shards)]
            if None in sizes:
                raise ValueError("minitf's embedding_lookup with partition_strategy='div' "
                                 "needs the static first dimension of every shard")
            total = sum(sizes)
            per, extras = total // n, total % n
            ids_dtype = flat_ids.dtype.base_dtype
            per_t = convert_to_tensor(per, dtype=ids_dtype)
            extras_t = convert_to_tensor(extras, dtype=ids_dtype)
            assignment = math_ops.maximum(flat_ids // (per_t + 1),
                                          (flat_ids - extras_t) // per_t)
            new_ids = array_ops.where(assignment < extras_t, flat_ids % (per_t + 1),
                                      (flat_ids - extras_t) % per_t)
        else:
            raise ValueError("Unrecognized partition strategy: %s. Must be one of either `mod` "
                             "or `div`." % partition_strategy)
        assignment = math_ops.cast(assignment, dtypes.int32)
        gather_ids = dynamic_partition(new_ids, assignment, n)
        part_positions = dynamic_partition(positions, assignment, n)
        rows = []
        for shard, shard_ids in zip(shards, gather_ids):
            with graph.device(None), graph.colocate_with(_tensor_op(shard)):
                rows.append(array_ops.gather(shard, shard_ids))
        stitched = dynamic_stitch(part_positions, rows, name=scope)
        element = convert_to_tensor(shards[0]).shape[1:]
        if element.is_fully_defined() and ids.shape.is_fully_defined():
            return array_ops.reshape(stitched, ids.shape.as_list() + element.as_list())
        return array_ops.reshape(stitched, array_ops.concat(
            [array_ops.shape(ids), array_ops.shape(convert_to_tensor(shards[0]))[1:]], 0))


def _tensor_op(value):
    """The op a variable or tensor lives with (its ``VariableV2``, for a variable)."""
    ref = value._ref() if hasattr(value, "_ref") else convert_to_tensor(value)
    return ref.op
