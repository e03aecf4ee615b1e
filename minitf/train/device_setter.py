"""``tf.train.replica_device_setter``: put variables on parameter servers.

Used as ``with tf.device(tf.train.replica_device_setter(ps_tasks=2)):``. It
returns a *device function* that the graph calls for every new op:

* ops of the types in ``ps_ops`` (variables, by default) go to
  ``ps_device``; the task is chosen by ``ps_strategy`` - round robin over the
  ps tasks unless you pass another strategy, e.g.
  :class:`GreedyLoadBalancingStrategy`, which puts each variable on the
  least-loaded ps task so far (by bytes, with :func:`byte_size_load_fn`);
* every other op goes to ``worker_device``.

A device the op already asked for (an inner ``tf.device``) is merged on top,
so explicit requests win. This is TF's code path, kept line for line where
the behaviour is subtle.
"""

import hashlib

from minitf.framework import tf_logging as logging
from minitf.framework.device_spec import DeviceSpec
from minitf.distributed.cluster_spec import ClusterSpec

STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
                   "MutableHashTableV2", "MutableHashTableOfTensors",
                   "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp",
                   "BoostedTreesEnsembleResourceHandleOp",
                   "BoostedTreesQuantileStreamResourceHandleOp",
                   "ResourceConditionalAccumulator", "DecisionTreeResource")


class _RoundRobinStrategy:
    """Task 0, 1, ..., n-1, 0, 1, ... for successive ps ops."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self.reset()

    def reset(self):
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                 ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = ps_ops
        self._ps_strategy = ps_strategy

    def device_function(self, op):
        """The device for ``op`` (see the module docstring)."""
        if not self._merge_devices and op.device:
            return op.device
        current_device = DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps_device = DeviceSpec.from_string(self._ps_device)
            current_job, ps_job = current_device.job, ps_device.job
            if ps_job and (not current_job or current_job == ps_job):
                ps_device = ps_device.replace(task=self._ps_strategy(op))
            ps_device = ps_device.make_merged_spec(current_device)
            return ps_device.to_string()
        worker_device = DeviceSpec.from_string(self._worker_device or "")
        worker_device = worker_device.make_merged_spec(current_device)
        return worker_device.to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for ``tf.device`` (None when there are no ps tasks)."""
    if cluster is not None:
        if isinstance(cluster, ClusterSpec):
            cluster_spec = cluster.as_dict()
        else:
            cluster_spec = ClusterSpec(cluster).as_dict()
        ps_job_name = DeviceSpec.from_string(ps_device).job
        if ps_job_name not in cluster_spec or cluster_spec[ps_job_name] is None:
            return None
        ps_tasks = len(cluster_spec[ps_job_name])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        logging.warning("DEPRECATION: It is recommended to set merge_devices=true in "
                        "replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices,
                                    ps_ops, ps_strategy)
    return chooser.device_function


def byte_size_load_fn(op):
    """The load of a variable op: its size in bytes (0 if not fully defined)."""
    shape = op.outputs[0].shape if op.outputs else None
    if shape is None or not shape.is_fully_defined():
        attr_shape = op._attrs.get("shape")
        shape = attr_shape if attr_shape is not None else shape
    if shape is None or not shape.is_fully_defined():
        logging.warning("The shape of %s is not fully defined: its load is 0", op.name)
        return 0
    dtype = op.outputs[0].dtype.base_dtype
    return shape.num_elements() * dtype.size


class GreedyLoadBalancingStrategy:
    """Put each ps op on the ps task with the smallest load so far."""

    def __init__(self, num_tasks, load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = [0] * num_tasks

    def __call__(self, op):
        task = min(range(self._num_tasks), key=lambda t: (self._ps_loads[t], t))
        self._ps_loads[task] += self._load_fn(op)
        return task


class RandomStrategy:
    """Place each ps op on a task chosen by hashing its name (deterministic)."""

    def __init__(self, num_ps_replicas, seed=0):
        self._num = num_ps_replicas
        self._seed = seed

    def __call__(self, op):
        key = ("%s" % self._seed + op.name).encode()
        return int(hashlib.sha1(key).hexdigest(), 16) % self._num
