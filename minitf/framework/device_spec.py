"""Device names: ``/job:worker/replica:0/task:1/device:GPU:0``.

A device name has five optional parts. A :class:`DeviceSpec` holds them;
``None`` means "not specified", and the placer fills the gaps. Parsing accepts
the long form above, the legacy short forms ``/cpu:0`` and ``/gpu:1``, and a
bare ``GPU:0``; printing always uses the long ``/device:TYPE:N`` form, which is
what ``op.device`` shows in TensorFlow too.

Merging is how nested ``tf.device`` scopes combine: the inner spec wins for
every part it sets, the outer one fills the rest::

    outer  /job:ps/task:0
    inner                  /device:CPU:0
    merged /job:ps/task:0/device:CPU:0
"""

# Device types TF's parser recognises in the short form ("/cpu:0").
_SHORT_FORM_TYPES = frozenset({"CPU", "GPU", "TPU", "CUSTOM", "EPU"})


class DeviceSpec:
    """An immutable, possibly partial device name (TF's ``DeviceSpecV2``)."""

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index", "_str")

    def __init__(self, job=None, replica=None, task=None, device_type=None,
                 device_index=None):
        self._job = None if job is None else str(job)
        self._replica = None if replica is None else int(replica)
        self._task = None if task is None else int(task)
        if device_type is not None:
            device_type = str(device_type)
            if device_type.upper() in ("CPU", "GPU"):
                device_type = device_type.upper()
        self._device_type = device_type
        self._device_index = None if device_index is None else int(device_index)
        self._str = None

    # -- parsing and printing --------------------------------------------------
    @classmethod
    def from_string(cls, spec):
        """Parse a device string. Unknown parts raise ValueError as in TF."""
        return cls(*_parse(spec or ""))

    def to_string(self):
        if self._str is None:
            out = ""
            if self._job is not None:
                out += "/job:" + self._job
            if self._replica is not None:
                out += "/replica:" + str(self._replica)
            if self._task is not None:
                out += "/task:" + str(self._task)
            if self._device_type is not None:
                index = "*" if self._device_index is None else str(self._device_index)
                out += "/device:%s:%s" % (self._device_type, index)
            self._str = out
        return self._str

    # -- parts -------------------------------------------------------------------
    job = property(lambda self: self._job)
    replica = property(lambda self: self._replica)
    task = property(lambda self: self._task)
    device_type = property(lambda self: self._device_type)
    device_index = property(lambda self: self._device_index)

    def replace(self, **kwargs):
        parts = dict(job=self._job, replica=self._replica, task=self._task,
                     device_type=self._device_type, device_index=self._device_index)
        parts.update(kwargs)
        return DeviceSpec(**parts)

    def make_merged_spec(self, dev):
        """A new spec: ``self`` with every part that ``dev`` sets replaced."""
        if isinstance(dev, str):
            dev = DeviceSpec.from_string(dev)
        return DeviceSpec(
            dev._job if dev._job is not None else self._job,
            dev._replica if dev._replica is not None else self._replica,
            dev._task if dev._task is not None else self._task,
            dev._device_type if dev._device_type is not None else self._device_type,
            dev._device_index if dev._device_type is not None or dev._device_index is not None
            else self._device_index)

    def is_compatible_with(self, other):
        """True when no part set in both specs differs (``/job:a`` fits ``/job:a/task:1``)."""
        for a, b in ((self._job, other._job), (self._replica, other._replica),
                     (self._task, other._task), (self._device_type, other._device_type),
                     (self._device_index, other._device_index)):
            if a is not None and b is not None and a != b:
                return False
        return True

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return "<DeviceSpec(job=%s, replica=%s, task=%s, device_type=%s, device_index=%s) at %s>" % (
            self._job, self._replica, self._task, self._device_type, self._device_index,
            hex(id(self)))


class MutableDeviceSpec(DeviceSpec):
    """TF1's ``tf.DeviceSpec``: like DeviceSpec, plus ``merge_from`` in place."""

    __slots__ = ()

    def merge_from(self, dev):
        merged = self.make_merged_spec(dev)
        for slot in ("_job", "_replica", "_task", "_device_type", "_device_index"):
            object.__setattr__(self, slot, getattr(merged, slot))
        self._str = None

    def parse_from_string(self, spec):
        parts = _parse(spec)
        self._job, self._replica, self._task, self._device_type, self._device_index = parts
        self._str = None
        return self


def _parse(spec):
    """Split a device string into (job, replica, task, device_type, device_index).

    Mirrors TensorFlow's parser so that the same strings are accepted and the
    same ones rejected ("Unknown attribute 'bar' is encountered ...").
    """
    job = replica = task = device_type = device_index = None
    for part in spec.split("/"):
        y = part.split(":")
        n = len(y)
        if n == 2 and y[0] == "job":
            job = y[1]
        elif n == 2 and y[0] == "replica":
            replica = _int_part(y[1], spec)
        elif n == 2 and y[0] == "task":
            task = _int_part(y[1], spec)
        elif n in (1, 2) and y[0].upper() in _SHORT_FORM_TYPES:
            if device_type is not None:
                raise ValueError("Multiple device types are not allowed while parsing "
                                 "the device spec: %s." % spec)
            device_type = y[0].upper()
            if n == 2 and y[1] != "*":
                device_index = _int_part(y[1], spec)
        elif n == 3 and y[0] == "device":
            if device_type is not None:
                raise ValueError("Multiple device types are not allowed while parsing "
                                 "the device spec: %s." % spec)
            device_type = y[1]
            if y[2] != "*":
                device_index = _int_part(y[2], spec)
        elif n and y[0] != "":
            raise ValueError("Unknown attribute '%s' is encountered while parsing the "
                             "device spec: '%s'." % (y[0], spec))
    return job, replica, task, device_type, device_index


def _int_part(text, spec):
    try:
        return int(text)
    except ValueError:
        # TF lets int() speak: the message does not repeat the spec.
        raise ValueError("invalid literal for int() with base 10: '%s'" % text) from None


def canonical_name(spec):
    """The normal string form of a device string or spec ('' stays '')."""
    if isinstance(spec, DeviceSpec):
        return spec.to_string()
    return DeviceSpec.from_string(spec or "").to_string()
