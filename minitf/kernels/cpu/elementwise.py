"""The scalar functions the CPU backend needs of its own.

An elementwise *op*'s scalar function lives in its row of the op table
(``minitf/ops/math_ops.py``: ``_add``, ``_sigmoid``...), and
:func:`minitf.kernels.cpu.unary`/``binary`` turn it into a ufunc. The two
functions here serve kernels that are not one op's elementwise row: ``select``
(``tf.where``) and the accumulation of ``add_n``. :func:`.compile.ufunc_kernel`
makes each a numpy ufunc with ``numba.vectorize``, which writes the loop::

    # serial ufunc: numpy drives the loop (and the broadcasting)
    for i in range(out.size):
        out[i] = scalar_fn(x[i], y[i])

    # parallel ufunc (large contiguous inputs): each thread t does
    for i in range(t * n // T, (t + 1) * n // T):
        out[i] = scalar_fn(x[i], y[i])

Numba compiles a function per signature (``float32(float32, float32)``...).
Integer ``int32`` arithmetic is done in 64 bits by numba and wrapped back to
32 bits on store, which gives the same two's-complement results as TensorFlow.
"""


def add(x, y):
    return x + y


def select(cond, x, y):
    return x if cond else y
