"""CPU kernels of the optimizer update ops: in-place arithmetic on the
variable's own buffer (and its slots'), as TF's ``Apply*`` kernels do.

With ``use_locking`` the update holds the variable's lock, so concurrent
updates from several workers are serialised; without it (TF's default) they
may interleave, which is the "Hogwild" behaviour asynchronous training has in
TF too.
"""

import contextlib

import numpy as np

from minitf.framework import errors
from minitf.kernels.registry import register

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _buffer(ref):
    if ref.value is None:
        raise errors.FailedPreconditionError(
            None, None, "Attempting to use uninitialized value %s" % ref.name)
    return ref._buffer


def _check_same_shape(var, grad, what="grad"):
    if var.shape != grad.shape:
        raise errors.InvalidArgumentError(
            None, None, "var and %s do not have the same shape[%s] [%s]"
            % (what, ",".join(map(str, var.shape)), ",".join(map(str, grad.shape))))


def _updating(op, refs):
    """Hold the first variable's lock when the op asked for locking."""
    if op.get_attr("use_locking"):
        return refs[0].lock
    return contextlib.nullcontext()


def _read_version(ctx, ref):
    """The version of ``ref`` this step read (see executor._run_one)."""
    return ctx.step.extra.get("read_versions", {}).get(ref)


def _scalar(x):
    return x.item() if isinstance(x, np.ndarray) else x


@register("ApplyGradientDescent", ("CPU",), dtypes=_FLOATS)
def _gradient_descent(op, device):
    def compute(ctx, inputs):
        ref, alpha, delta = inputs
        with _updating(op, [ref]):
            var = _buffer(ref)
            _check_same_shape(var, delta, "delta")
            var -= (_scalar(alpha) * delta).astype(var.dtype, copy=False)
            ref.record_update(_read_version(ctx, ref))
        return [ref]
    return compute


@register("ApplyMomentum", ("CPU",), dtypes=_FLOATS)
def _momentum(op, device):
    nesterov = op.get_attr("use_nesterov")

    def compute(ctx, inputs):
        ref, acc_ref, lr, grad, momentum = inputs
        lr, momentum = _scalar(lr), _scalar(momentum)
        with _updating(op, [ref]):
            var, accum = _buffer(ref), _buffer(acc_ref)
            _check_same_shape(var, grad)
            accum *= momentum
            accum += grad
            if nesterov:
                var -= (grad * lr + accum * (momentum * lr)).astype(var.dtype, copy=False)
            else:
                var -= (accum * lr).astype(var.dtype, copy=False)
            ref.record_update(_read_version(ctx, ref))
        return [ref]
    return compute


@register("ApplyAdagrad", ("CPU",), dtypes=_FLOATS)
def _adagrad(op, device):
    def compute(ctx, inputs):
        ref, acc_ref, lr, grad = inputs
        lr = _scalar(lr)
        with _updating(op, [ref]):
            var, accum = _buffer(ref), _buffer(acc_ref)
            _check_same_shape(var, grad)
            accum += grad * grad
            var -= (lr * grad / np.sqrt(accum)).astype(var.dtype, copy=False)
            ref.record_update(_read_version(ctx, ref))
        return [ref]
    return compute


@register("ApplyRMSProp", ("CPU",), dtypes=_FLOATS)
def _rmsprop(op, device):
    def compute(ctx, inputs):
        ref, ms_ref, mom_ref, lr, rho, momentum, epsilon, grad = inputs
        lr, rho, momentum, epsilon = map(_scalar, (lr, rho, momentum, epsilon))
        with _updating(op, [ref]):
            var, ms, mom = _buffer(ref), _buffer(ms_ref), _buffer(mom_ref)
            _check_same_shape(var, grad)
            ms += (grad * grad - ms) * (1.0 - rho)
            mom *= momentum
            # TF's order of operations (float32 rounding makes it matter):
            # mom = mom * momentum + rsqrt(ms + epsilon) * lr * grad
            mom += ((1.0 / np.sqrt(ms + ms.dtype.type(epsilon))) * ms.dtype.type(lr)
                    * grad).astype(mom.dtype, copy=False)
            var -= mom
            ref.record_update(_read_version(ctx, ref))
        return [ref]
    return compute


@register("ApplyAdam", ("CPU",), dtypes=_FLOATS)
def _adam(op, device):
    nesterov = op.get_attr("use_nesterov")

    def compute(ctx, inputs):
        ref, m_ref, v_ref, b1p, b2p, lr, beta1, beta2, epsilon, grad = inputs
        b1p, b2p, lr, beta1, beta2, epsilon = map(_scalar, (b1p, b2p, lr, beta1, beta2,
                                                            epsilon))
        with _updating(op, [ref]):
            var, m, v = _buffer(ref), _buffer(m_ref), _buffer(v_ref)
            _check_same_shape(var, grad)
            lr_t = lr * np.sqrt(1.0 - b2p) / (1.0 - b1p)
            m += (grad - m) * (1.0 - beta1)
            v += (grad * grad - v) * (1.0 - beta2)
            step = (m * beta1 + grad * (1.0 - beta1)) if nesterov else m
            var -= (lr_t * step / (np.sqrt(v) + epsilon)).astype(var.dtype, copy=False)
            ref.record_update(_read_version(ctx, ref))
        return [ref]
    return compute
