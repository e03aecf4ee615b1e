"""Run every CUDA kernel against the numpy reference (run by test_cuda_parity.py
under NUMBA_ENABLE_CUDASIM=1, or by tests/benchmarks/gpu_check.py on a real GPU).

The cases come from the op table: every row whose kernel computes with a
backend and which declares GPU dtypes is run on each of its examples
(``minitf/kernels/examples.py``), for every GPU dtype it declares, through its
own kernel with the CUDA backend and with the reference. Under the simulator,
examples larger than the simulator's limit are left out (every GPU thread is a
Python thread); on a real GPU every example runs. Then special values,
broadcasting pairs, the optimizers' updates and TF's error messages.

Prints one ``FAIL ...`` line per mismatch and ``DONE <count>`` at the end."""

import sys
import warnings

import ml_dtypes
import numpy as np
from numba import config

from minitf.framework.errors import InvalidArgumentError
from minitf.framework.op_def import lookup
from minitf.kernels import cuda as K
from minitf.kernels import examples
from minitf.kernels import reference as ref
from minitf.kernels.registry import fits_the_simulator

warnings.simplefilter("ignore")
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12,
       np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 1.6e-2}
checked = 0
failures = []
covered = set()      # the rows whose examples ran on CUDA


def check(name, got, want, dtype, atol_scale=1):
    global checked
    checked += 1
    got = np.asarray(K.to_host(got))
    want = np.asarray(want)
    try:
        assert got.shape == want.shape, (got.shape, want.shape)
        if want.dtype == np.bool_ or want.dtype.kind in "iu":
            np.testing.assert_array_equal(got, want)
        else:
            tol = TOL[np.dtype(dtype)]
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                       rtol=tol, atol=tol * atol_scale)
    except AssertionError as e:
        failures.append("FAIL %s %s: %s" % (name, dtype, str(e).strip().splitlines()[-1:]))


def table_cases():
    """Every GPU row's examples, run through its kernel on CUDA and on the reference."""
    rows = examples.rows_with_examples("GPU")
    assert rows, "no row of the op table declares a GPU kernel"
    for row in rows:
        for case in examples.cases(row, "GPU"):
            if config.ENABLE_CUDASIM and not fits_the_simulator(case.op, case.inputs):
                continue
            want = examples.run(case, ref)
            got = examples.run(case, K)
            covered.add(row.name)
            k = max([x.shape[-1] for x in case.inputs if getattr(x, "ndim", 0) >= 1] + [1])
            for i, (g, w) in enumerate(zip(got, want)):
                check("%s/%d" % (case.label, i), g, np.asarray(w).astype(
                    np.asarray(w).dtype), case.dtype, atol_scale=25 * k)


def special_values():
    """NaN, infinities, signed zeros and halves through every GPU elementwise row."""
    for row in examples.rows_with_examples("GPU"):
        ew = row.elementwise
        if ew is None:
            continue
        for name in ("float32", "float64"):
            if name not in row.devices["GPU"]:
                continue
            x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 2.5, -2.5, 1e30], name)
            if len(ew.domain) == 1:
                check(row.name + "/special", K.unary(row, x), ref.unary(row, x), name)
            else:
                for xs, ys in (((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4)),
                               ((), (5,))):
                    (xlo, xhi), (ylo, yhi) = ew.domain
                    a = (xlo + (np.arange(int(np.prod(xs))) * 0.61) % (xhi - xlo)
                         ).reshape(xs).astype(name)
                    b = (ylo + (np.arange(int(np.prod(ys))) * 0.37 + 0.1) % (yhi - ylo)
                         ).reshape(ys).astype(name)
                    check("%s%s%s" % (row.name, xs, ys), K.binary(row, a, b),
                          ref.binary(row, a, b), name)


def optimizers():
    from numba import cuda
    rng = np.random.default_rng(0)
    for name in ("float32", "float64"):
        def values(positive=False):
            return rng.uniform(0.1 if positive else -3, 3, (5,)).astype(name)

        g, var, acc = values(), values(), values(True)

        def dev(x):
            return cuda.to_device(x.copy())

        def against_reference(update, *arrays_and_scalars, n_buffers, **kw):
            got = [dev(a) for a in arrays_and_scalars[:n_buffers]]
            want = [a.copy() for a in arrays_and_scalars[:n_buffers]]
            getattr(K, update)(*got, *arrays_and_scalars[n_buffers:], **kw)
            getattr(ref, update)(*want, *arrays_and_scalars[n_buffers:], **kw)
            for i, (gb, wb) in enumerate(zip(got, want)):
                check("%s/%d" % (update, i), gb, wb, name)

        against_reference("apply_gradient_descent", var, 0.1, g, n_buffers=1)
        for nesterov in (False, True):
            against_reference("apply_momentum", var, acc, 0.1, g, 0.9, n_buffers=2,
                              use_nesterov=nesterov)
        against_reference("apply_adam", var, values(), values(True), 0.9 ** 3, 0.999 ** 3,
                          0.01, 0.9, 0.999, 1e-7, g, n_buffers=3)
        against_reference("apply_adagrad", var, acc, 0.1, g, n_buffers=2)
        against_reference("apply_rms_prop", var, values(True), values(), 0.01, 0.9, 0.5,
                          1e-7, g, n_buffers=3)


def errors():
    global checked
    add = lookup("AddV2")
    cases = [
        (lambda: K.binary(add, np.ones((2, 3), np.float32), np.ones((4,), np.float32)),
         "Incompatible shapes: [2,3] vs. [4]"),
        (lambda: K.sparse_softmax_xent(np.ones((2, 3)), np.array([0, 3])),
         "Received a label value of 3 which is outside the valid range of [0, 3)."),
        (lambda: K.argmax(np.ones((2, 0), np.float32), 1, np.int64),
         "Reduction axis 1 is empty in shape [2,0]"),
    ]
    for fn, text in cases:
        checked += 1
        try:
            fn()
            failures.append("FAIL no error for %r" % text)
        except InvalidArgumentError as e:
            if not e.message.startswith(text):
                failures.append("FAIL message %r, wanted %r" % (e.message, text))


def main():
    table_cases()
    special_values()
    optimizers()
    errors()
    for line in failures:
        print(line)
    print("ROWS %s" % ",".join(sorted(covered)))
    print("DONE %d" % checked)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
