"""``tf.train.ClusterSpec``: which processes ("tasks") form a cluster.

A cluster is a set of *jobs* (``"ps"``, ``"worker"``...); each job is a set of
*tasks* numbered 0, 1, ...; each task is one server process listening on a
``"host:port"`` address::

    cluster = ClusterSpec({"worker": ["localhost:2222", "localhost:2223"],
                           "ps": ["localhost:2224"]})
    cluster.task_address("worker", 1)   # 'localhost:2223'
    cluster.task_names()                # minitf extra, see below
    # ['/job:ps/replica:0/task:0', '/job:worker/replica:0/task:0',
    #  '/job:worker/replica:0/task:1']

A job may also be *sparse*: ``{"worker": {1: "host:2222"}}`` names only task 1
(a server only needs to know the tasks it talks to).

This class mirrors TensorFlow 2.x's ``tensorflow/python/training/server_lib.py``
behaviour by behaviour, quirks included, because programs written for TF are
the tests of minitf. The quirks worth knowing:

* ``jobs`` lists jobs in the order of the dict you passed (insertion order);
  it is sorted only for a ClusterSpec copied from another one. ``repr`` and
  ``as_cluster_def()`` are always sorted by job name.
* ``as_dict()`` gives a *list* for a dense job (indices ``0..n-1``), a *dict*
  for a sparse one, and ``{}`` for a job with no tasks.
* ``==`` compares the internal ``{job: {index: address}}`` mapping, so a
  ClusterSpec also equals that plain dict; ClusterSpec is unhashable.
* ``job_tasks()`` of a job with no tasks raises ``ValueError`` (``max()`` of an
  empty sequence), as in TF.

:meth:`ClusterSpec.as_cluster_def` returns TF's ``ClusterDef`` protocol
buffer (from the tensorboard package, ``minitf/framework/protos.py``), jobs
sorted by name; ``ClusterSpec(cluster_def)`` accepts one (TF's or that).
Inside, minitf keeps the same data as a plain dict (msgpack-able, so it can
travel on the wire): ``{"job": [{"name": "ps", "tasks": {0: "host:port"}}]}``;
:meth:`ClusterSpec.from_cluster_def` reads such a dict back.

minitf extras (not in TF): :meth:`ClusterSpec.task_names`,
:meth:`ClusterSpec.device_prefix`, :meth:`ClusterSpec.from_cluster_def`.
"""

from minitf.framework.protos import proto

__all__ = ["ClusterSpec"]


def _is_cluster_def_proto(value):
    """TF's ClusterDef message (tensorboard's copy or TensorFlow's own)."""
    descriptor = getattr(value, "DESCRIPTOR", None)
    return descriptor is not None and descriptor.full_name.endswith(".ClusterDef")

_INT32_MIN = -(2 ** 31)
_INT32_MAX = 2 ** 31 - 1


def _as_bytes(value):
    """``tf.compat.as_bytes``: str -> UTF-8 bytes; bytes-like pass through."""
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError("Expected binary or unicode string, got %r" % (value,))


def _check_int32(index):
    # ClusterDef.tasks is a map<int32, string>; protobuf rejects the rest
    # with exactly this message.
    if not _INT32_MIN <= index <= _INT32_MAX:
        raise ValueError("Value out of range: %d" % index)


class ClusterSpec:
    """Represents a cluster as a set of "tasks", organized into "jobs".

    Args:
      cluster: a dict mapping job names to either a list/tuple of network
        addresses (task ``i`` is element ``i``) or a dict mapping integer task
        indices to addresses (a *sparse* job); or another ``ClusterSpec``.

    Raises:
      TypeError: if ``cluster`` is none of those, if a job's tasks are not a
        list, tuple or dict, or if a job name or address is not str/bytes.
      ValueError: if a task index is not an int32 (or not convertible by
        ``int()``).
    """

    def __init__(self, cluster):
        if isinstance(cluster, dict):
            self._cluster_spec = {}
            for job_name, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    job_tasks = {i: task for i, task in enumerate(tasks)}
                elif isinstance(tasks, dict):
                    job_tasks = {int(i): task for i, task in tasks.items()}
                else:
                    raise TypeError(
                        "The tasks for job %r must be a list or a dictionary "
                        "from integers to strings." % (job_name,))
                self._cluster_spec[job_name] = job_tasks
            self._make_cluster_def()
        elif isinstance(cluster, ClusterSpec):
            # TF copies through the ClusterDef proto: names/addresses become
            # str and jobs come out sorted.
            self._cluster_spec = {}
            self._cluster_def = cluster._plain_cluster_def()
            for job_def in self._cluster_def["job"]:
                self._cluster_spec[job_def["name"]] = dict(job_def["tasks"])
        elif _is_cluster_def_proto(cluster):
            # TF's ClusterDef message (jobs in the message's order).
            self._cluster_spec = {}
            for job_def in cluster.job:
                self._cluster_spec[job_def.name] = {int(i): t for i, t in
                                                    sorted(job_def.tasks.items())}
            self._make_cluster_def()
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more "
                            "job names to lists of network addresses, or a "
                            "`ClusterDef` protocol buffer")

    # -- construction helpers ------------------------------------------------

    def _make_cluster_def(self):
        """Validate names/addresses and build the sorted ClusterDef mirror."""
        jobs = []
        # Sorting the items (not just the keys) is what TF does; with mixed
        # key types it raises TF's TypeError ("'<' not supported ...").
        for job_name, tasks in sorted(self._cluster_spec.items()):
            try:
                name = _as_bytes(job_name)
            except TypeError:
                raise TypeError("Job name %r must be bytes or unicode" % (job_name,))
            job_def = {"name": name.decode("utf-8"), "tasks": {}}
            jobs.append(job_def)
            for i, task_address in sorted(tasks.items()):
                try:
                    address = _as_bytes(task_address)
                except TypeError:
                    raise TypeError("Task address %r must be bytes or unicode"
                                    % (task_address,))
                _check_int32(i)
                job_def["tasks"][i] = address.decode("utf-8")
        self._cluster_def = {"job": jobs}

    @classmethod
    def from_cluster_def(cls, cluster_def):
        """minitf extra: rebuild a ClusterSpec from :meth:`as_cluster_def`'s dict
        (e.g. after it crossed the wire). Task keys may be ints or decimal
        strings."""
        if not isinstance(cluster_def, dict) or not isinstance(cluster_def.get("job"), list):
            raise TypeError("cluster_def must be a dict {'job': [{'name': ..., "
                            "'tasks': {index: address}}, ...]}, got %r" % (cluster_def,))
        spec = {}
        for job_def in cluster_def["job"]:
            if not isinstance(job_def, dict) or "name" not in job_def:
                raise TypeError("Bad job entry in cluster_def: %r" % (job_def,))
            tasks = job_def.get("tasks", {})
            if not isinstance(tasks, dict):
                raise TypeError("The tasks of job %r in cluster_def must be a dict"
                                % (job_def["name"],))
            spec[job_def["name"]] = tasks
        return cls(cls(spec))  # second pass: sorted jobs, like a TF proto copy

    # -- TF's API --------------------------------------------------------------

    def __bool__(self):
        return bool(self._cluster_spec)

    def __eq__(self, other):
        return self._cluster_spec == other

    def __ne__(self, other):
        return self._cluster_spec != other

    __hash__ = None  # TF's ClusterSpec is unhashable (it defines __eq__ only)

    def __repr__(self):
        key_values = self.as_dict()
        string_items = [repr(k) + ": " + repr(key_values[k]) for k in sorted(key_values)]
        return "ClusterSpec({" + ", ".join(string_items) + "})"

    def as_dict(self):
        """Job name -> list of addresses (dense job), or dict index -> address
        (sparse job), or ``{}`` (job without tasks). A fresh copy each call."""
        ret = {}
        for job in self.jobs:
            task_indices = self.task_indices(job)
            if len(task_indices) == 0:
                ret[job] = {}
                continue
            if max(task_indices) + 1 == len(task_indices):
                ret[job] = self.job_tasks(job)
            else:
                ret[job] = {i: self.task_address(job, i) for i in task_indices}
        return ret

    def as_cluster_def(self):
        """TF's ``ClusterDef`` protocol buffer of this cluster (a fresh one each
        call): one ``job`` per job name, sorted, each with its ``tasks`` map."""
        cluster_def = proto("cluster_pb2").ClusterDef()
        for j in self._cluster_def["job"]:
            job = cluster_def.job.add(name=j["name"])
            for i, address in sorted(j["tasks"].items()):
                job.tasks[i] = address
        return cluster_def

    def _plain_cluster_def(self):
        """The same as a plain dict (fresh copy):
        ``{"job": [{"name": str, "tasks": {int: str}}, ...]}``, sorted."""
        return {"job": [{"name": j["name"], "tasks": dict(sorted(j["tasks"].items()))}
                        for j in self._cluster_def["job"]]}

    @property
    def jobs(self):
        """The job names, in the order given (sorted for a copied spec)."""
        return list(self._cluster_spec.keys())

    def _job(self, job_name):
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError("No such job in cluster: %r" % (job_name,))

    def num_tasks(self, job_name):
        """Number of tasks defined in ``job_name`` (ValueError if no such job)."""
        return len(self._job(job_name))

    def task_indices(self, job_name):
        """Sorted list of the task indices defined in ``job_name``."""
        return list(sorted(self._job(job_name).keys()))

    def task_address(self, job_name, task_index):
        """The address of task ``task_index`` of ``job_name``."""
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError("No task with index %r in job %r" % (task_index, job_name))

    def job_tasks(self, job_name):
        """List of addresses indexed by task index, ``None`` in the holes of a
        sparse job (so its length may exceed :meth:`num_tasks`)."""
        job = self._job(job_name)
        ret = [None for _ in range(max(job.keys()) + 1)]
        for i, task in job.items():
            ret[i] = task
        return ret

    # -- minitf extras -----------------------------------------------------------

    def task_names(self):
        """minitf extra: the full device-name prefix of every task, sorted by
        job name then task index: ``["/job:ps/replica:0/task:0", ...]``."""
        names = []
        for job_def in self._cluster_def["job"]:
            for i in sorted(job_def["tasks"]):
                names.append("/job:%s/replica:0/task:%d" % (job_def["name"], i))
        return names

    def device_prefix(self, job_name, task_index):
        """minitf extra: ``"/job:<job>/replica:0/task:<i>"`` for a task of this
        cluster (ValueError, with TF's messages, if there is no such task)."""
        self.task_address(job_name, task_index)
        if isinstance(job_name, (bytes, bytearray)):
            job_name = bytes(job_name).decode("utf-8")
        return "/job:%s/replica:0/task:%d" % (job_name, task_index)
