"""The ops optimizers use to update variables in place.

``ApplyGradientDescent(var, alpha, delta)`` and friends take the variable
(and its slot variables, e.g. Adam's ``m`` and ``v``) by *reference*: they
run on the variable's device and overwrite its buffer, so a parameter server
updates its own memory and only the gradient crosses the network. Each op
outputs the variable's reference, like ``Assign``.

One kernel serves every Apply op: it checks the gradient's shape, holds the
variable's lock when the op asked for ``use_locking``, calls the backend's
update on the buffers (``minitf/kernels/cpu/optimizers.py`` on a CPU, the CUDA
kernels on a real GPU) and counts how stale the step's read of the variable was.

With ``use_locking`` the update holds the variable's lock, so concurrent
updates from several workers are serialised; without it (TF's default) they
may interleave, which is the "Hogwild" behaviour asynchronous training has in
TF too.
"""

import contextlib

from minitf.framework import errors
from minitf.framework.op_def import BACKEND, NOT_DIFFERENTIABLE, OpDef, declare
from minitf.ops.core import convert_to_tensor, make_op
from minitf.ops.elementwise import FLOAT_NAMES


def _buffer(ref):
    if ref.value is None:
        raise errors.FailedPreconditionError(
            None, None, "Attempting to use uninitialized value %s" % ref.name)
    return ref._buffer


def _check_same_shape(var, grad, what):
    if tuple(var.shape) != tuple(grad.shape):
        raise errors.InvalidArgumentError(
            None, None, "var and %s do not have the same shape[%s] [%s]"
            % (what, ",".join(map(str, var.shape)), ",".join(map(str, grad.shape))))


def _apply_kernel(update_name, refs, grad_what="grad", grad_index=-1, **options):
    """The kernel of one Apply op: ``refs`` inputs are variables (by reference),
    the rest values (the gradient at ``grad_index``);
    ``backend.<update_name>(*buffers, *values, **options)`` updates the buffers
    in place. ``options`` maps keyword -> (attr, default)."""
    def kernel(op, backend):
        update = getattr(backend, update_name)
        attrs = op._attrs
        kwargs = {k: bool(attrs.get(attr, default)) for k, (attr, default) in options.items()}
        locking = bool(attrs.get("use_locking", False))

        def compute(ctx, inputs):
            ref = inputs[0]
            with (ref.lock if locking else contextlib.nullcontext()):
                buffers = [_buffer(r) for r in inputs[:refs]]
                _check_same_shape(buffers[0], inputs[grad_index], grad_what)
                update(*buffers, *inputs[refs:], **kwargs)
                # How many other updates happened since this step read the
                # variable (the executor remembered the version it read).
                ref.record_update(ctx.step.read_versions.get(ref))
            return [ref]
        return compute
    return kernel


def _row(name, kernel, inputs, refs, attrs=("T", "use_locking")):
    # On a GPU the variable and its slots live in device memory: the CUDA
    # kernels update them there (kernel_reads=BACKEND).
    return declare(OpDef(
        name, inputs=inputs, attrs=attrs, gradient=NOT_DIFFERENTIABLE,
        ref_inputs=tuple(range(refs)), stateful=True,
        devices={"CPU": FLOAT_NAMES, "GPU": FLOAT_NAMES}, kernel=kernel,
        kernel_reads=BACKEND))


APPLY_GRADIENT_DESCENT = _row(
    "ApplyGradientDescent", _apply_kernel("apply_gradient_descent", 1, "delta"),
    ("var", "alpha", "delta"), 1)
APPLY_MOMENTUM = _row(
    "ApplyMomentum",
    _apply_kernel("apply_momentum", 2, grad_index=3, use_nesterov=("use_nesterov", False)),
    ("var", "accum", "lr", "grad", "momentum"), 2, ("T", "use_locking", "use_nesterov"))
APPLY_ADAGRAD = _row(
    "ApplyAdagrad", _apply_kernel("apply_adagrad", 2, update_slots=("update_slots", True)),
    ("var", "accum", "lr", "grad"), 2, ("T", "use_locking", "update_slots"))
APPLY_RMS_PROP = _row(
    "ApplyRMSProp", _apply_kernel("apply_rms_prop", 3),
    ("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"), 3)
APPLY_ADAM = _row(
    "ApplyAdam", _apply_kernel("apply_adam", 3, use_nesterov=("use_nesterov", False)),
    ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon",
     "grad"), 3, ("T", "use_locking", "use_nesterov"))


def _apply(row, refs, values, name, **attrs):
    var = refs[0]
    dtype = var.dtype.base_dtype
    values = [convert_to_tensor(v, dtype=dtype) for v in values]
    attrs = dict(attrs, T=dtype)
    op = make_op(row, list(refs) + values, [var.dtype], [var.shape], name=name or row.name,
                 attrs=attrs)
    return op.outputs[0]


def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None):
    """``var -= alpha * delta``."""
    return _apply(APPLY_GRADIENT_DESCENT, [var], [alpha, delta], name,
                  use_locking=use_locking)


def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False,
                   name=None):
    """``accum = accum * momentum + grad; var -= lr * accum`` (or Nesterov's)."""
    return _apply(APPLY_MOMENTUM, [var, accum], [lr, grad, momentum], name,
                  use_locking=use_locking, use_nesterov=use_nesterov)


def apply_adagrad(var, accum, lr, grad, use_locking=False, name=None):
    """``accum += grad ** 2; var -= lr * grad / sqrt(accum)``."""
    return _apply(APPLY_ADAGRAD, [var, accum], [lr, grad], name, use_locking=use_locking)


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False,
                   name=None):
    """``ms = rho*ms + (1-rho)*grad**2; mom = momentum*mom + lr*grad/sqrt(ms+eps);
    var -= mom``."""
    return _apply(APPLY_RMS_PROP, [var, ms, mom], [lr, rho, momentum, epsilon, grad], name,
                  use_locking=use_locking)


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_locking=False, use_nesterov=False, name=None):
    """Adam's update with bias correction through ``beta1_power``/``beta2_power``."""
    return _apply(APPLY_ADAM, [var, m, v],
                  [beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad], name,
                  use_locking=use_locking, use_nesterov=use_nesterov)
