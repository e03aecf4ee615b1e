"""Run every CUDA kernel against the numpy reference (run by test_cuda_parity.py
under NUMBA_ENABLE_CUDASIM=1, or by tests/benchmarks/gpu_check.py on a real GPU).

Prints one ``FAIL ...`` line per mismatch and ``DONE <count>`` at the end."""

import sys
import warnings

import ml_dtypes
import numpy as np

from minitf.framework.errors import InvalidArgumentError
from minitf.kernels import cuda as K
from minitf.kernels import reference as ref

warnings.simplefilter("ignore")
DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16),
          np.dtype(ml_dtypes.bfloat16)]
TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12,
       np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 1.6e-2}
checked = 0
failures = []


def check(name, got, want, dtype):
    global checked
    checked += 1
    got = np.asarray(K.to_host(got))
    want = np.asarray(want)
    try:
        assert got.shape == want.shape, (got.shape, want.shape)
        if want.dtype == np.bool_ or want.dtype.kind in "iu":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                       rtol=TOL[dtype], atol=TOL[dtype])
    except AssertionError as e:
        failures.append("FAIL %s %s: %s" % (name, dtype, str(e).strip().splitlines()[-1:]))


def values(rng, shape, dtype, positive=False):
    x = rng.uniform(0.1 if positive else -3, 3, shape)
    return x.astype(dtype)


def main():
    rng = np.random.default_rng(0)
    for dtype in DTYPES:
        out_dtype = dtype if dtype in (np.float32, np.float64) else np.dtype(np.float32)
        for op in K.UNARY_OPS:
            x = values(rng, (3, 4), dtype, positive=op in ("Sqrt", "Rsqrt", "Log"))
            check(op, K.unary(op, x), ref.unary(op, x.astype(out_dtype)), dtype)
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 2.5, -2.5, 1e30], dtype)
        for op in K.UNARY_OPS:
            check(op + "/special", K.unary(op, special),
                  ref.unary(op, special.astype(out_dtype)), dtype)
        for op in K.BINARY_OPS:
            for xs, ys in (((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4)), ((), (5,))):
                x = values(rng, xs, dtype, positive=op == "Pow")
                y = values(rng, ys, dtype, positive=op in ("Pow",))
                check("%s%s%s" % (op, xs, ys), K.binary(op, x, y),
                      ref.binary(op, x.astype(out_dtype), y.astype(out_dtype)), dtype)
        native = dtype in (np.float32, np.float64)
        # (reductions are the slowest kernels to simulate: fewer cases for the
        # half types, which are widened to float32 before the same kernel runs)
        for op in K.REDUCE_OPS if native else ("Sum", "Max"):
            x = values(rng, (2, 3, 4), dtype)
            for axes, keep in (((1,), False), ((0, 2), True), ((0, 1, 2), False)):
                check("%s%s" % (op, axes), K.reduce(op, x, axes, keep),
                      ref.reduce(op, x.astype(out_dtype), axes, keep), dtype)
            if not native:
                continue
            big = values(rng, (2100,), dtype)            # several blocks per output
            check(op + "/big", K.reduce(op, big, (0,), False),
                  ref.reduce(op, big.astype(out_dtype), (0,), False), dtype)
            empty = np.zeros((2, 0), dtype)
            check(op + "/empty", K.reduce(op, empty, (1,), False),
                  ref.reduce(op, empty.astype(out_dtype), (1,), False), dtype)
        nan = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0]], dtype)
        for op in ("Max", "Min", "Sum") if native else ():
            check(op + "/nan", K.reduce(op, nan, (1,), False),
                  ref.reduce(op, nan.astype(out_dtype), (1,), False), dtype)
        for find_max, fn in ((True, ref.argmax), (False, ref.argmin)):
            x = values(rng, (3, 4, 5), dtype)
            for axis in (0, 1, 2):
                check("Arg%s" % axis, K.arg_reduce(find_max, x, axis, np.int64),
                      fn(x.astype(out_dtype), axis, np.int64), dtype)
        for (sa, sb, ta, tb) in (((5, 7), (7, 3), False, False), ((7, 5), (7, 3), True, False),
                                 ((5, 7), (3, 7), False, True), ((2, 5, 7), (7, 3), False, False),
                                 ((2, 1, 5, 7), (3, 7, 2), False, False),
                                 ((33, 17), (17, 20), False, False)):
            a, b = values(rng, sa, dtype), values(rng, sb, dtype)
            check("MatMul%s%s" % (sa, sb), K.matmul(a, b, ta, tb),
                  ref.matmul(a.astype(out_dtype), b.astype(out_dtype), ta, tb), dtype)
        x = values(rng, (4, 6), dtype)
        check("Softmax", K.softmax(x), ref.softmax(x.astype(out_dtype)), dtype)
        check("LogSoftmax", K.log_softmax(x), ref.log_softmax(x.astype(out_dtype)), dtype)
        labels = ref.softmax(values(rng, (4, 6), np.float64)).astype(dtype)
        loss, bp = K.softmax_xent(x, labels)
        rl, rb = ref.softmax_xent(x.astype(out_dtype), labels.astype(out_dtype))
        check("Xent/loss", loss, rl, dtype)
        check("Xent/backprop", bp, rb, dtype)
        sparse = np.array([0, 5, 2, 3])
        loss, bp = K.sparse_softmax_xent(x, sparse)
        rl, rb = ref.sparse_softmax_xent(x.astype(out_dtype), sparse)
        check("SparseXent/loss", loss, rl, dtype)
        check("SparseXent/backprop", bp, rb, dtype)
        xs = [values(rng, (3, 2), dtype) for _ in range(3)]
        check("AddN", K.add_n(xs), ref.add_n([v.astype(out_dtype) for v in xs]), dtype)
        c = rng.random((3, 2)) > 0.5
        check("Select", K.select(c, xs[0], xs[1]),
              ref.select(c, xs[0].astype(out_dtype), xs[1].astype(out_dtype)), dtype)
        optimizers(rng, dtype, out_dtype)
    errors()
    for line in failures:
        print(line)
    print("DONE %d" % checked)
    return 1 if failures else 0


def optimizers(rng, dtype, out_dtype):
    from numba import cuda
    g = values(rng, (5,), out_dtype)
    var = values(rng, (5,), out_dtype)
    acc = values(rng, (5,), out_dtype, positive=True)

    def dev(x):
        return cuda.to_device(x.copy())
    d = dev(var)
    K.apply_gradient_descent(d, 0.1, g)
    check("ApplyGradientDescent", d, var - 0.1 * g, dtype)
    for nesterov in (False, True):
        d, a = dev(var), dev(acc)
        K.apply_momentum(d, a, 0.1, g, 0.9, nesterov)
        a_new = acc * 0.9 + g
        want = var - (g * 0.1 + a_new * 0.9 * 0.1 if nesterov else 0.1 * a_new)
        check("ApplyMomentum", d, want, dtype)
        check("ApplyMomentum/accum", a, a_new, dtype)
    m, v = values(rng, (5,), out_dtype), values(rng, (5,), out_dtype, positive=True)
    d, dm, dv = dev(var), dev(m), dev(v)
    K.apply_adam(d, dm, dv, 0.9 ** 3, 0.999 ** 3, 0.01, 0.9, 0.999, 1e-7, g)
    lr_t = 0.01 * np.sqrt(1 - 0.999 ** 3) / (1 - 0.9 ** 3)
    m2 = m + (g - m) * 0.1
    v2 = v + (g * g - v) * (1 - 0.999)
    check("ApplyAdam", d, var - lr_t * m2 / (np.sqrt(v2) + 1e-7), dtype)
    d, a = dev(var), dev(acc)
    K.apply_adagrad(d, a, 0.1, g)
    check("ApplyAdagrad", d, var - 0.1 * g / np.sqrt(acc + g * g), dtype)
    ms, mom = values(rng, (5,), out_dtype, positive=True), values(rng, (5,), out_dtype)
    d, dms, dmom = dev(var), dev(ms), dev(mom)
    K.apply_rms_prop(d, dms, dmom, 0.01, 0.9, 0.5, 1e-7, g)
    ms2 = ms + (g * g - ms) * 0.1
    mom2 = mom * 0.5 + 0.01 * g / np.sqrt(ms2 + 1e-7)
    check("ApplyRMSProp", d, var - mom2, dtype)


def errors():
    global checked
    cases = [
        (lambda: K.binary("AddV2", np.ones((2, 3), np.float32), np.ones((4,), np.float32)),
         "Incompatible shapes: [2,3] vs. [4]"),
        (lambda: K.matmul(np.ones((2, 3)), np.ones((4, 2))),
         "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,2]"),
        (lambda: K.sparse_softmax_xent(np.ones((2, 3)), np.array([0, 3])),
         "Received a label value of 3 which is outside the valid range of [0, 3)."),
    ]
    for fn, text in cases:
        checked += 1
        try:
            fn()
            failures.append("FAIL no error for %r" % text)
        except InvalidArgumentError as e:
            if not e.message.startswith(text):
                failures.append("FAIL message %r, wanted %r" % (e.message, text))


if __name__ == "__main__":
    sys.exit(main())
