"""The placer: choose a device for every op a step needs.

It works on *colocation groups*: sets of ops that must share a device. An op
joins the group of

* every op named in its ``loc:@name`` colocation list (``colocate_with``), and
* the producer of every *ref* input it takes (``v/Assign`` writes into ``v``,
  so it must run where ``v``'s buffer is).

For each group the placer merges the members' requested devices, keeps the
devices that match and have a kernel for *every* member, and takes the best
one (GPU before CPU, lowest index). Parts of the name a request leaves out are
filled from the session's default task, which is how unpinned ops end up on
the master's task.

When no device fits, ``allow_soft_placement`` relaxes the request's device
type and index (another device of the same task) before giving up with TF's
"Cannot assign a device for operation ..." error; it never moves an op to
another task, so a job or task that does not exist is always that error.

Placement is sticky: once an op is placed in a session it stays on that
device for every later step, so a variable never moves.
"""

import sys

from minitf.framework import errors
from minitf.framework.device_spec import DeviceSpec
from minitf.kernels import registry
from minitf.runtime.devices import describe, priority


class _UnionFind:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        parent = self.parent
        root = x
        while parent.get(root, root) is not root:
            root = parent[root]
        while x is not root:
            nxt = parent.get(x, x)
            parent[x] = root
            x = nxt
        return root

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            # Keep the op created first as the root, so the group's name is stable.
            if ra._id < rb._id:
                self.parent[rb] = ra
            else:
                self.parent[ra] = rb


class Placer:
    """Places ops on ``devices`` (a list of :class:`Device`), remembering its
    choices across steps."""

    def __init__(self, devices, default_task, allow_soft_placement=False,
                 log_device_placement=False, log=None):
        self.devices = list(devices)
        self.default_task = default_task  # DeviceSpec with job/replica/task
        self.allow_soft = allow_soft_placement
        self.log_placement = log_device_placement
        # TF prints these lines to the process's stdout; so does minitf, which
        # also makes them appear in a notebook cell's output.
        self.log = log or (lambda line: print(line, file=sys.stdout, flush=True))
        self.assigned = {}  # Operation -> Device
        self.soft_moved = set()  # ops that soft placement moved off their request

    def place(self, ops):
        """Assign a device to each op in ``ops`` (an iterable of Operations)."""
        todo = [op for op in ops if op not in self.assigned]
        if not todo:
            return
        groups = self._groups(todo)
        new = []
        for members in groups:
            device = self._place_group(members)
            for op in members:
                if op not in self.assigned:
                    self.assigned[op] = device
                    new.append(op)
        if self.log_placement:
            for op in sorted(new, key=lambda o: o._id):
                self.log("%s: (%s): %s" % (op.name, op.type, describe(self.assigned[op])))

    # -- colocation groups -------------------------------------------------------------
    def _groups(self, ops):
        uf = _UnionFind()
        graph = ops[0].graph
        members = set(ops)
        for op in ops:
            for loc in op._colocation:
                other = graph._nodes_by_name.get(loc[len("loc:@"):])
                if other is not None:
                    uf.union(op, other)
                    members.add(other)
            for slot in op.op_def.ref_inputs:
                if slot < len(op._inputs):
                    producer = op._inputs[slot].op
                    uf.union(op, producer)
                    members.add(producer)
            for t in op._inputs:
                if t.dtype.is_ref_dtype:
                    uf.union(op, t.op)
                    members.add(t.op)
        by_root = {}
        for op in sorted(members, key=lambda o: o._id):
            by_root.setdefault(uf.find(op), []).append(op)
        return list(by_root.values())

    # -- one group ---------------------------------------------------------------------
    def _place_group(self, members):
        for op in members:
            if op in self.assigned:
                return self.assigned[op]
        requested, requester = self._merged_request(members)
        spec = self._with_default_task(requested)
        device = self._best(spec, members)
        if device is not None:
            return device
        if self.allow_soft:
            # Soft placement changes the device type and index only: a job,
            # replica or task that does not exist is an error, as in TF.
            relaxed = spec.replace(device_type=None, device_index=None)
            device = self._best(relaxed, members)
            if device is not None:
                self.soft_moved.update(op for op in members if op.device)
                return device
        raise self._error(requester or members[0], requested, spec, members)

    def _merged_request(self, members):
        merged, requester = DeviceSpec(), None
        for op in members:
            if not op.device:
                continue
            spec = DeviceSpec.from_string(op.device)
            if not merged.is_compatible_with(spec) and not self.allow_soft:
                raise errors.InvalidArgumentError(
                    op.node_def, op,
                    "Cannot colocate nodes {{colocation_node %s}} and {{colocation_node %s}}: "
                    "Cannot merge devices with incompatible %s: '%s' and '%s'"
                    % (requester.name, op.name, _first_conflict(merged, spec),
                       merged.to_string(), spec.to_string()))
            if merged.is_compatible_with(spec):
                merged = merged.make_merged_spec(spec)
            requester = requester or op
        return merged, requester

    def _with_default_task(self, spec):
        d = self.default_task
        if spec.job is None:
            spec = spec.replace(job=d.job,
                                replica=d.replica if spec.replica is None else spec.replica,
                                task=d.task if spec.task is None else spec.task)
        else:
            if spec.replica is None:
                spec = spec.replace(replica=0)
            if spec.task is None:
                spec = spec.replace(task=0)
        return spec

    def _best(self, spec, members):
        candidates = [d for d in self.devices if spec.is_compatible_with(d.spec)
                      and all(registry.supports(op, d.device_type) for op in members)]
        return min(candidates, key=priority) if candidates else None

    def _error(self, op, requested, spec, members):
        matching = [d for d in self.devices if spec.is_compatible_with(d.spec)]
        available = " ".join(d.name for d in self.devices)
        if matching:
            types = sorted({d.device_type for d in matching})
            unsupported = [m for m in members
                           if not any(registry.supports(m, t) for t in types)]
            bad = unsupported[0] if unsupported else op
            # Name the dtypes each device type's kernel takes: "GPU" alone would
            # read as if the GPU could run this op's dtype too.
            kernels = []
            for t, dtypes in registry.registered_dtypes(bad.type).items():
                kernels.append("device='%s' (%s)" % (
                    t, "dtype in [%s]" % ", ".join(dtypes) if dtypes else "any dtype"))
            message = ("Cannot assign a device for operation %s: Could not satisfy explicit "
                       "device specification '%s' because no supported kernel for %s devices "
                       "is available.\nRegistered kernels for %s: %s; this op needs "
                       "dtype %s.\nOp %s (%s) was colocated with: %s. Run with "
                       "allow_soft_placement=True to let minitf fall back to a device that "
                       "has a kernel."
                       % (op.name, requested.to_string(), "/".join(types), bad.type,
                          "; ".join(kernels) or "none", registry.kernel_dtype(bad),
                          bad.name, bad.type, ", ".join(m.name for m in members)))
        else:
            message = ("Cannot assign a device for operation %s: {{node %s}} was explicitly "
                       "assigned to %s but available devices are [ %s ]. Make sure the "
                       "device specification refers to a valid device."
                       % (op.name, op.name, requested.to_string(), available))
            if requested.device_type == "GPU" and not any(
                    d.device_type == "GPU" for d in self.devices):
                message += (" The requested device appears to be a GPU, but this session "
                            "has none (ask for virtual ones with "
                            "ConfigProto(device_count={'GPU': 1})).")
        return errors.InvalidArgumentError(op.node_def, op, message)


def _first_conflict(a, b):
    for part in ("job", "replica", "task", "device_type", "device_index"):
        x, y = getattr(a, part), getattr(b, part)
        if x is not None and y is not None and x != y:
            return {"device_type": "device types", "device_index": "ids"}.get(part,
                                                                              part + "s")
    return "parts"
