"""Optimizer updates on the GPU: elementwise, in place, one thread per element.

Same grid-stride layout as :mod:`.elementwise`. The scalars (learning rate,
decay rates...) are kernel arguments; the variable and its slots (momentum
accumulators, Adam's moments) are updated where they live, so a training step
on a GPU never moves a weight to the host. Formulas are TF's ``Apply*`` ops.
"""

import math

from numba import cuda


@cuda.jit(cache=True)
def sgd_kernel(var, alpha, delta):
    """var -= alpha * delta."""
    for i in range(cuda.grid(1), var.size, cuda.gridsize(1)):
        var[i] -= alpha * delta[i]


@cuda.jit(cache=True)
def momentum_kernel(var, accum, lr, grad, momentum, nesterov):
    """accum = accum * momentum + grad; var -= lr * accum (or Nesterov's step)."""
    for i in range(cuda.grid(1), var.size, cuda.gridsize(1)):
        a = accum[i] * momentum + grad[i]
        accum[i] = a
        if nesterov:
            var[i] -= grad[i] * lr + a * momentum * lr
        else:
            var[i] -= lr * a


@cuda.jit(cache=True)
def adam_kernel(var, m, v, lr_t, beta1, beta2, epsilon, grad, nesterov):
    """m += (g - m)(1 - b1); v += (g^2 - v)(1 - b2); var -= lr_t m / (sqrt(v) + eps).

    ``lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)`` is computed once
    by the caller."""
    for i in range(cuda.grid(1), var.size, cuda.gridsize(1)):
        g = grad[i]
        mi = m[i] + (g - m[i]) * (1 - beta1)
        vi = v[i] + (g * g - v[i]) * (1 - beta2)
        m[i] = mi
        v[i] = vi
        if nesterov:
            var[i] -= lr_t * (mi * beta1 + (1 - beta1) * g) / (math.sqrt(vi) + epsilon)
        else:
            var[i] -= lr_t * mi / (math.sqrt(vi) + epsilon)


@cuda.jit(cache=True)
def adagrad_kernel(var, accum, lr, grad, update_slots):
    """accum += g^2; var -= lr * g / sqrt(accum)."""
    for i in range(cuda.grid(1), var.size, cuda.gridsize(1)):
        g = grad[i]
        if update_slots:
            accum[i] += g * g
        var[i] -= lr * g / math.sqrt(accum[i])


@cuda.jit(cache=True)
def rmsprop_kernel(var, ms, mom, lr, rho, momentum, epsilon, grad):
    """ms += (g^2 - ms)(1 - rho); mom = mom * momentum + lr g / sqrt(ms + eps); var -= mom."""
    for i in range(cuda.grid(1), var.size, cuda.gridsize(1)):
        g = grad[i]
        s = ms[i] + (g * g - ms[i]) * (1 - rho)
        ms[i] = s
        mo = mom[i] * momentum + lr * g / math.sqrt(s + epsilon)
        mom[i] = mo
        var[i] -= mo
