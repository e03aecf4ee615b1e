"""Kernels: the code that computes one op on concrete numpy arrays.

* :mod:`minitf.kernels.reference` -- plain numpy, one obvious line per op. It is
  slow on purpose and serves as the test oracle.
* :mod:`minitf.kernels.cpu` -- the same functions compiled with Numba (serial
  for small inputs, multi-threaded for large ones).
* ``registry`` maps (op type, device type, dtype) to one of these functions.

Every backend exposes the same narrow interface (``unary``, ``binary``,
``reduce``, ``matmul``, ``add_n``, ``cast``, ``select``, ``argmax``, ``argmin``,
``softmax``, ``log_softmax``, ``softmax_xent``, ``sparse_softmax_xent``), so a
test can run every op on every backend and compare the answers.
"""
