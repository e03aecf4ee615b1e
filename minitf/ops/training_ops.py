"""The ops optimizers use to update variables in place.

``ApplyGradientDescent(var, alpha, delta)`` and friends take the variable
(and its slot variables, e.g. Adam's ``m`` and ``v``) by *reference*: they
run on the variable's device and overwrite its buffer, so a parameter server
updates its own memory and only the gradient crosses the network. Each op
outputs the variable's reference, like ``Assign``.
"""

from minitf.ops.core import convert_to_tensor, make_op

# Which inputs are references is declared in minitf/ops/op_def.py, so that a
# server that never imports this module still runs these ops correctly.


def _apply(op_type, refs, values, name, **attrs):
    var = refs[0]
    dtype = var.dtype.base_dtype
    values = [convert_to_tensor(v, dtype=dtype) for v in values]
    attrs = dict(attrs, T=dtype)
    op = make_op(op_type, list(refs) + values, [var.dtype], [var.shape], name=name or op_type,
                 attrs=attrs)
    return op.outputs[0]


def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None):
    """``var -= alpha * delta``."""
    return _apply("ApplyGradientDescent", [var], [alpha, delta], name,
                  use_locking=use_locking)


def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False,
                   name=None):
    """``accum = accum * momentum + grad; var -= lr * accum`` (or Nesterov's)."""
    return _apply("ApplyMomentum", [var, accum], [lr, grad, momentum], name,
                  use_locking=use_locking, use_nesterov=use_nesterov)


def apply_adagrad(var, accum, lr, grad, use_locking=False, name=None):
    """``accum += grad ** 2; var -= lr * grad / sqrt(accum)``."""
    return _apply("ApplyAdagrad", [var, accum], [lr, grad], name, use_locking=use_locking)


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False,
                   name=None):
    """``ms = rho*ms + (1-rho)*grad**2; mom = momentum*mom + lr*grad/sqrt(ms+eps);
    var -= mom``."""
    return _apply("ApplyRMSProp", [var, ms, mom], [lr, rho, momentum, epsilon, grad], name,
                  use_locking=use_locking)


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_locking=False, use_nesterov=False, name=None):
    """Adam's update with bias correction through ``beta1_power``/``beta2_power``."""
    return _apply("ApplyAdam", [var, m, v],
                  [beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad], name,
                  use_locking=use_locking, use_nesterov=use_nesterov)
