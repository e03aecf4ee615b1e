"""``tf.nn.dynamic_rnn`` and friends: a cell unrolled over time.

``dynamic_rnn(cell, inputs)`` builds *one* copy of the cell inside a
``tf.while_loop`` that runs once per time step (TF1's rnn.py, step by step):

1. the inputs ``[batch, time, depth]`` are transposed to time-major and
   ``unstack``\\ ed into a TensorArray, one element per time step;
2. the loop variables are the time ``t``, an output TensorArray and the
   state; the body reads input ``t``, calls the cell, writes output ``t``;
3. with ``sequence_length``, a batch entry whose sequence has ended gets a
   zero output and keeps its last state (``tf.where`` on ``t >= length``);
4. after the loop the outputs are ``stack``\\ ed and transposed back.

The graph does not grow with the number of time steps, the steps run one after
the other (each needs the state of the one before), and gradients flow back
through the loop (ops/while_gradients.py). ``static_rnn`` is the other way: a
Python loop that builds the cell once per step (a bigger graph, known length).
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, math_ops, reduction_ops
from minitf.ops.control_flow_ops import cond
from minitf.ops.core import convert_to_tensor, name_scope
from minitf.ops.rnn_cell import _flatten, _pack
from minitf.ops.tensor_array_ops import TensorArray
from minitf.ops.variable_scope import variable_scope
from minitf.ops.while_loop import while_loop


def _transpose_batch_time(x):
    x = convert_to_tensor(x)
    rank = x.shape.ndims
    if rank is not None and rank < 2:
        return x
    if rank is None:
        raise ValueError("dynamic_rnn needs inputs of known rank, got %s" % x.name)
    return array_ops.transpose(x, [1, 0] + list(range(2, rank)))


def _batch_size(flat_input):
    for x in flat_input:
        if x.shape.ndims is not None and x.shape[1].value is not None:
            return x.shape[1].value
    return array_ops.shape(flat_input[0])[1]


def _state_dtype(dtype, state):
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    flat = _flatten(state)
    if not flat:
        raise ValueError("Unable to infer dtype from empty state.")
    return flat[0].dtype.base_dtype


def _copy_through(time, sequence_length, old, new):
    """Per batch entry: ``new`` while its sequence runs, ``old`` once it ended."""
    if new.shape.ndims == 0:
        return new
    return array_ops.where(time >= sequence_length, old, new)


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Run ``cell`` over ``inputs`` (``[batch, time, ...]``, or ``[time, batch,
    ...]`` with ``time_major``) in a while loop; returns ``(outputs,
    final_state)`` with outputs in the inputs' layout. ``sequence_length``
    (``[batch]``) stops each entry at its own length: zero outputs after it and
    its state from its last step. Give ``initial_state`` or ``dtype``."""
    flat_input = [convert_to_tensor(x) for x in _flatten(inputs)]
    parallel_iterations = parallel_iterations or 32
    with variable_scope(scope or "rnn"):
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError("sequence_length must be a vector of length batch_size, "
                                 "but saw shape: %s" % sequence_length.shape)
            sequence_length = array_ops.identity(sequence_length, name="sequence_length")
        batch_size = _batch_size(flat_input)
        if initial_state is not None:
            state = initial_state
        else:
            if dtype is None:
                raise ValueError("If there is no initial_state, you must give a dtype.")
            state = cell.zero_state(batch_size, dtype)
        inputs_tm = _pack(inputs, flat_input) if isinstance(inputs, (list, tuple)) \
            else flat_input[0]
        outputs, final_state = _dynamic_rnn_loop(cell, inputs_tm, state, parallel_iterations,
                                                 swap_memory, sequence_length, dtype)
        if not time_major:
            outputs = _pack(outputs, [_transpose_batch_time(o) for o in _flatten(outputs)]) \
                if isinstance(outputs, (list, tuple)) else _transpose_batch_time(outputs)
        return outputs, final_state


def _dynamic_rnn_loop(cell, inputs, initial_state, parallel_iterations, swap_memory,
                      sequence_length, dtype):
    state = initial_state
    flat_input = _flatten(inputs)
    flat_output_size = _flatten(cell.output_size)
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _batch_size(flat_input)
    got_shapes = []
    for x in flat_input:
        if x.shape.ndims is None or x.shape.ndims < 3:
            raise ValueError("Input size (depth of inputs) must be accessible via shape "
                             "inference, but saw value None.")
        got_shapes.append(x.shape)
    const_time_steps, const_batch_size = got_shapes[0].as_list()[:2]
    state_dtype = _state_dtype(dtype, state)

    def zeros(size):
        shape = [batch_size] + _flatten(size.as_list() if isinstance(size, TensorShape)
                                        else [size])
        if any(not isinstance(s, int) for s in shape):
            shape = array_ops.stack(shape)
        return array_ops.zeros(shape, dtype=state_dtype)
    flat_zero_output = [zeros(size) for size in flat_output_size]
    if sequence_length is not None:
        max_length = reduction_ops.reduce_max(sequence_length)
    else:
        max_length = time_steps
    time = array_ops.constant(0, dtype=dtypes.int32, name="time")
    with name_scope(None, "dynamic_rnn") as base_name:   # (names the TensorArrays, as TF)
        pass
    output_ta = tuple(
        TensorArray(state_dtype, size=time_steps,
                    element_shape=TensorShape([const_batch_size]).concatenate(
                        TensorShape(_flatten(size))),
                    tensor_array_name=base_name + "output_%d" % i)
        for i, size in enumerate(flat_output_size))
    input_ta = tuple(
        TensorArray(x.dtype.base_dtype, size=time_steps, element_shape=x.shape[1:],
                    tensor_array_name=base_name + "input_%d" % i)
        for i, x in enumerate(flat_input))
    input_ta = tuple(ta.unstack(x) for ta, x in zip(input_ta, flat_input))

    def time_step(t, output_ta_t, state):
        input_t = [ta.read(t) for ta in input_ta]
        for x, shape in zip(input_t, got_shapes):
            x._shape = shape[1:]
        input_t = _pack(inputs, input_t) if isinstance(inputs, (list, tuple)) else input_t[0]
        output, new_state = cell(input_t, state)
        flat_new_output = _flatten(output)
        flat_new_state = _flatten(new_state)
        if sequence_length is not None:
            flat_new_output = [_copy_through(t, sequence_length, z, o)
                               for z, o in zip(flat_zero_output, flat_new_output)]
            flat_new_state = [_copy_through(t, sequence_length, s, n)
                              for s, n in zip(_flatten(state), flat_new_state)]
            new_state = _pack(state, flat_new_state) if isinstance(state, (list, tuple)) \
                else flat_new_state[0]
        output_ta_t = tuple(ta.write(t, o) for ta, o in zip(output_ta_t, flat_new_output))
        return (t + 1, output_ta_t, new_state)

    # At least one step, so the TensorArrays learn their element shape.
    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_length))
    _, output_final_ta, final_state = while_loop(
        lambda t, *_: t < loop_bound, time_step, (time, output_ta, state),
        parallel_iterations=parallel_iterations, maximum_iterations=time_steps,
        swap_memory=swap_memory)
    final_outputs = []
    for ta, size in zip(output_final_ta, flat_output_size):
        out = ta.stack()
        out._shape = TensorShape([const_time_steps, const_batch_size]).concatenate(
            TensorShape(_flatten(size)))
        final_outputs.append(out)
    outputs = _pack(cell.output_size, final_outputs) \
        if isinstance(cell.output_size, (list, tuple)) else final_outputs[0]
    return outputs, final_state


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None):
    """The cell built once per element of the list ``inputs`` (one ``[batch,
    depth]`` tensor per time step): returns ``(outputs list, final_state)``.
    With ``sequence_length``, each step is a ``tf.cond`` that skips the cell
    once every sequence has ended, and copies states through per entry."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with variable_scope(scope or "rnn") as varscope:
        first = convert_to_tensor(_flatten(inputs[0])[0])
        batch_size = first.shape[0].value
        if batch_size is None:
            batch_size = array_ops.shape(first)[0]
        if initial_state is not None:
            state = initial_state
        else:
            if dtype is None:
                raise ValueError("If no initial_state is provided, dtype must be specified")
            state = cell.zero_state(batch_size, dtype)
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, dtypes.int32,
                                            name="sequence_length")
            min_length = reduction_ops.reduce_min(sequence_length)
            max_length = reduction_ops.reduce_max(sequence_length)
            state_dtype = _state_dtype(dtype, state)
            zero_output = [array_ops.zeros([batch_size] + _flatten(size), dtype=state_dtype)
                           if isinstance(batch_size, int) else
                           array_ops.zeros(array_ops.stack([batch_size] + _flatten(size)),
                                           dtype=state_dtype)
                           for size in _flatten(cell.output_size)]
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            if sequence_length is None:
                output, state = cell(input_, state)
            else:
                output, state = _rnn_step(time, sequence_length, min_length, max_length,
                                          zero_output, state, lambda x=input_, s=state:
                                          cell(x, s), cell.output_size)
            outputs.append(output)
        return outputs, state


def _rnn_step(time, sequence_length, min_length, max_length, zero_output, state, call_cell,
              output_size):
    """One ``static_rnn`` step with sequence lengths: past ``max_length`` the cell
    does not run (zeros, state kept); between ``min_length`` and ``max_length``
    it runs and the ended entries are copied through."""
    flat_state = _flatten(state)
    time_t = array_ops.constant(time, dtypes.int32)

    def copy_through():
        output, new_state = call_cell()
        flat_out = [_copy_through(time_t, sequence_length, z, o)
                    for z, o in zip(zero_output, _flatten(output))]
        flat_new = [_copy_through(time_t, sequence_length, s, n)
                    for s, n in zip(flat_state, _flatten(new_state))]
        return flat_out + flat_new

    def copy_all():
        output, new_state = call_cell()
        return _flatten(output) + _flatten(new_state)

    def skip():
        return list(zero_output) + [array_ops.identity(s) for s in flat_state]

    flat = cond(time_t >= max_length, skip,
                lambda: cond(time_t < min_length, copy_all, copy_through))
    n_out = len(zero_output)
    output = _pack(output_size, flat[:n_out]) if isinstance(output_size, (list, tuple)) \
        else flat[0]
    new_state = _pack(state, flat[n_out:]) if isinstance(state, (list, tuple)) \
        else flat[n_out]
    return output, new_state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """A forward ``dynamic_rnn`` over the inputs and a backward one over the
    inputs reversed (each sequence within its own length): returns
    ``((output_fw, output_bw), (state_fw, state_bw))``, both outputs in time
    order, in the scopes ``bidirectional_rnn/fw`` and ``bidirectional_rnn/bw``."""
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length, initial_state_fw, dtype,
                parallel_iterations, swap_memory, time_major, scope=fw_scope)
        time_axis, batch_axis = (0, 1) if time_major else (1, 0)

        def reverse(x):
            if sequence_length is not None:
                return array_ops.reverse_sequence(x, sequence_length, seq_axis=time_axis,
                                                  batch_axis=batch_axis)
            return array_ops.reverse(x, axis=[time_axis])
        with variable_scope("bw") as bw_scope:
            flat = [reverse(convert_to_tensor(x)) for x in _flatten(inputs)]
            inputs_reverse = _pack(inputs, flat) if isinstance(inputs, (list, tuple)) \
                else flat[0]
            tmp, state_bw = dynamic_rnn(
                cell_bw, inputs_reverse, sequence_length, initial_state_bw, dtype,
                parallel_iterations, swap_memory, time_major, scope=bw_scope)
    output_bw = _pack(tmp, [reverse(o) for o in _flatten(tmp)]) \
        if isinstance(tmp, (list, tuple)) else reverse(tmp)
    return (output_fw, output_bw), (state_fw, state_bw)


__all__ = ["dynamic_rnn", "static_rnn", "bidirectional_dynamic_rnn"]
