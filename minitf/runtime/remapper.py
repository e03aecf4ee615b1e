"""The remapper: Conv2D -> BiasAdd (-> Relu) becomes one fused convolution.

``tf.layers.conv2d(x, 32, 5, activation=tf.nn.relu)`` is three ops. Run one
by one, the BiasAdd reads the convolution's whole output back from memory and
writes a second copy, and the Relu a third: for the CNN benchmark's first
layer, two extra trips through 6.4 MB per step. TF's graph optimizer has a
pass for this, the *remapper* (grappler's ``remapper.cc``), which replaces
the three with one ``_FusedConv2D`` node. minitf does the same for CPU plans:
the fused kernel (``conv2d(..., bias=, relu=)`` in minitf/kernels/cpu) adds
the bias and applies the ReLU to each chunk of output rows right after the
matrix product that made them, while they are still in the cache::

    for each chunk of images:                 # (over the kernel's threads)
        rows = im2col(chunk) @ w              # the convolution
        rows += bias                          # BiasAdd, in place
        rows = rows if rows > 0 else 0        # Relu (NaN stays NaN), in place

The values are the same to the bit: the same float operations in the same
order, only without the round trips through memory.

What fuses: a Conv2D on a CPU device (NHWC, float32 or float64) whose only
reader is a BiasAdd (NHWC, same dtype, same device), optionally followed by a
Relu that is the BiasAdd's only reader. The Conv2D's and BiasAdd's outputs
must not be fetched or fed, and none of the ops may have control inputs or be
a control input (a fused op has no moment of its own to wait for). The fused
node computes the last op's output under its name; the trace lists each
member with ``[fused: Conv2D+BiasAdd+Relu]``, as for fusion.py's chains. If
at run time the bias is not a vector of the output's channels (a shape the
graph left open), the ops run one by one instead, with their own errors.

It runs with fusion.py, under the same switch (``fuse_elementwise``,
``opt_level=L0`` or ``MINITF_FUSION=0`` turn both off).
"""

from minitf.kernels.registry import backend
from minitf.ops.conv_ops import fused_conv2d_kernel
from minitf.runtime.node import Node

DTYPES = ("float32", "float64")


def _plain(s, op_type):
    """Whether plan node ``s`` is an ordinary, unfused, CPU ``op_type`` node."""
    op = s.op
    return (op.type == op_type and s.members is None and not s.folded
            and s.device.device_type == "CPU" and not s.control_inputs
            and (op_type == "Relu" or op.get_attr("data_format") == "NHWC")
            and op._attrs.get("T") is not None and op.get_attr("T").base_dtype.name in DTYPES)


def fuse_convolutions(nodes, fetch_slots, feeds):
    """Return ``nodes`` with every Conv2D -> BiasAdd (-> Relu) replaced by one node."""
    uses = {}
    for s in nodes:
        for slot in s.inputs:
            uses[slot] = uses.get(slot, 0) + 1
    for slot in fetch_slots:
        uses[slot] = uses.get(slot, 0) + 2       # a fetched value must exist
    control_targets = {c for s in nodes for c in s.control_inputs}
    producer = {}
    for s in nodes:
        producer[s.out_base] = s
    fed = set(feeds)

    def only_reader(s, reader):
        return (uses.get(s.out_base) == 1 and s.op not in control_targets
                and s.device is reader.device and s.op._outputs[0] not in fed
                and s.op.get_attr("T") == reader.op.get_attr("T"))

    chains = {}          # tail node -> (conv, bias_add[, relu])
    for s in nodes:
        if not _plain(s, "BiasAdd"):
            continue
        conv = producer.get(s.inputs[0])
        if conv is None or not _plain(conv, "Conv2D") or not only_reader(conv, s):
            continue
        chains[s] = (conv, s)
    for s in nodes:
        if _plain(s, "Relu"):
            bias_add = producer.get(s.inputs[0])
            if bias_add in chains and only_reader(bias_add, s):
                chains[s] = chains.pop(bias_add) + (s,)
    if not chains:
        return nodes
    inside = {id(m) for chain in chains.values() for m in chain[:-1]}
    out = []
    for s in nodes:
        if id(s) in inside:
            continue                              # computed by the fused node
        chain = chains.get(s)
        out.append(_fused_node(chain) if chain is not None else s)
    return out


def _fused_node(chain):
    conv, bias_add = chain[0], chain[1]
    tail = chain[-1]
    inputs = [conv.inputs[0], conv.inputs[1], bias_add.inputs[1]]
    deref = tuple(conv.deref) + tuple(2 for i in bias_add.deref if i == 1)
    kernel = FusedConvolution(chain)
    node = Node(tail.op, kernel.compute, tail.device, inputs, deref, tail.out_base, False)
    node.control_inputs = ()           # (no member waits for anything)
    node.members = tuple(s.op for s in chain)
    node.expensive = True
    return node


class FusedConvolution:
    """The compute function of a fused convolution node, with its fallback."""

    def __init__(self, chain):
        self.chain = chain
        self.relu = len(chain) == 3
        self.fused = fused_conv2d_kernel(chain[0].op, backend("cpu"))
        self.last_shapes = {}

    def compute(self, ctx, inputs):
        x, w, bias = inputs
        if (getattr(bias, "ndim", None) != 1 or getattr(w, "ndim", None) != 4
                or bias.shape[0] != w.shape[3] or bias.dtype != w.dtype):
            return self._fallback(ctx, inputs)
        y = self.fused(ctx, x, w, bias, self.relu)
        if ctx.step.trace is not None:
            # what the trace reports for the members' outputs (never materialised)
            self.last_shapes = {s.op: y.shape for s in self.chain[:-1]}
        return [y]

    def _fallback(self, ctx, inputs):
        x, w, bias = inputs
        conv, bias_add = self.chain[0], self.chain[1]
        y = conv.compute(ctx, [x, w])[0]
        self.last_shapes = {conv.op: y.shape}
        y = bias_add.compute(ctx, [y, bias])[0]
        self.last_shapes[bias_add.op] = y.shape
        if self.relu:
            y = self.chain[2].compute(ctx, [y])[0]
        return [y]
