"""Every CUDA kernel equals the numpy reference, under numba's CUDA simulator.

The simulator must be switched on before numba.cuda is first imported, so each
check runs in its own process with ``NUMBA_ENABLE_CUDASIM=1`` (small shapes:
the simulator runs every GPU thread in Python)."""

import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def run_simulated(args, timeout=600):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    return subprocess.run([sys.executable] + args, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_every_cuda_kernel_matches_the_reference_under_the_simulator():
    result = run_simulated([os.path.join(HERE, "cuda_parity_check.py")])
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    assert "FAIL" not in out
    done = [line for line in out.splitlines() if line.startswith("DONE ")]
    assert done and int(done[0].split()[1]) > 400
    # Every row of the op table with a GPU kernel ran on CUDA (none left out).
    from minitf.kernels import examples
    rows = [line for line in out.splitlines() if line.startswith("ROWS ")][0][5:].split(",")
    assert set(rows) == {row.name for row in examples.rows_with_examples("GPU")}


def test_virtual_gpu_runs_small_tensors_through_simulated_cuda():
    script = textwrap.dedent("""
        import numpy as np
        import minitf
        import minitf.compat.v1 as tf
        from minitf.kernels import cuda
        from numba.cuda.simulator.kernel import FakeCUDAKernel
        status = minitf.cuda_status()
        assert status.mode == "simulated", status
        assert "NUMBA_ENABLE_CUDASIM" in status.reason
        launches = []
        original = FakeCUDAKernel.__getitem__
        def counting(self, config):
            launches.append(self.fn.__name__)
            return original(self, config)
        FakeCUDAKernel.__getitem__ = counting
        x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
        with tf.Graph().as_default():
            with tf.device("/gpu:0"):
                a = tf.constant(x)
                y = tf.reduce_sum(tf.nn.relu(a) * 2.0, axis=1)
                m = tf.matmul(a, a, transpose_b=True)
            with tf.Session(config=tf.ConfigProto(device_count={"GPU": 1})) as sess:
                devices = minitf.list_devices(config=tf.ConfigProto(device_count={"GPU": 1}))
                assert devices[1]["virtual"] and "simulated CUDA" in devices[1]["description"]
                out_y, out_m = sess.run([y, m])
        np.testing.assert_allclose(out_y, (np.maximum(x, 0) * 2).sum(axis=1))
        np.testing.assert_allclose(out_m, x @ x.T)
        assert out_y.dtype == np.float32
        print(sorted(set(launches)))
    """)
    result = run_simulated(["-c", script])
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    launched = result.stdout.strip().splitlines()[-1]
    for kernel in ("relu_kernel", "mul_kernel", "reduce_kernel", "matmul_f32"):
        assert kernel in launched
