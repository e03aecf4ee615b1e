"""Clipping: keep values, or whole gradients, within bounds.

Training code clips gradients so that one bad batch cannot throw the weights
far away. ``tf.clip_by_global_norm`` is the usual choice: it measures all the
gradients together as one long vector and, if that vector is longer than
``clip_norm``, scales *every* gradient by the same factor, which keeps the
update's direction::

    global_norm = sqrt(sum(sum(g ** 2) for g in grads))
    scale       = clip_norm / max(global_norm, clip_norm)    # <= 1
    clipped     = [g * scale for g in grads]

Each function is built from ordinary ops (as TensorFlow builds them), so the
gradients and placement of the clipped values follow from those ops.
"""

from minitf.framework.graph import Tensor
from minitf.ops import array_ops, math_ops, reduction_ops
from minitf.ops.core import constant, convert_to_tensor, name_scope

__all__ = ["clip_by_value", "clip_by_norm", "global_norm", "clip_by_global_norm"]


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """``min(max(t, clip_value_min), clip_value_max)``, elementwise."""
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        t = convert_to_tensor(t, name="t")
        t_min = math_ops.minimum(t, clip_value_max)
        return math_ops.maximum(t_min, clip_value_min, name=scope)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """``t`` scaled down so that its L2 norm (over ``axes``) is at most ``clip_norm``."""
    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t, name="t")
        l2sum = reduction_ops.reduce_sum(t * t, axes, keepdims=True)
        positive = math_ops.greater(l2sum, 0)
        # sqrt(0) has an infinite gradient: take it of 1 where the sum is 0.
        l2sum_safe = array_ops.where(positive, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where(positive, math_ops.sqrt(l2sum_safe), l2sum)
        clip = math_ops.cast(clip_norm, t.dtype)
        return array_ops.identity(t * clip / math_ops.maximum(l2norm, clip), name=scope)


def global_norm(t_list, name=None):
    """``sqrt(sum of every element squared)`` over all tensors of ``t_list``
    (None entries, e.g. missing gradients, are skipped)."""
    if isinstance(t_list, Tensor) or not hasattr(t_list, "__iter__"):
        raise TypeError("t_list should be a sequence")
    t_list = [t for t in t_list if t is not None]
    with name_scope(name, "global_norm", t_list) as scope:
        halves = []
        for i, t in enumerate(t_list):
            t = convert_to_tensor(t, name="t_%d" % i)
            halves.append(reduction_ops.reduce_sum(math_ops.square(t)) * 0.5)
        if not halves:
            return constant(0.0, name=scope)
        half_sum = reduction_ops.reduce_sum(array_ops.stack(halves))
        return math_ops.sqrt(half_sum * constant(2.0, dtype=half_sum.dtype), name=scope)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``(clipped list, global norm)``: every tensor times ``clip_norm / max(norm,
    clip_norm)``. None entries stay None, so it takes ``optimizer``'s gradients
    as they come."""
    if isinstance(t_list, Tensor) or not hasattr(t_list, "__iter__"):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    norm = use_norm if use_norm is not None else global_norm(t_list, "global_norm")
    with name_scope(name, "clip_by_global_norm", [t for t in t_list if t is not None]):
        clip = math_ops.cast(clip_norm, norm.dtype)
        scale = clip * math_ops.minimum(
            1.0 / norm, constant(1.0, dtype=norm.dtype) / clip)
        clipped = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            t = convert_to_tensor(t, name="t_%d" % i)
            s = math_ops.cast(scale, t.dtype)
            clipped.append(array_ops.identity(t * s, name="_clipped_%d" % i))
    return clipped, norm
