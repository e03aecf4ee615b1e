"""Nested elements: a tf.data element is a tensor, or a tuple / dict of them
(nested). Pipelines work on the *flat* list of components; these helpers go
back and forth. Lists are values, not structure (as in TF)."""


def flatten(structure):
    """The leaves of ``structure`` in a fixed order (dicts by sorted key)."""
    if isinstance(structure, tuple):
        return [leaf for s in structure for leaf in flatten(s)]
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    return [structure]


def pack(template, flat):
    """Rebuild ``template``'s nesting with the values of ``flat``."""
    it = iter(flat)

    def build(t):
        if isinstance(t, tuple):
            items = [build(s) for s in t]
            return type(t)(*items) if hasattr(t, "_fields") else tuple(items)
        if isinstance(t, dict):
            return {k: build(t[k]) for k in sorted(t)}
        return next(it)
    return build(template)


def map_structure(fn, structure):
    return pack(structure, [fn(x) for x in flatten(structure)])


class Spec:
    """The static type of one component: ``dtype`` and ``shape``. Iterates
    as ``(dtype, shape)``; it is a leaf, not structure."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype = dtype
        self.shape = shape

    def __iter__(self):
        return iter((self.dtype, self.shape))

    def __repr__(self):
        return "Spec(%s, %s)" % (self.dtype.name, self.shape)
