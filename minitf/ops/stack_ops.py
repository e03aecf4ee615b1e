"""Stacks: where a while loop's gradient finds the values of the forward iterations.

The backward loop of a ``tf.while_loop`` (ops/while_gradients.py) runs the
iterations in reverse and needs, in its iteration *k*, values that the forward
loop computed in its iteration *N-1-k*. The forward loop ``StackPushV2``\\ es
each such value, once per iteration, and the backward loop ``StackPopV2``\\ s
them: last pushed, first popped. ``StackV2`` makes the (empty) stack when the
step runs; it is a per-step resource, like a TensorArray.
"""

import threading

from minitf.framework import dtypes as _dtypes
from minitf.framework import errors
from minitf.framework.op_def import ANY_DTYPE, CONTROLS, NOT_DIFFERENTIABLE, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.core import convert_to_tensor, make_op


class Stack:
    """The resource: a list and a lock."""

    def __init__(self, name, max_size):
        self.name = name
        self.max_size = max_size
        self.items = []
        self.lock = threading.Lock()

    def push(self, value):
        with self.lock:
            if 0 <= self.max_size <= len(self.items):
                raise errors.InvalidArgumentError(
                    None, None, "Stack[%s] overflowed its max_size (%d)"
                    % (self.name, self.max_size))
            self.items.append(value)

    def pop(self):
        with self.lock:
            if not self.items:
                raise errors.InvalidArgumentError(
                    None, None, "Stack[%s] is empty." % self.name)
            return self.items.pop()


def _stack_kernel(op, backend):
    name = op._attrs.get("stack_name") or op.name

    def compute(ctx, inputs):
        return [Stack(name, int(inputs[0]))]
    return compute


def _push_kernel(op, backend):
    def compute(ctx, inputs):
        inputs[0].push(inputs[1])
        return [inputs[1]]
    return compute


def _pop_kernel(op, backend):
    return lambda ctx, inputs: [inputs[0].pop()]


_CPU = {"CPU": ANY_DTYPE}
STACK_V2 = declare(OpDef("StackV2", inputs=("max_size",), attrs=("elem_type", "stack_name"),
                         gradient=NOT_DIFFERENTIABLE, stateful=True, devices=_CPU,
                         kernel=_stack_kernel))
# A push in an iteration where its value is dead (the value sits in the untaken
# branch of a cond) still runs and saves DEAD, so that the pop of the mirrored
# backward iteration finds it and its gradient is skipped in turn. It is skipped
# only in the iteration that exits the loop (its control input is dead there).
STACK_PUSH_V2 = declare(OpDef("StackPushV2", inputs=("handle", "elem"),
                              attrs=("T", "swap_memory"), gradient=NOT_DIFFERENTIABLE,
                              stateful=True, dead_when=CONTROLS, devices=_CPU,
                              kernel=_push_kernel))
# So a pop may bring a dead value back (``makes_dead``), as a Switch does.
STACK_POP_V2 = declare(OpDef("StackPopV2", inputs=("handle",), attrs=("elem_type",),
                             gradient=NOT_DIFFERENTIABLE, stateful=True, makes_dead=True,
                             devices=_CPU, kernel=_pop_kernel))


def stack(elem_type, max_size=-1, name="Stack"):
    max_size = convert_to_tensor(max_size, dtype=_dtypes.int32)
    return make_op(STACK_V2, [max_size], [_dtypes.resource], [TensorShape([])], name=name,
                   attrs={"elem_type": elem_type, "stack_name": ""}).outputs[0]


def push(handle, value, swap_memory=False, name="StackPushV2"):
    return make_op(STACK_PUSH_V2, [handle, value], [value.dtype.base_dtype], [value.shape],
                   name=name, attrs={"T": value.dtype.base_dtype,
                                     "swap_memory": swap_memory}).outputs[0]


def pop(handle, elem_type, shape, name="StackPopV2"):
    return make_op(STACK_POP_V2, [handle], [elem_type], [shape], name=name,
                   attrs={"elem_type": elem_type}).outputs[0]
