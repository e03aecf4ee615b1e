"""Check the CUDA path on a real GPU: parity, then throughput against the card's peak.

    python tests/benchmarks/gpu_check.py

Where numba finds a GPU (``minitf.cuda_status().mode == "real"``) this

1. runs the CUDA parity suite (tests/unit/cuda_parity_check.py) on the device;
2. runs a small graph on ``/device:GPU:0`` and checks it against the CPU;
3. times the tiled matmul (GFLOP/s vs the FP32 peak) and an elementwise add
   (GB/s vs the memory bandwidth peak), kernels only, data already on the card.

Without a GPU it says why (cuda_status) and exits 0.
"""

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "unit"))

# FP32 cores per SM by compute capability major (minor where it matters).
_CORES = {(3, None): 192, (5, None): 128, (6, 0): 64, (6, None): 128, (7, None): 64,
          (8, 0): 64, (8, None): 128, (9, None): 128, (10, None): 128, (12, None): 128}


def peaks(dev):
    cc = dev.compute_capability
    cores = _CORES.get(cc, _CORES.get((cc[0], None), 64))
    sms = dev.MULTIPROCESSOR_COUNT
    clock_hz = dev.CLOCK_RATE * 1e3
    flops = sms * cores * 2 * clock_hz
    bandwidth = dev.MEMORY_CLOCK_RATE * 1e3 * 2 * dev.GLOBAL_MEMORY_BUS_WIDTH / 8
    return flops, bandwidth


def timed(fn, repeats=10):
    from numba import cuda
    fn()
    cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    import minitf
    status = minitf.cuda_status()
    print(status)
    if not status.real:
        print("gpu_check: no real GPU here; nothing to measure.")
        return 0
    from numba import cuda
    import cuda_parity_check
    rc = cuda_parity_check.main()
    print("parity on the device: %s" % ("OK" if rc == 0 else "FAILED"))

    import minitf.compat.v1 as tf
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    outs = []
    for device in ("/cpu:0", "/gpu:0"):
        with tf.Graph().as_default():
            with tf.device(device):
                a = tf.constant(x)
                y = [tf.reduce_sum(tf.nn.relu(a) * 2.0), tf.matmul(a, a, transpose_a=True),
                     tf.nn.softmax(a)]
            md = tf.RunMetadata()
            with tf.Session() as sess:
                outs.append(sess.run(y, run_metadata=md))
            print("%s placement: %s" % (device, sorted(set(md.placement.values()))))
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    print("graph on GPU:0 equals CPU: OK")

    from minitf.framework.op_def import lookup
    from minitf.kernels import cuda as K
    dev = cuda.get_current_device()
    flops_peak, bw_peak = peaks(dev)
    name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
    print("device: %s, %d SMs, peak %.1f TFLOP/s fp32, %.0f GB/s"
          % (name, dev.MULTIPROCESSOR_COUNT, flops_peak / 1e12, bw_peak / 1e9))
    for n in (1024, 4096):
        a = cuda.to_device(np.random.rand(n, n).astype(np.float32))
        b = cuda.to_device(np.random.rand(n, n).astype(np.float32))
        t = timed(lambda: K.matmul(a, b))
        rate = 2 * n ** 3 / t
        print("matmul %dx%d: %.2f ms, %.0f GFLOP/s = %.1f%% of peak"
              % (n, n, t * 1e3, rate / 1e9, 100 * rate / flops_peak))
    n = 1 << 26
    a = cuda.to_device(np.ones(n, np.float32))
    b = cuda.to_device(np.ones(n, np.float32))
    t = timed(lambda: K.binary(lookup("AddV2"), a, b))
    moved = 3 * 4 * n
    print("elementwise add %dM float32: %.2f ms, %.0f GB/s = %.1f%% of peak"
          % (n >> 20, t * 1e3, moved / t / 1e9, 100 * moved / t / bw_peak))
    t = timed(lambda: K.reduce("sum", a, (0,), False))
    print("reduce_sum %dM float32: %.2f ms, %.0f GB/s = %.1f%% of peak"
          % (n >> 20, t * 1e3, 4 * n / t / 1e9, 100 * 4 * n / t / bw_peak))
    return rc


if __name__ == "__main__":
    sys.exit(main())
