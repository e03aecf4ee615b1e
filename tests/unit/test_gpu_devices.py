"""GPU devices: virtual GPUs, the GPU kernel table, soft placement, memory."""

import numpy as np
import pytest

import minitf
import minitf.compat.v1 as tf
from minitf.runtime import gpu

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def gpu_config(n=1, **gpu_options):
    return tf.ConfigProto(device_count={"GPU": n}, gpu_options=tf.GPUOptions(**gpu_options))


def test_cuda_status_is_absent_here_and_says_why():
    status = minitf.cuda_status()
    assert status.mode in ("absent", "real")
    if status.mode == "absent":
        assert status.reason and not status.devices
        assert "absent" in str(status)


def test_virtual_gpus_are_listed_and_marked():
    devices = minitf.list_devices(config=gpu_config(2, virtual_memory_limit_mb=64))
    gpus = [d for d in devices if d["device_type"] == "GPU"]
    assert [d["name"] for d in gpus] == [GPU0, GPU0[:-1] + "1"]
    assert all(d["virtual"] and d["memory_limit"] == 64 << 20 for d in gpus)
    assert "virtual GPU" in gpus[0]["description"]


def test_env_variable_asks_for_virtual_gpus(monkeypatch):
    monkeypatch.setenv("MINITF_VIRTUAL_GPUS", "3")
    names = [d["name"] for d in minitf.list_devices()]
    assert names[-1].endswith("GPU:2")
    monkeypatch.setenv("MINITF_VIRTUAL_GPUS", "0")
    assert all(d["device_type"] == "CPU" for d in minitf.list_devices())


def test_device_count_zero_means_no_gpu(monkeypatch):
    monkeypatch.setenv("MINITF_VIRTUAL_GPUS", "2")
    assert all(d["device_type"] == "CPU"
               for d in minitf.list_devices(config=tf.ConfigProto(device_count={"GPU": 0})))


def test_list_devices_of_a_cluster_names_every_task_with_descriptions():
    from minitf.distributed.launcher import LocalCluster
    with LocalCluster({"ps": 1, "worker": 1}, echo=False,
                      env={"MINITF_VIRTUAL_GPUS": "1"}) as cluster:
        devices = minitf.list_devices(cluster.target("worker", 0))
    by_name = {d["name"]: d for d in devices}
    for task in ("/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"):
        cpu, gpu = by_name[task + "/device:CPU:0"], by_name[task + "/device:GPU:0"]
        assert cpu["description"] == "numba-compiled CPU kernels" and not cpu["virtual"]
        assert gpu["virtual"] and gpu["description"].startswith("virtual GPU 0 (no CUDA")
        assert gpu["memory_limit"] == 2 << 30                   # the default budget
    assert len(devices) == 4


def test_sess_list_devices_has_the_gpu():
    with tf.Session(graph=tf.Graph(), config=gpu_config(1)) as sess:
        listed = sess.list_devices()
    assert [(d.name, d.device_type) for d in listed] == [(CPU0, "CPU"), (GPU0, "GPU")]


def test_unpinned_float_math_prefers_the_gpu_and_logs_virtual(capsys):
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
        y = tf.matmul(x, x, name="y")
        config = gpu_config(1)
        config.log_device_placement = True
        md = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            out = sess.run(y, run_metadata=md)
    np.testing.assert_allclose(out, [[7, 10], [15, 22]])
    assert md.placement["y"] == GPU0
    assert "y: (MatMul): %s (virtual)" % GPU0 in capsys.readouterr().out


def test_int32_variable_on_gpu_fails_without_soft_placement():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            v = tf.Variable(1, name="counter")
        with tf.Session(config=gpu_config(1)) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(v.initializer)
    msg = info.value.message
    assert msg.startswith("Cannot assign a device for operation counter")
    assert "no supported kernel for GPU devices" in msg


def test_int32_variable_on_gpu_lands_on_cpu_with_soft_placement(capsys):
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            v = tf.Variable(1, name="counter")
            f = tf.Variable(2.0, name="weight")
        config = gpu_config(1)
        config.allow_soft_placement = True
        config.log_device_placement = True
        md = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(v.assign_add(5), run_metadata=md) == 6
            assert sess.run(f) == 2.0
        log = capsys.readouterr().out
    assert "counter: (VariableV2): %s\n" % CPU0 in log
    assert "weight: (VariableV2): %s (virtual)" % GPU0 in log
    # The run that used the counter: soft placement moved it (and its update) off the GPU.
    assert md.placement["counter"] == CPU0 and "counter" in md.soft_placed


def test_int32_math_pinned_to_gpu_needs_soft_placement():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            s = tf.add(tf.constant(1), tf.constant(2), name="iadd")
        with tf.Session(config=gpu_config(1)) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="iadd"):
                sess.run(s)
        config = gpu_config(1)
        config.allow_soft_placement = True
        md = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            assert sess.run(s, run_metadata=md) == 3
        assert md.placement["iadd"] == CPU0


def test_copies_between_host_and_gpu_are_traced_transfers():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [4], name="p")
        with tf.device("/gpu:0"):
            y = tf.square(p, name="sq")
        with tf.device("/cpu:0"):
            z = tf.identity(y, name="back")
        md = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        with tf.Session(config=gpu_config(1)) as sess:
            out = sess.run(z, {p: np.arange(4, dtype=np.float32)}, options=opts,
                           run_metadata=md)
    np.testing.assert_allclose(out, [0, 1, 4, 9])
    moves = {(t.tensor, t.src_device, t.dst_device, t.bytes)
             for t in md.step_stats.transfers}
    assert ("p:0", "host", GPU0, 16) in moves
    assert ("sq:0", GPU0, "host", 16) in moves
    assert len(md.step_stats.transfers) == 2          # none between ops on one device
    assert all(t.end_micros >= t.start_micros for t in md.step_stats.transfers)


def test_int32_axes_of_a_gpu_reduction_stay_on_the_host():
    """The axis constant is placed on the GPU with the Sum, but lives in host
    memory (as TF's HostConstantOp): only the float input and the result move."""
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2, 3], name="p")
        with tf.device("/gpu:0"):
            s = tf.reduce_sum(p * 2.0, axis=1, name="s")
        md = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        with tf.Session(config=gpu_config(1)) as sess:
            out = sess.run(s, {p: np.ones((2, 3), np.float32)}, options=opts,
                           run_metadata=md)
    np.testing.assert_allclose(out, [6.0, 6.0])
    assert md.placement["s/reduction_indices"] == GPU0
    assert sorted((t.tensor, t.src_device, t.dst_device) for t in md.step_stats.transfers) \
        == [("p:0", "host", GPU0), ("s:0", GPU0, "host")]


def test_fetching_a_gpu_tensor_copies_it_to_host():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            v = tf.Variable([1.0, 2.0], name="v")
            y = v * 3.0
        md = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        with tf.Session(config=gpu_config(1)) as sess:
            sess.run(v.initializer)
            out = sess.run(y, options=opts, run_metadata=md)
            out[0] = 100.0                              # the client owns its copy
            np.testing.assert_allclose(sess.run(y), [3.0, 6.0])
    assert [t.dst_device for t in md.step_stats.transfers] == ["host"]


def test_oom_on_tiny_virtual_gpu_raises_and_session_stays_usable():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            big = tf.ones([512, 512], name="big") * 2.0        # 1 MiB
            small = tf.reduce_sum(tf.ones([16]) * 2.0)
        with tf.Session(config=gpu_config(1, virtual_memory_limit_mb=0.5)) as sess:
            with pytest.raises(tf.errors.ResourceExhaustedError) as info:
                sess.run(big)
            msg = info.value.message
            assert msg.startswith("OOM when allocating tensor of shape [512,512] and type "
                                  "float32 on %s: requested 1048576 bytes," % GPU0)
            assert " free" in msg
            assert sess.run(small) == 32.0
            with pytest.raises(tf.errors.ResourceExhaustedError):
                sess.run(big)
            assert sess.run(small) == 32.0


def test_memory_is_freed_when_tensors_die_and_traced():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            v = tf.Variable(np.ones(1024, np.float32), name="v")     # 4 KiB, lives on
            y = tf.reduce_sum(tf.square(v) + 1.0)
        md = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        with tf.Session(config=gpu_config(1)) as sess:
            sess.run(v.initializer)
            assert sess.run(y, options=opts, run_metadata=md) == 2048.0
            allocator = sess._runtime.devices[1].allocator
            assert allocator.in_use == 4096                 # only the variable
    [mem] = md.step_stats.memory
    assert mem.allocator_name == GPU0
    assert mem.live_bytes == 4096
    assert mem.peak_bytes >= 4096 + 2 * 4096                # square and the add coexist
    stats = {n.node_name: n for d in md.step_stats.dev_stats for n in d.node_stats}
    assert stats["Square"].memory[0].total_bytes == 4096


def test_allow_growth_lets_a_second_session_share_the_card():
    def session(**opts):
        g = tf.Graph()
        with g.as_default():
            with tf.device("/gpu:0"):
                t = tf.ones([256, 256]) * 1.0                  # 256 KiB
        return tf.Session(graph=g, config=gpu_config(1, virtual_memory_limit_mb=2,
                                                     **opts)), t
    greedy, _ = session()                                   # reserves the whole card
    second, t = session(allow_growth=True)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="OOM when allocating"):
        second.run(t)
    greedy.close()                                          # gives the card back
    assert second.run(t).shape == (256, 256)
    third, t3 = session(allow_growth=True)                  # growth: both fit
    assert third.run(t3).shape == (256, 256)
    assert second.run(t).shape == (256, 256)
    second.close()
    third.close()


def test_memory_fraction_caps_what_a_session_may_use():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/gpu:0"):
            t = tf.ones([512, 512]) * 1.0                       # 1 MiB
    full = tf.Session(graph=g, config=gpu_config(1, virtual_memory_limit_mb=4))
    assert full.run(t).shape == (512, 512)
    assert full.list_devices()[1].memory_limit_bytes == 4 << 20
    full.close()
    capped = tf.Session(graph=g, config=gpu_config(1, virtual_memory_limit_mb=4,
                                                   per_process_gpu_memory_fraction=0.25))
    assert capped.list_devices()[1].memory_limit_bytes == 1 << 20
    with pytest.raises(tf.errors.ResourceExhaustedError):
        capped.run(t)
    capped.close()


def test_virtual_gpu_runs_the_math_it_is_given_and_gets_numpy_answers():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    labels = np.eye(5, dtype=np.float32)[rng.integers(0, 5, 8)]
    shifted = x - x.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    want = [np.mean(np.maximum(x, 0) * 2.0 - 1.0), np.argmax(x, 1), x @ x.T,
            -(labels * log_softmax).sum(axis=1)]
    for device, expected in (("/cpu:0", CPU0), ("/gpu:0", GPU0)):
        with tf.Graph().as_default():
            with tf.device(device):
                a = tf.constant(x, name="a")
                loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=a)
                out = [tf.reduce_mean(tf.nn.relu(a) * 2.0 - 1.0, name="mean"),
                       tf.argmax(a, 1, name="argmax"),
                       tf.matmul(a, a, transpose_b=True, name="matmul"), loss]
            md = tf.RunMetadata()
            with tf.Session(config=gpu_config(1)) as sess:
                got = sess.run(out, run_metadata=md)
        for name in ("a", "Relu", "mean", "argmax", "matmul", loss.op.name):
            assert md.placement[name] == expected, (name, md.placement[name])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_gpu_variable_trains_with_gradient_descent():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            w = tf.Variable(3.0, name="w")
            loss = tf.square(w - 1.0)
            step = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
        md = tf.RunMetadata()
        with tf.Session(config=gpu_config(1)) as sess:
            sess.run(w.initializer)
            for _ in range(3):
                sess.run(step, run_metadata=md)
            assert abs(sess.run(w) - (1.0 + 2.0 * 0.5 ** 3)) < 1e-6
    assert md.placement["w"] == GPU0


def test_gpu_request_without_gpu_names_the_config_that_adds_one():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            c = tf.constant(1.0, name="c")
        with tf.Session(config=tf.ConfigProto(device_count={"GPU": 0})) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"ConfigProto\(device_count=\{'GPU': 1\}\)"):
                sess.run(c)


def test_host_and_device_copy_helpers_make_separate_buffers():
    from minitf.runtime.devices import gpu_devices
    [d] = gpu_devices(gpu_config(1))
    x = np.arange(3.0)
    on_gpu = gpu.to_device(x, d)
    back = gpu.to_host(on_gpu)
    assert not np.shares_memory(x, on_gpu) and not np.shares_memory(on_gpu, back)
    np.testing.assert_array_equal(back, x)
    d.allocator.close()
