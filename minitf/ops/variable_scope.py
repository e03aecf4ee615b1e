"""``tf.variable_scope`` and ``tf.get_variable``: variables found by name.

``tf.Variable(...)`` always makes a new variable. ``tf.get_variable("w", shape)``
instead looks the full name (``"scope/inner/w"``) up in the graph's *variable
store*: it creates the variable the first time and, inside a scope opened with
``reuse=True`` (or ``reuse=tf.AUTO_REUSE``), returns the same variable again.
That is how TF1 code shares weights between two towers of a model, or between
a training and an evaluation graph built in the same process::

    with tf.variable_scope("model"):
        y1 = net(x1)                 # creates model/w
    with tf.variable_scope("model", reuse=True):
        y2 = net(x2)                 # finds model/w again

Two rules surprise people, and both are TensorFlow's:

* A variable's name comes from the **variable scopes** only; ``tf.name_scope``
  changes op names but not ``get_variable`` names.
* Re-entering a variable scope by its name opens a **new name scope**
  (``model_1/``) for the ops, while the variables keep ``model/``.

Mistakes are errors with TensorFlow's messages: asking for an existing
variable without reuse, asking for a missing one with ``reuse=True``, or
asking again with a different shape.
"""

import contextlib
import os
import threading
import traceback
import weakref

from minitf.framework import dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_shape import as_shape
from minitf.framework.errors import UnimplementedError
from minitf.ops import init_ops
from minitf.ops.variables import Variable

__all__ = ["AUTO_REUSE", "VariableScope", "variable_scope", "get_variable",
           "get_variable_scope"]


class _AutoReuse:
    """``reuse=tf.AUTO_REUSE``: create the variable if it is missing, else reuse it."""

    def __repr__(self):
        return "AUTO_REUSE"


AUTO_REUSE = _AutoReuse()


class VariableScope:
    """One variable scope: its name and the defaults its ``get_variable`` calls use."""

    def __init__(self, reuse, name="", initializer=None, dtype=dtypes.float32,
                 name_scope=""):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._dtype = dtypes.as_dtype(dtype)
        self._name_scope = name_scope

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    dtype = property(lambda self: self._dtype)

    def reuse_variables(self):
        """From now on, ``get_variable`` in this scope finds existing variables."""
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def get_variable(self, name, shape=None, dtype=None, initializer=None, trainable=None,
                     collections=None, validate_shape=True, aggregation=None):
        return _store().get_variable(self, name, shape, dtype, initializer, trainable,
                                     collections, validate_shape, aggregation)


class _Store:
    """Per graph: the variables made by ``get_variable``, and the scope stack."""

    def __init__(self):
        self.variables = {}
        self.defined_at = {}        # full name -> where the user's code made it
        self.scope_counts = {}
        self.local = threading.local()

    def unique_scope_name(self, parent, prefix):
        """``prefix``, or ``prefix_1``, ``prefix_2``...: the first not yet opened."""
        base = parent.name + "/" + prefix if parent.name else prefix
        if not self.scope_counts.get(base):
            return prefix
        i = 1
        while self.scope_counts.get("%s_%d" % (base, i)):
            i += 1
        return "%s_%d" % (prefix, i)

    def stack(self):
        if not hasattr(self.local, "scopes"):
            self.local.scopes = [VariableScope(False)]
        return self.local.scopes

    def get_variable(self, scope, name, shape, dtype, initializer, trainable, collections,
                     validate_shape, aggregation=None):
        full_name = scope.name + "/" + name if scope.name else name
        dtype = dtypes.as_dtype(dtype if dtype is not None else scope.dtype).base_dtype
        shape = as_shape(shape) if shape is not None else None
        reuse = scope.reuse
        found = self.variables.get(full_name)
        if found is not None:
            if reuse is False or reuse is None:
                raise ValueError("Variable %s already exists, disallowed. Did you mean to set "
                                 "reuse=True or reuse=tf.AUTO_REUSE in VarScope? Originally "
                                 "defined at:\n\n%s" % (full_name, self.defined_at[full_name]))
            if shape is not None and not shape.is_compatible_with(found.shape):
                raise ValueError("Trying to share variable %s, but specified shape %s and "
                                 "found shape %s." % (full_name, shape, found.shape))
            if dtype != found.dtype.base_dtype:
                raise ValueError("Trying to share variable %s, but specified dtype %s and "
                                 "found dtype %s." % (full_name, dtype.name,
                                                      found.dtype.base_dtype.name))
            return found
        if reuse is True:
            raise ValueError("Variable %s does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?" % full_name)
        initializer = initializer if initializer is not None else scope.initializer
        if initializer is None:
            initializer = init_ops.GlorotUniform() if dtype.is_floating else init_ops.Zeros()
        elif isinstance(initializer, type) and issubclass(initializer, init_ops.Initializer):
            # tf.zeros_initializer, not called: TF allows it
            initializer = initializer(dtype=dtype)
        if callable(initializer):
            if shape is None or not shape.is_fully_defined():
                raise ValueError("Shape of a new variable (%s) must be fully defined, but "
                                 "instead was %s." % (full_name, shape))
            dims = shape.as_list()
            initial_value = lambda: initializer(dims, dtype=dtype)  # noqa: E731
        else:
            if shape is not None:
                raise ValueError("If initializer is a constant, do not specify shape.")
            initial_value = initializer
        graph = get_default_graph()
        # A variable's name depends on the variable scopes only, so the
        # enclosing name scopes are left for the time of its creation.
        with graph.name_scope(None):
            variable = Variable(initial_value, name=full_name, dtype=dtype,
                                trainable=True if trainable is None else trainable,
                                collections=collections, validate_shape=validate_shape,
                                aggregation=aggregation)
        self.variables[full_name] = variable
        self.defined_at[full_name] = _user_frames()
        return variable


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frames():
    """The calling code outside minitf, formatted like a traceback (innermost last)."""
    frames = [f for f in traceback.extract_stack()[:-2]
              if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR + os.sep)]
    return "".join(traceback.format_list(frames[-3:])).rstrip()


_stores = weakref.WeakKeyDictionary()
_stores_lock = threading.Lock()


def _store(graph=None):
    graph = graph if graph is not None else get_default_graph()
    with _stores_lock:
        store = _stores.get(graph)
        if store is None:
            store = _stores[graph] = _Store()
        return store


def get_variable_scope():
    """The innermost variable scope (the top-level one has the name ``""``)."""
    return _store().stack()[-1]


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """The variable ``<scope>/name``: created on first use, shared under reuse.

    ``initializer`` is an initializer object (``tf.zeros_initializer()``...),
    or a tensor/array used as the value (then ``shape`` must be None). The
    default is the scope's initializer, else Glorot-uniform for floats and
    zeros for everything else.
    """
    for option, value in (("regularizer", regularizer), ("partitioner", partitioner),
                          ("custom_getter", custom_getter), ("constraint", constraint)):
        if value is not None:
            raise UnimplementedError(None, None, "minitf's get_variable does not support "
                                     "%s=; build that part of the model by hand." % option)
    return get_variable_scope().get_variable(name, shape, dtype, initializer, trainable,
                                             collections, validate_shape, aggregation)


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None,
                   custom_getter=None, reuse=None, dtype=None, use_resource=None,
                   constraint=None, auxiliary_name_scope=True):
    """Open a variable scope (and a name scope for the ops made inside).

    ``name_or_scope``: a name, or a VariableScope to re-enter; None uses
    ``default_name`` made unique (``dense``, ``dense_1``...). ``reuse``: True,
    ``tf.AUTO_REUSE``, or None/False to inherit the enclosing scope's (once a
    scope reuses, the scopes inside it do too, as in TF).
    """
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    graph = get_default_graph()
    store = _store(graph)
    stack = store.stack()
    parent = stack[-1]
    if parent.reuse is True or parent.reuse is AUTO_REUSE:
        reuse = parent.reuse if reuse in (None, False) else reuse
    elif reuse is False:
        reuse = None
    if isinstance(name_or_scope, VariableScope):
        name = name_or_scope.name
        name_scope = name_or_scope.original_name_scope       # re-entered as it was
        initializer = initializer if initializer is not None else name_or_scope.initializer
        dtype = dtype if dtype is not None else name_or_scope.dtype
        if reuse is None:
            reuse = name_or_scope.reuse
    else:
        short = name_or_scope if name_or_scope is not None else \
            store.unique_scope_name(parent, default_name)
        name = parent.name + "/" + short if parent.name else short
        # TF: the ops' name scope is made unique by the graph ("model_1/" on
        # re-entry) while the variable scope keeps its name ("model/").
        name_scope = short if name_or_scope is not None else default_name
    store.scope_counts[name] = store.scope_counts.get(name, 0) + 1
    scope = VariableScope(reuse, name,
                          initializer if initializer is not None else parent.initializer,
                          dtype if dtype is not None else parent.dtype)
    with contextlib.ExitStack() as stack_of_contexts:
        if auxiliary_name_scope:
            scope._name_scope = stack_of_contexts.enter_context(graph.name_scope(name_scope))
        stack.append(scope)
        try:
            yield scope
        finally:
            stack.pop()
