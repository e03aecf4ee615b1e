"""The ops that carry a tensor between tasks: ``_Send``, ``_Recv`` and ``_Arg``.

Nobody writes these in a program: the partitioner (``minitf/distributed/
partition.py``) splices a ``_Send``/``_Recv`` pair into every edge that crosses
from one task to another, and an ``_Arg`` where a partition reads a fed value::

    task A:   producer --> _Send(key)          task B:   _Recv(key) --> consumer

Their attrs are TF's (``tensor_name`` is TF's name of the edge,
``edge_<id>_<producer>``; ``send_device``, ``recv_device``,
``client_terminated``, ``_src``, ``_dst``) plus minitf's rendezvous ``key``,
``tensor;send device;recv device``.

The kernels reach the step's *rendezvous* (``ctx.step.rendezvous``, see
``minitf/runtime/rendezvous.py``): ``_Send`` leaves its input there under the
key; ``_Recv`` asks for the key. The rendezvous of a server's worker knows the
other tasks: when the key's sender is another task it pulls the tensor from
that task's worker (a ``RecvTensor`` request); on the same task it waits
locally. A dead value (the untaken side of a ``tf.cond``) crosses as a marker.
"""

import time

import numpy as np

from minitf.framework import errors
from minitf.framework.op_def import DEAD, NOT_DIFFERENTIABLE, PASS, OpDef, declare
from minitf.ops.core import EVERY_DEVICE


def _key(key, ctx):
    """Inside a while loop, one key per frame and iteration (``key;frame:iter``)."""
    return key + ";" + ctx.frame_iter if ctx.frame_iter else key


def _send_kernel(op, backend):
    key = op.get_attr("key")

    def compute(ctx, inputs):
        ctx.step.rendezvous.send(ctx.step.step_id, _key(key, ctx), inputs[0])
        return []
    return compute


# A dead value is sent too (``dead_when=PASS``): the receiver learns the branch
# did not run instead of waiting for ever.
SEND = declare(OpDef("_Send", inputs=("tensor",),
                     attrs=("key", "tensor_name", "send_device", "recv_device",
                            "client_terminated", "_src", "_dst"),
                     gradient=NOT_DIFFERENTIABLE, dead_when=PASS, devices=EVERY_DEVICE,
                     kernel=_send_kernel))


class _RecvAttrs:
    """What a ``_Recv`` node says about its tensor, read once per plan."""

    def __init__(self, op):
        attrs = op._attrs
        self.key, self.send_task = attrs["key"], attrs["send_task"]
        self.send_device, self.recv_device = attrs["send_device"], attrs["recv_device"]
        self.tensor_name = self.key.split(";", 1)[0]   # "x:0" (the attr is TF's edge name)
        self.edge = attrs.get("tensor_name", "")
        self.send_incarnation = attrs.get("send_incarnation") or None
        self.aux = attrs.get("aux", False)  # part of a compressed tensor, counted with it
        self.orig_itemsize = 4 if attrs.get("orig_dtype") == "float32" else None

    def record(self, step, value, start):
        """Note the transfer in the step's trace (a traced step only)."""
        if step.trace is None or self.aux or value is DEAD:
            return
        asked = step.rendezvous.asked_micros(self.key)
        if asked is not None and asked < start:
            start = asked
        wire_bytes = 0 if value.dtype.kind == "O" else int(value.nbytes)
        if self.orig_itemsize is not None:  # compressed: bytes before and on the wire
            nbytes = value.size * self.orig_itemsize
            if value.dtype == np.uint8:
                wire_bytes += 8  # the int8 encoding's min and scale
        else:
            nbytes = wire_bytes
        step.trace.record_transfer(self.tensor_name, self.send_device, self.recv_device,
                                   nbytes, wire_bytes, start, time.time_ns() // 1000,
                                   self.edge)


def _recv_kernel(op, backend):
    recv = _RecvAttrs(op)

    def compute(ctx, inputs):
        step = ctx.step
        start = time.time_ns() // 1000
        value = step.rendezvous.receive(step, recv.send_task, _key(recv.key, ctx),
                                        recv.tensor_name, recv.send_incarnation)
        recv.record(step, value, start)
        return [value]
    return compute


def _recv_async_kernel(op):
    """Wait for the tensor without a thread when it comes to this task's
    rendezvous by itself (see Rendezvous.recv_async); a tensor that must be
    pulled from its sender one by one needs the blocking kernel. ``begin``
    returns what it waits for (for the scheduler's messages), or None."""
    recv = _RecvAttrs(op)

    def begin(ctx, inputs, finish):
        step = ctx.step
        key = _key(recv.key, ctx)
        if not step.rendezvous.receives_locally(recv.send_task, key):
            return None
        start = time.time_ns() // 1000

        def arrived(value, error):
            if error is None:
                recv.record(step, value, start)
                finish([value], None)
            else:
                finish(None, error)
        step.rendezvous.recv_async(step.step_id, key, arrived)
        return recv.tensor_name
    return begin


#: Blocking: it waits for the sender (honouring the step's deadline and
#: cancellation), and it may bring a dead value (``makes_dead``).
#: ``send_incarnation`` names the sending server process the master saw when
#: it registered the partition: a restarted sender refuses the receive.
RECV = declare(OpDef("_Recv", attrs=("key", "send_task", "send_device", "recv_device",
                                     "tensor_name", "T", "orig_dtype", "compression", "aux",
                                     "send_incarnation", "client_terminated", "_src", "_dst"),
                     gradient=NOT_DIFFERENTIABLE, blocking=True, makes_dead=True,
                     devices=EVERY_DEVICE, kernel=_recv_kernel,
                     async_kernel=_recv_async_kernel))


def _arg_kernel(op, backend):
    def compute(ctx, inputs):
        raise errors.InternalError(None, None, "feed %s was not passed to the partition"
                                   % op.name)
    return compute


#: A fed value of a partition: the executor puts the value in its slot, so the
#: kernel only runs (and fails) if a feed went missing.
ARG = declare(OpDef("_Arg", attrs=("T",), gradient=NOT_DIFFERENTIABLE, devices=EVERY_DEVICE,
                    kernel=_arg_kernel))
