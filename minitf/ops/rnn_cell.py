"""``tf.nn.rnn_cell``: the step functions of recurrent networks.

A *cell* computes one time step: ``output, new_state = cell(input, state)``.
``tf.nn.dynamic_rnn`` (ops/rnn.py) calls it once inside a ``tf.while_loop``
body, so the same ops and the same weights serve every time step.

A cell makes its variables on its first call, in a variable scope named after
it inside the caller's scope: ``rnn/basic_lstm_cell/kernel`` and
``rnn/basic_lstm_cell/bias`` (TF's names, so checkpoints and seeded values
line up with TF). Later calls reuse them. The kernel of a cell that reads
``[input, state]`` is one matrix ``[input_depth + num_units, k * num_units]``:
one matmul computes every gate at once.

* :class:`BasicRNNCell`: ``h = tanh([x, h] @ W + b)``;
* :class:`GRUCell`: gates ``r, u = sigmoid([x, h] @ Wg + bg)`` (bias 1.0),
  candidate ``c = tanh([x, r*h] @ Wc + bc)``, ``h = u*h + (1-u)*c``;
* :class:`BasicLSTMCell`: ``i, j, f, o = split([x, h] @ W + b)``,
  ``c = c*sigmoid(f + forget_bias) + sigmoid(i)*tanh(j)``,
  ``h = tanh(c)*sigmoid(o)``; the state is ``LSTMStateTuple(c, h)``;
* :class:`LSTMCell`: the same, plus peepholes, clipping and a projection;
* :class:`MultiRNNCell` stacks cells (``cell_0``, ``cell_1``... scopes);
* wrappers: :class:`DropoutWrapper`, :class:`DeviceWrapper` (runs the cell
  on a device: one layer per device, the model-parallel RNN of the whitepaper)
  and :class:`ResidualWrapper`.
"""

import collections
import hashlib
import re

from minitf.framework import dtypes
from minitf.framework.graph import Tensor, get_default_graph
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, clip_ops, init_ops, math_ops, nn_ops
from minitf.ops.core import convert_to_tensor, name_scope
from minitf.ops.variable_scope import get_variable, variable_scope


def _snake(name):
    s = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", s).lower()


def _flatten(structure):
    if isinstance(structure, (list, tuple)):
        return [leaf for s in structure for leaf in _flatten(s)]
    return [structure]


def _pack(template, flat):
    it = iter(flat)

    def build(t):
        if isinstance(t, (list, tuple)):
            items = [build(s) for s in t]
            return type(t)(*items) if hasattr(t, "_fields") else type(t)(items)
        return next(it)
    return build(template)


def _concat(prefix, suffix):
    """A shape ``[prefix] + suffix`` as a static list (None where unknown)."""
    if isinstance(suffix, TensorShape):
        suffix = suffix.as_list()
    elif not isinstance(suffix, (list, tuple)):
        suffix = [suffix]
    return [prefix] + list(suffix)


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The state of an LSTM: the cell value ``c`` and the output ``h``."""
    __slots__ = ()

    @property
    def dtype(self):
        if self.c.dtype != self.h.dtype:
            raise TypeError("Inconsistent internal state: %s vs %s" % (self.c.dtype,
                                                                       self.h.dtype))
        return self.c.dtype


class RNNCell:
    """What every cell has: ``state_size``, ``output_size``, ``zero_state`` and
    ``__call__``, which makes the variables on the first call (``build``)."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        if kwargs:
            raise TypeError("Unknown arguments: %s" % ", ".join(sorted(kwargs)))
        self.trainable = trainable
        self._name = name
        self._base_name = name or _snake(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._scope = None
        self.built = False

    @property
    def name(self):
        return self._scope.name if self._scope is not None else self._base_name

    @property
    def state_size(self):
        raise NotImplementedError("a cell says its state_size")

    @property
    def output_size(self):
        raise NotImplementedError("a cell says its output_size")

    def build(self, inputs_shape):
        self.built = True

    def __call__(self, inputs, state, scope=None):
        if scope is not None:
            with variable_scope(scope, reuse=True if self.built else None) as s:
                if self._scope is None:
                    self._scope = s
                return self._call_built(inputs, state)
        if self._scope is None:
            with variable_scope(self._name, default_name=self._base_name) as s:
                self._scope = s
                return self._call_built(inputs, state)
        with variable_scope(self._scope, reuse=True):
            return self._call_built(inputs, state)

    def _call_built(self, inputs, state):
        if not self.built:
            flat = _flatten(inputs)
            self.build(convert_to_tensor(flat[0]).shape if flat else None)
            self.built = True
        return self.call(inputs, state)

    def call(self, inputs, state):
        raise NotImplementedError("a cell computes one step in call(inputs, state)")

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = convert_to_tensor(inputs)
            batch_size = inputs.shape[0].value
            if batch_size is None:
                batch_size = array_ops.shape(inputs)[0]
            dtype = dtype or inputs.dtype
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zeros of the state's structure, ``[batch_size, size]`` each."""
        with name_scope(None, type(self).__name__ + "ZeroState", [batch_size]):
            return _zero_state_tensors(self.state_size, batch_size, dtype)

    def _variable(self, name, shape, dtype, initializer=None):
        return get_variable(name, shape, dtype=dtype, initializer=initializer,
                            trainable=self.trainable)


def _zero_state_tensors(state_size, batch_size, dtype):
    static_batch = batch_size if isinstance(batch_size, int) else None

    def zeros(size):
        if isinstance(batch_size, Tensor):
            shape = array_ops.stack([batch_size] + list(_flatten(
                size.as_list() if isinstance(size, TensorShape) else [size])))
            z = array_ops.zeros(shape, dtype=dtype)
            z._shape = TensorShape(_concat(static_batch, size))
            return z
        return array_ops.zeros(_concat(batch_size, size), dtype=dtype)
    if isinstance(state_size, (list, tuple)):
        return _pack(state_size, [zeros(s) for s in _flatten(state_size)])
    return zeros(state_size)


def _input_depth(inputs_shape):
    if inputs_shape is None or inputs_shape.ndims is None or inputs_shape[-1].value is None:
        raise ValueError("Expected inputs.shape[-1] to be known, saw shape: %s" % inputs_shape)
    return inputs_shape[-1].value


class BasicRNNCell(RNNCell):
    """``h = activation([x, h] @ kernel + bias)``."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None,
                 **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        dtype = self._dtype or dtypes.float32
        self._kernel = self._variable("kernel", [depth + self._num_units, self._num_units],
                                      dtype)
        self._bias = self._variable("bias", [self._num_units], dtype, init_ops.Zeros())
        self.built = True

    def call(self, inputs, state):
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        output = self._activation(nn_ops.bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(RNNCell):
    """Gated recurrent unit (Cho et al. 2014), TF's ``gates``/``candidate`` weights."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        dtype = self._dtype or dtypes.float32
        with variable_scope("gates"):
            self._gate_kernel = self._variable("kernel", [depth + n, 2 * n], dtype,
                                               self._kernel_initializer)
            self._gate_bias = self._variable(
                "bias", [2 * n], dtype, self._bias_initializer or init_ops.Constant(1.0))
        with variable_scope("candidate"):
            self._candidate_kernel = self._variable("kernel", [depth + n, n], dtype,
                                                    self._kernel_initializer)
            self._candidate_bias = self._variable(
                "bias", [n], dtype, self._bias_initializer or init_ops.Zeros())
        self.built = True

    def call(self, inputs, state):
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel)
        value = math_ops.sigmoid(nn_ops.bias_add(gate_inputs, self._gate_bias))
        r, u = array_ops.split(value=value, num_or_size_splits=2, axis=1)
        candidate = math_ops.matmul(array_ops.concat([inputs, r * state], 1),
                                    self._candidate_kernel)
        c = self._activation(nn_ops.bias_add(candidate, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(RNNCell):
    """The LSTM of Zaremba et al. (2014): no peepholes, no clipping, and
    ``forget_bias`` added to the forget gate."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        dtype = self._dtype or dtypes.float32
        self._kernel = self._variable("kernel", [depth + n, 4 * n], dtype)
        self._bias = self._variable("bias", [4 * n], dtype, init_ops.Zeros())
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=1)
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel)
        gate_inputs = nn_ops.bias_add(gate_inputs, self._bias)
        i, j, f, o = array_ops.split(value=gate_inputs, num_or_size_splits=4, axis=1)
        forget_bias = array_ops.constant(self._forget_bias, dtype=f.dtype.base_dtype)
        new_c = math_ops.add(math_ops.multiply(c, math_ops.sigmoid(math_ops.add(f, forget_bias))),
                             math_ops.multiply(math_ops.sigmoid(i), self._activation(j)))
        new_h = math_ops.multiply(self._activation(new_c), math_ops.sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else \
            array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(RNNCell):
    """The LSTM of Hochreiter & Schmidhuber (1997), with TF's options: peepholes
    (``w_f_diag``, ``w_i_diag``, ``w_o_diag``), ``cell_clip``, a projection of
    the output to ``num_proj`` units (``projection/kernel``) and ``proj_clip``."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise ValueError("num_unit_shards and num_proj_shards are deprecated in TF and "
                             "not supported by minitf; use partitioned variables instead.")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        n, m = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, m) if self._state_is_tuple else n + m

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        h_depth = self._num_proj or n
        dtype = self._dtype or dtypes.float32
        self._kernel = self._variable("kernel", [depth + h_depth, 4 * n], dtype,
                                      self._initializer)
        self._bias = self._variable("bias", [4 * n], dtype, init_ops.Zeros())
        if self._use_peepholes:
            self._w_f_diag = self._variable("w_f_diag", [n], dtype, self._initializer)
            self._w_i_diag = self._variable("w_i_diag", [n], dtype, self._initializer)
            self._w_o_diag = self._variable("w_o_diag", [n], dtype, self._initializer)
        if self._num_proj is not None:
            with variable_scope("projection"):
                self._proj_kernel = self._variable("kernel", [n, self._num_proj], dtype,
                                                   self._initializer)
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev, m_prev = array_ops.split(state, [n, self._num_proj or n], axis=1)
        lstm_matrix = math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel)
        lstm_matrix = nn_ops.bias_add(lstm_matrix, self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        sigmoid = math_ops.sigmoid
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev +
                 sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else \
            array_ops.concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: layer ``k`` reads layer ``k-1``'s output and keeps
    its own state (scopes ``cell_0``, ``cell_1``...)."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not isinstance(cells, (list, tuple)):
            raise TypeError("cells must be a list or tuple, but saw: %s." % (cells,))
        if len(set(id(c) for c in cells)) < len(cells):
            raise ValueError("At least two cells provided to MultiRNNCell are the same "
                             "object and will share weights.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(c.state_size for c in self._cells)
        return sum(c.state_size for c in self._cells)

    output_size = property(lambda self: self._cells[-1].output_size)

    def zero_state(self, batch_size, dtype):
        with name_scope(None, type(self).__name__ + "ZeroState", [batch_size]):
            if self._state_is_tuple:
                return tuple(c.zero_state(batch_size, dtype) for c in self._cells)
            return super().zero_state(batch_size, dtype)

    def _call_built(self, inputs, state):
        self.built = True
        return self.call(inputs, state)

    def call(self, inputs, state):
        cur_inp = inputs
        new_states = []
        states = state if self._state_is_tuple else array_ops.split(
            state, [c.state_size for c in self._cells], axis=1)
        for i, cell in enumerate(self._cells):
            with variable_scope("cell_%d" % i):
                cur_inp, new_state = cell(cur_inp, states[i])
                new_states.append(new_state)
        new_states = tuple(new_states) if self._state_is_tuple else \
            array_ops.concat(new_states, 1)
        return cur_inp, new_states


class _Wrapper(RNNCell):
    """A cell around another cell: same sizes, same scope as the wrapped cell."""

    def __init__(self, cell):
        super().__init__()
        self._cell = cell

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def zero_state(self, batch_size, dtype):
        with name_scope(None, type(self).__name__ + "ZeroState", [batch_size]):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        return self.call(inputs, state, scope)


class DeviceWrapper(_Wrapper):
    """Runs the wrapped cell on ``device``: with one ``DeviceWrapper`` per layer of
    a MultiRNNCell, each layer is computed on its own device, and layer k+1
    works on time step t while layer k is already at step t+1."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with name_scope(None, type(self).__name__ + "ZeroState", [batch_size]), \
                get_default_graph().device(self._device):
            return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs, state, scope=None):
        with get_default_graph().device(self._device):
            return self._cell(inputs, state, scope=scope)


class ResidualWrapper(_Wrapper):
    """``output = cell_output + input`` (the state is the cell's)."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def call(self, inputs, state, scope=None):
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_state
        return _pack(inputs, [math_ops.add(a, b) for a, b in zip(_flatten(inputs),
                                                                _flatten(output))]), new_state


class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and (between steps) state, as TF's
    ``DropoutWrapper``: a keep probability of 1 adds no op; ``seed`` derives one
    seed per dropped tensor as TF does, so the masks are TF's."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        if variational_recurrent:
            raise ValueError("minitf's DropoutWrapper does not support variational_recurrent"
                             "=True (one mask for every time step); use the default.")
        if dropout_state_filter_visitor is not None:
            raise ValueError("minitf's DropoutWrapper does not support "
                             "dropout_state_filter_visitor; every state tensor but an "
                             "LSTM's c is dropped, as TF's default does.")
        for name, p in (("input_keep_prob", input_keep_prob),
                        ("output_keep_prob", output_keep_prob),
                        ("state_keep_prob", state_keep_prob)):
            if isinstance(p, float) and not 0.0 < p <= 1.0:
                raise ValueError("Parameter %s must be between 0 and 1: %f" % (name, p))
        self._input_keep_prob = input_keep_prob
        self._output_keep_prob = output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._seed = seed

    def _gen_seed(self, salt_prefix, index):
        if self._seed is None:
            return None
        salt = "%s_%d" % (salt_prefix, index)
        string = (str(self._seed) + salt).encode("utf-8")
        return int(hashlib.md5(string).hexdigest()[:8], 16) & 0x7FFFFFFF

    @staticmethod
    def _should_dropout(p):
        return (not isinstance(p, float)) or p < 1

    def _dropout(self, values, salt_prefix, keep_prob, skip_c=False):
        flat = _flatten(values)
        out = []
        for i, v in enumerate(flat):
            if skip_c and isinstance(values, LSTMStateTuple) and i == 0:
                out.append(v)       # TF's default filter keeps an LSTM's c
                continue
            out.append(nn_ops.dropout(v, keep_prob=keep_prob,
                                      seed=self._gen_seed(salt_prefix, i)))
        return _pack(values, out) if isinstance(values, (list, tuple)) else out[0]

    def call(self, inputs, state, scope=None):
        if self._should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._should_dropout(self._state_keep_prob):
            new_state = self._dropout(new_state, "state", self._state_keep_prob, skip_c=True)
        if self._should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state


__all__ = ["RNNCell", "BasicRNNCell", "GRUCell", "BasicLSTMCell", "LSTMCell", "LSTMStateTuple",
           "MultiRNNCell", "DeviceWrapper", "ResidualWrapper", "DropoutWrapper"]
