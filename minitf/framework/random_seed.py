"""TF1's seed rules: which ``(seed, seed2)`` attributes a new random op gets.

Every random op carries two integer attributes, ``seed`` and ``seed2``, that
its kernel turns into a Philox key and counter
(:mod:`minitf.kernels.random_streams`). :func:`get_seed` derives them from the
graph-level seed (:func:`set_random_seed`) and the op's own ``seed=``
argument, exactly as ``tensorflow/python/framework/random_seed.py`` (TF 2.x,
graph mode) does:

====================  ================  =======================================
graph seed            op seed           (seed, seed2)
====================  ================  =======================================
not set               not set           ``(None, None)``: attrs 0, 0 -- the
                                        kernel picks random seeds
not set               ``s``             ``(DEFAULT_GRAPH_SEED, s % (2**31-1))``
``g``                 ``s``             ``(g % (2**31-1), s % (2**31-1))``
``g``                 not set           ``(g % (2**31-1), n)``, ``n`` = 0, 1,
                                        2... counting such calls in the graph
====================  ================  =======================================

and a result of ``(0, 0)`` becomes ``(0, 2**31 - 1)``, since ``(0, 0)`` would
mean "no seed" to the kernel.

The last row is the one to watch. TF 1.x used the graph's op count there
(``graph._last_id``), so every op an API created before its random op shifted
the numbers. TF 2.x's ``tf.compat.v1`` counts only the ``get_seed(None)``
calls made while the graph seed is set: ops without randomness, random ops
with their own seed, and random ops made before ``set_random_seed`` do not
count. The counter lives on the graph (``graph._random_seed_count``), so a
new graph starts from 0 and changing the graph seed does not reset it.

``%`` is Python's, applied to whatever the caller passed: a float stays a
float (the op attribute later truncates it, see :func:`seed_attrs`), a string
raises TF's ``TypeError`` ("not all arguments converted during string
formatting"), negative seeds wrap to non-negative ones.
"""

from minitf.framework.graph import get_default_graph

#: The graph seed TF uses when only an op seed is given.
DEFAULT_GRAPH_SEED = 87654321

_MAXINT32 = 2**31 - 1


def _truncate_seed(seed):
    return seed % _MAXINT32    # fits an int32 attribute; TF's exact expression


def get_seed(op_seed, graph=None):
    """The ``(seed, seed2)`` of a new random op in ``graph`` (default: the default graph).

    ``op_seed`` is the op's ``seed=`` argument (None when not given). Calling
    this with ``op_seed=None`` while the graph seed is set consumes one value
    of the graph's counter, so an op constructor must call it exactly once per
    random op, as TF does.
    """
    graph = get_default_graph() if graph is None else graph
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            with graph._lock:
                op_seed = getattr(graph, "_random_seed_count", 0)
                graph._random_seed_count = op_seed + 1
        seeds = _truncate_seed(global_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(op_seed)
    else:
        seeds = None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def set_random_seed(seed, graph=None):
    """Set the graph-level seed (``tf.set_random_seed``); None unsets it."""
    graph = get_default_graph() if graph is None else graph
    graph.seed = seed


def _make_int(value, name):
    """TF's conversion of an ``int`` attribute (op_def_library ``_MakeInt``)."""
    if isinstance(value, str):
        raise TypeError("Expected int for argument '%s' not %r." % (name, value))
    try:
        return int(value)
    except (TypeError, ValueError):
        raise TypeError("Expected int for argument '%s' not %r." % (name, value)) from None


def seed_attrs(seed, seed2):
    """The op's ``seed`` and ``seed2`` attribute values for :func:`get_seed`'s result.

    None becomes 0 (the attributes' default); anything else is converted the way
    TF converts an ``int`` attribute: ``int(v)`` (so 1.5 becomes 1), a string or
    an unconvertible value raises ``TypeError("Expected int for argument 'seed'
    not ...")``.
    """
    return (0 if seed is None else _make_int(seed, "seed"),
            0 if seed2 is None else _make_int(seed2, "seed2"))
