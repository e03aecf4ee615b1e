"""The remapper: Conv2D or MatMul -> bias -> Relu becomes one fused kernel.

``tf.layers.conv2d(x, 32, 5, activation=tf.nn.relu)`` is three ops. Run one
by one, the BiasAdd reads the convolution's whole output back from memory and
writes a second copy, and the Relu a third: for the CNN benchmark's first
layer, two extra trips through 6.4 MB per step, and two more nodes to
schedule. A dense layer (``tf.matmul(x, w) + b``, then ``tf.nn.relu``) is the
same with a matrix product. TF's graph optimizer has a pass for this, the
*remapper* (grappler's ``remapper.cc``), which replaces the three with one
``_FusedConv2D`` or ``_FusedMatMul`` node. minitf does the same for CPU
plans: the fused kernel adds the bias and applies the ReLU to the output rows
right after the product that made them, while they are still in the cache
(``conv2d(..., bias=, relu=)`` per chunk of images, ``bias_relu`` after a
matrix product, in minitf/kernels/cpu)::

    for each chunk of images:                 # (over the kernel's threads)
        rows = im2col(chunk) @ w              # the convolution
        rows += bias                          # BiasAdd, in place
        rows = rows if rows > 0 else 0        # Relu (NaN stays NaN), in place

The values are the same to the bit: the same float operations in the same
order, only without the round trips through memory.

What fuses: a Conv2D (NHWC) or a MatMul on a CPU device, float32 or float64,
whose only reader adds a bias (a BiasAdd, NHWC, or an AddV2/Add whose other
input is a vector, static shape ``[n]``), same dtype, same device, optionally
followed by a Relu that is the only reader of the sum. The product's and the
sum's outputs must not be fetched or fed, and none of the ops may wait for
another or be waited for (a fused op has no moment of its own). The fused
node computes the last op's output under its name; the trace lists each
member with ``[fused: Conv2D+BiasAdd+Relu]``, as for fusion.py's chains. If
at run time the bias is not a vector of the output's channels (a shape the
graph left open), the ops run one by one instead, with their own errors.

It runs before fusion.py, under the same switch (``fuse_elementwise``,
``opt_level=L0`` or ``MINITF_FUSION=0`` turn both off).
"""

from minitf.kernels.registry import backend
from minitf.ops.conv_ops import fused_conv2d_kernel
from minitf.ops.math_ops import fused_matmul_kernel
from minitf.runtime.fusion import readers
from minitf.runtime.node import Node

DTYPES = ("float32", "float64")
#: The ops a fused kernel starts with, and the ops that add a bias after them.
HEADS = ("Conv2D", "MatMul")
BIAS_OPS = ("BiasAdd", "AddV2", "Add")


def _plain(s, op_type):
    """Whether plan node ``s`` is an ordinary, unfused, CPU ``op_type`` node."""
    op = s.op
    return (op.type == op_type and s.members is None and not s.folded
            and s.device.device_type == "CPU" and not s.control_inputs
            and (op_type not in ("Conv2D", "BiasAdd") or op.get_attr("data_format") == "NHWC")
            and op._attrs.get("T") is not None and op.get_attr("T").base_dtype.name in DTYPES)


def _bias_side(s, head_slot):
    """Which input of bias node ``s`` is the bias (the other reads the head), or
    None: BiasAdd's second; for AddV2, the input that is a vector (static shape
    ``[n]``) while the head's output has two or more dimensions."""
    if s.op.type == "BiasAdd":
        return 1 if s.inputs[0] == head_slot else None
    for side in (0, 1):
        if s.inputs[1 - side] == head_slot and s.inputs[side] != head_slot:
            bias = s.op._inputs[side].shape
            head = s.op._inputs[1 - side].shape
            if bias.ndims == 1 and head.ndims is not None and head.ndims >= 2:
                return side
    return None


def remap(nodes, fetch_slots, feeds):
    """Return ``nodes`` with every Conv2D or MatMul -> bias (-> Relu) replaced by one node."""
    uses, control_targets = readers(nodes, fetch_slots)
    producer = {}
    for s in nodes:
        producer[s.out_base] = s
    fed = set(feeds)

    def only_reader(s, reader):
        return (uses.get(s.out_base) == 1 and s.op not in control_targets
                and s.device is reader.device and s.op._outputs[0] not in fed
                and s.op.get_attr("T") == reader.op.get_attr("T"))

    chains = {}          # tail node -> (head, bias op, bias side[, relu])
    for s in nodes:
        if not any(_plain(s, t) for t in BIAS_OPS):
            continue
        for slot in s.inputs[:2]:
            head = producer.get(slot)
            if head is not None and any(_plain(head, t) for t in HEADS) \
                    and only_reader(head, s):
                side = _bias_side(s, head.out_base)
                if side is not None:
                    chains[s] = (head, s, side)
                    break
    for s in nodes:
        if _plain(s, "Relu"):
            bias_add = producer.get(s.inputs[0])
            if bias_add in chains and only_reader(bias_add, s):
                chains[s] = chains.pop(bias_add) + (s,)
    if not chains:
        return nodes
    # (the chain's last op is its tail, whose output the fused node computes)
    inside = {id(m) for chain in chains.values() for m in _members(chain)[:-1]}
    out = []
    for s in nodes:
        if id(s) in inside:
            continue                              # computed by the fused node
        chain = chains.get(s)
        out.append(_fused_node(chain) if chain is not None else s)
    return out


def _members(chain):
    """The nodes of ``chain`` = (head, bias op, bias side[, relu]), in order."""
    return (chain[0], chain[1]) + tuple(chain[3:])


def _fused_node(chain):
    head, bias_add, side = chain[0], chain[1], chain[2]
    tail = _members(chain)[-1]
    inputs = [head.inputs[0], head.inputs[1], bias_add.inputs[side]]
    deref = tuple(head.deref) + tuple(2 for i in bias_add.deref if i == side)
    kernel = FusedKernel(chain)
    node = Node(tail.op, kernel.compute, tail.device, inputs, deref, tail.out_base, False)
    node.control_inputs = ()           # (no member waits for anything)
    node.members = tuple(s.op for s in kernel.members)
    node.expensive = True
    return node


class FusedKernel:
    """The compute function of a fused node (a convolution or a matrix product,
    its bias and its Relu), with its fallback."""

    def __init__(self, chain):
        self.members = _members(chain)
        self.side = chain[2]
        self.relu = len(chain) == 4
        make = fused_conv2d_kernel if chain[0].op.type == "Conv2D" else fused_matmul_kernel
        self.fused = make(chain[0].op, backend("cpu"))
        self.last_shapes = {}

    def compute(self, ctx, inputs):
        a, b, bias = inputs
        if (getattr(bias, "ndim", None) != 1 or getattr(b, "ndim", None) not in (2, 4)
                or getattr(a, "ndim", None) != b.ndim or bias.dtype != b.dtype
                or a.dtype != b.dtype):
            return self._fallback(ctx, inputs)
        n = b.shape[3] if b.ndim == 4 else (
            b.shape[0] if self.members[0].op.get_attr("transpose_b") else b.shape[1])
        if bias.shape[0] != n:
            return self._fallback(ctx, inputs)
        y = self.fused(ctx, a, b, bias, self.relu)
        if ctx.step.trace is not None:
            # what the trace reports for the members' outputs (never materialised)
            self.last_shapes = {s.op: y.shape for s in self.members[:-1]}
        return [y]

    def _fallback(self, ctx, inputs):
        a, b, bias = inputs
        head, bias_add = self.members[0], self.members[1]
        y = head.compute(ctx, [a, b])[0]
        self.last_shapes = {head.op: y.shape}
        y = bias_add.compute(ctx, [y, bias] if self.side == 1 else [bias, y])[0]
        self.last_shapes[bias_add.op] = y.shape
        if self.relu:
            y = self.members[2].compute(ctx, [y])[0]
        return [y]
