"""Kernels: the code that computes ops on concrete arrays, and the registry.

An op's kernel is part of its row of the op table (``minitf/ops/``): a function
``kernel(op, backend)`` that reads the op's attrs, checks its inputs the way
TF does, and computes with a *backend*, one of three modules with the same
narrow interface (``unary``, ``binary``, ``reduce``, ``matmul``, ``add_n``,
``cast``, ``select``, ``argmax``, ``argmin``, ``softmax``, ``log_softmax``,
``softmax_xent``, ``sparse_softmax_xent``, the ``apply_*`` updates, ``conv2d``
and its two gradients, ``max_pool``/``avg_pool`` and theirs, ``fused_batch_norm``
and its gradient, ``bias_add``):

* :mod:`minitf.kernels.cpu` -- Numba-compiled loop nests (serial for small
  inputs, multi-threaded for large ones);
* :mod:`minitf.kernels.cuda` -- numba.cuda kernels, for real GPUs and numba's
  CUDA simulator;
* :mod:`minitf.kernels.reference` -- plain numpy, one obvious line per op,
  slow on purpose: the test oracle.

So the tests run every row on every backend and compare the answers.
:mod:`minitf.kernels.registry` maps (op type, device type, dtype) to a kernel,
built from the op table, and :mod:`minitf.kernels.generated` imports kernels
written as source at run time (fused loops, per-op CUDA kernels) so that Numba
caches them.
"""

import numpy as np


def is_device_array(value):
    """True for a numba CUDA device array (a real GPU's, or the simulator's fake
    one): what a kernel gets on a real GPU, where a CPU kernel gets numpy arrays.
    Duck-typed, so asking never imports numba.cuda."""
    return hasattr(value, "copy_to_host") and not isinstance(value, np.ndarray)
