"""Data types: ``tf.float32`` and friends.

A :class:`DType` is a thin, named wrapper around a numpy dtype. Kernels work on
numpy arrays, so every minitf dtype has a numpy twin:

* numbers and bool map to the numpy type of the same name;
* ``bfloat16`` is a *storage* type (as on TPUs): values are kept in
  ``ml_dtypes.bfloat16`` arrays and math on them is done in float32;
* ``string`` tensors hold ``bytes`` in numpy ``object`` arrays, which is also
  what TensorFlow hands back from ``sess.run``.

Ref types (``float32_ref``) are what a TF1 ``VariableV2`` outputs: a handle to
the variable's buffer rather than a value. ``dtype.base_dtype`` strips the ref.
"""

import numpy as np
import ml_dtypes


class DType:
    """A tensor element type. Compare with ``==``; ``dtype.name`` prints it."""

    __slots__ = ("_name", "_np", "_is_ref", "_enum")

    def __init__(self, name, np_dtype, enum, is_ref=False):
        self._name = name
        self._np = np_dtype
        self._is_ref = is_ref
        self._enum = enum

    @property
    def name(self):
        return self._name + ("_ref" if self._is_ref else "")

    @property
    def as_numpy_dtype(self):
        """The numpy scalar type (``np.float32``...; ``object`` for strings)."""
        return self._np.type if self._np != np.dtype(object) else object

    @property
    def np_dtype(self):
        return self._np

    @property
    def is_ref_dtype(self):
        return self._is_ref

    @property
    def base_dtype(self):
        return _BY_NAME[self._name] if self._is_ref else self

    @property
    def _as_ref(self):
        return _REFS[self._name]

    @property
    def as_datatype_enum(self):
        return self._enum + (100 if self._is_ref else 0)

    @property
    def is_floating(self):
        return self._name in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_integer(self):
        return self._name in ("int8", "int16", "int32", "int64", "uint8", "uint16")

    @property
    def is_unsigned(self):
        return self._name in ("uint8", "uint16")

    @property
    def is_bool(self):
        return self._name == "bool"

    @property
    def is_numeric(self):
        return self.is_floating or self.is_integer

    @property
    def size(self):
        return 0 if self._name == "string" else self._np.itemsize

    @property
    def min(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).min) if self._name == "bfloat16" \
                else float(np.finfo(self._np).min)
        return int(np.iinfo(self._np).min)

    @property
    def max(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).max) if self._name == "bfloat16" \
                else float(np.finfo(self._np).max)
        return int(np.iinfo(self._np).max)

    def is_compatible_with(self, other):
        return self.base_dtype == as_dtype(other).base_dtype

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._name == other._name and self._is_ref == other._is_ref
        try:
            return self == as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self._name, self._is_ref))

    def __repr__(self):
        return "tf.%s" % self.name

    def __str__(self):
        return "<dtype: '%s'>" % self.name

    def __reduce__(self):
        return (as_dtype, (self.name,))


_SPECS = [
    # name, numpy dtype, DataType enum of types.proto
    ("float32", np.dtype(np.float32), 1),
    ("float64", np.dtype(np.float64), 2),
    ("int32", np.dtype(np.int32), 3),
    ("uint8", np.dtype(np.uint8), 4),
    ("int16", np.dtype(np.int16), 5),
    ("int8", np.dtype(np.int8), 6),
    ("string", np.dtype(object), 7),
    ("int64", np.dtype(np.int64), 9),
    ("bool", np.dtype(np.bool_), 10),
    ("bfloat16", np.dtype(ml_dtypes.bfloat16), 14),
    ("uint16", np.dtype(np.uint16), 17),
    ("float16", np.dtype(np.float16), 19),
    # A handle to state kept by a server (a queue, a reader): what a
    # ``FIFOQueueV2`` op outputs. It never leaves the device that owns it.
    ("resource", np.dtype(object), 20),
]

_BY_NAME = {n: DType(n, d, e) for n, d, e in _SPECS}
_REFS = {n: DType(n, d, e, is_ref=True) for n, d, e in _SPECS}

float32 = _BY_NAME["float32"]
float64 = _BY_NAME["float64"]
double = float64
half = float16 = _BY_NAME["float16"]
bfloat16 = _BY_NAME["bfloat16"]
int8 = _BY_NAME["int8"]
int16 = _BY_NAME["int16"]
int32 = _BY_NAME["int32"]
int64 = _BY_NAME["int64"]
uint8 = _BY_NAME["uint8"]
uint16 = _BY_NAME["uint16"]
string = _BY_NAME["string"]
bool = _BY_NAME["bool"]  # noqa: A001  (tf.bool shadows the builtin, as in TF)
resource = _BY_NAME["resource"]

_NP_TO_DTYPE = {d: _BY_NAME[n] for n, d, _ in _SPECS if n not in ("string", "resource")}
_ENUM_TO_DTYPE = {e: _BY_NAME[n] for n, _, e in _SPECS}
_ENUM_TO_DTYPE.update({e + 100: _REFS[n] for n, _, e in _SPECS})


def as_dtype(type_value):
    """Convert a DType, a name ('float32', 'float32_ref'), a numpy dtype or
    scalar type, or a DataType enum into a :class:`DType`."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        if type_value.endswith("_ref") and type_value[:-4] in _REFS:
            return _REFS[type_value[:-4]]
        if type_value in _BY_NAME:
            return _BY_NAME[type_value]
        aliases = {"float": float32, "double": float64, "half": float16}
        if type_value in aliases:
            return aliases[type_value]
    if isinstance(type_value, int) and not isinstance(type_value, type(True)) \
            and type_value in _ENUM_TO_DTYPE:
        return _ENUM_TO_DTYPE[type_value]
    if type_value in (bytes, str, object):
        return string
    if type_value is float:
        return float32
    if type_value is int:
        return int32
    if type_value is type(True):
        return _BY_NAME["bool"]
    try:
        nd = np.dtype(type_value)
    except TypeError:
        nd = None
    if nd is not None:
        if nd in _NP_TO_DTYPE:
            return _NP_TO_DTYPE[nd]
        if nd.kind in ("S", "U", "O"):
            return string
    raise TypeError("Cannot convert value %r to a TensorFlow DType." % (type_value,))


def dtype_of_numpy(array):
    """The DType of a numpy array (strings/bytes/object arrays are ``string``)."""
    nd = array.dtype
    if nd in _NP_TO_DTYPE:
        return _NP_TO_DTYPE[nd]
    if nd.kind in ("S", "U", "O"):
        return string
    raise TypeError("minitf has no dtype for numpy dtype %s" % nd)


QUANTIZED_DTYPES = frozenset()


# -- dtype names as the op table lists them ---------------------------------------------------
#: What an op row says its kernels take (``OpDef.devices``): tuples of names.
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
INTEGER_NAMES = ("int8", "int16", "int32", "int64", "uint8", "uint16")
NUMBER_NAMES = INTEGER_NAMES + FLOAT_NAMES


def to_string_array(value):
    """``value`` (a str, bytes, or nested lists/arrays of them) as a numpy
    ``object`` array of ``bytes``: how minitf holds a ``tf.string`` tensor.
    ``str`` elements are encoded as UTF-8; anything else is a TypeError."""
    arr = np.asarray(value, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for idx, item in np.ndenumerate(arr):
        if isinstance(item, str):
            item = item.encode("utf-8")
        elif isinstance(item, np.bytes_):
            item = bytes(item)
        elif not isinstance(item, bytes):
            raise TypeError("Failed to convert elements of %r to Tensor: expected bytes or "
                            "str, got %s." % (value, type(item).__name__))
        out[idx] = item
    return out
