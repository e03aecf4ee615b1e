"""The optimizers' in-place updates (TF's ``Apply*`` kernels) on host arrays.

Each function overwrites the variable's buffer (and its slots': Momentum's
accumulator, Adam's ``m`` and ``v``) in place, exactly as TF's CPU kernels
do, so a parameter server updates its own memory and only the gradient
crossed the network. The arithmetic is numpy on whole arrays: each update is
a handful of passes over memory, which numpy already runs at memory speed.
The order of operations follows TF's (float32 rounding makes it matter).

``lr`` and the other hyperparameters arrive as 0-d arrays; the row's kernel
in ``minitf/ops/training_ops.py`` holds the locks and checks the shapes.
"""

import numpy as np

__all__ = ["apply_gradient_descent", "apply_momentum", "apply_adagrad", "apply_rms_prop",
           "apply_adam"]


def _scalar(x):
    return x.item() if isinstance(x, np.ndarray) else x


def apply_gradient_descent(var, alpha, delta):
    """``var -= alpha * delta``."""
    var -= (_scalar(alpha) * delta).astype(var.dtype, copy=False)
    return var


def apply_momentum(var, accum, lr, grad, momentum, use_nesterov=False):
    """``accum = accum * momentum + grad; var -= lr * accum`` (or Nesterov's)."""
    lr, momentum = _scalar(lr), _scalar(momentum)
    accum *= momentum
    accum += grad
    if use_nesterov:
        var -= (grad * lr + accum * (momentum * lr)).astype(var.dtype, copy=False)
    else:
        var -= (accum * lr).astype(var.dtype, copy=False)
    return var


def apply_adagrad(var, accum, lr, grad, update_slots=True):
    """``accum += grad ** 2; var -= lr * grad / sqrt(accum)``."""
    lr = _scalar(lr)
    if update_slots:
        accum += grad * grad
    var -= (lr * grad / np.sqrt(accum)).astype(var.dtype, copy=False)
    return var


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad):
    """``ms = rho*ms + (1-rho)*grad**2; mom = momentum*mom + lr*grad/sqrt(ms+eps);
    var -= mom``, in TF's order: ``mom * momentum + rsqrt(ms + eps) * lr * grad``."""
    lr, rho, momentum, epsilon = map(_scalar, (lr, rho, momentum, epsilon))
    ms += (grad * grad - ms) * (1.0 - rho)
    mom *= momentum
    mom += ((1.0 / np.sqrt(ms + ms.dtype.type(epsilon))) * ms.dtype.type(lr)
            * grad).astype(mom.dtype, copy=False)
    var -= mom
    return var


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_nesterov=False):
    """Adam with bias correction through ``beta1_power``/``beta2_power``:
    ``lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)``, then the moments and
    ``var -= lr_t * m / (sqrt(v) + epsilon)``."""
    b1p, b2p, lr, beta1, beta2, epsilon = map(_scalar, (beta1_power, beta2_power, lr, beta1,
                                                        beta2, epsilon))
    lr_t = lr * np.sqrt(1.0 - b2p) / (1.0 - b1p)
    m += (grad - m) * (1.0 - beta1)
    v += (grad * grad - v) * (1.0 - beta2)
    step = (m * beta1 + grad * (1.0 - beta1)) if use_nesterov else m
    var -= (lr_t * step / (np.sqrt(v) + epsilon)).astype(var.dtype, copy=False)
    return var
