"""minitf.timeline.Timeline: a step's trace as a Chrome trace (Perfetto)."""

import json

import pytest

import minitf.compat.v1 as tf
from minitf.timeline import Timeline
from two_task_run import start_two_task_step, stop_two_task_step


@pytest.fixture(scope="module")
def step():
    s = start_two_task_step()
    yield s
    stop_two_task_step(s)


def events(trace, ph, cat=None):
    return [e for e in trace["traceEvents"] if e["ph"] == ph and (cat is None or e.get("cat") == cat)]


def test_one_process_per_task_and_one_slice_per_op(step):
    stats = step.md.step_stats
    trace = json.loads(Timeline(stats).generate_chrome_trace_format())
    processes = {e["pid"]: e["args"]["name"] for e in events(trace, "M")
                 if e["name"] == "process_name"}
    assert sorted(processes.values()) == ["/job:local/replica:0/task:0",
                                          "/job:local/replica:0/task:1"]
    ops = events(trace, "X", "Op")
    # TF's RecvTensor records are drawn as transfers (from step_stats.transfers), not as ops
    assert sorted(e["args"]["name"] for e in ops) == sorted(
        ns.node_name for d in stats.dev_stats for ns in d.node_stats
        if ns.node_name != "RecvTensor")
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events(trace, "M")
               if e["name"] == "thread_name"}
    spans = {ns.node_name: (ns.all_start_micros, ns.all_end_rel_micros)
             for d in stats.dev_stats for ns in d.node_stats}
    for e in ops:  # each op sits on its device's thread, inside its task's process
        device = threads[(e["pid"], e["tid"])]
        assert device.startswith(processes[e["pid"]] + "/device:")
        # ...over exactly the span its step stats recorded
        assert (e["ts"], e["dur"]) == spans[e["args"]["name"]]


def test_a_flow_arrow_per_transfer_bound_to_slices(step):
    stats = step.md.step_stats
    trace = json.loads(Timeline(stats).generate_chrome_trace_format(show_dataflow=False))
    starts, ends = events(trace, "s", "transfer"), events(trace, "f", "transfer")
    assert len(starts) == len(ends) == len(stats.transfers) > 0
    assert sorted(e["id"] for e in starts) == sorted(e["id"] for e in ends)
    assert sorted(e["name"] for e in starts) == sorted(t.tensor for t in stats.transfers)
    slices = events(trace, "X", "transfer")
    for flow in starts + ends:  # Perfetto binds a flow event to the slice around it
        assert any(s["pid"] == flow["pid"] and s["tid"] == flow["tid"]
                   and s["ts"] <= flow["ts"] <= s["ts"] + s["dur"] for s in slices)
    processes = {e["pid"]: e["args"]["name"] for e in events(trace, "M")
                 if e["name"] == "process_name"}
    for s, f in zip(sorted(starts, key=lambda e: e["id"]), sorted(ends, key=lambda e: e["id"])):
        # Inputs go from task 0 to task 1; the fetched result comes back to
        # the master (task 0) with task 1's reply.
        src, dst = ("task:1", "task:0") if s["name"].endswith("(fetch)") else ("task:0",
                                                                                "task:1")
        assert processes[s["pid"]].endswith(src) and processes[f["pid"]].endswith(dst)
    assert [e["args"]["bytes"] for e in slices if e["name"].startswith("send ")] == \
        [t.bytes for t in stats.transfers]


def test_dataflow_arrows_with_a_graph_and_a_local_step():
    g = tf.Graph()
    with g.as_default():
        a = tf.Variable(2.0, name="a")    # (a product of constants would be folded)
        b = tf.multiply(a, 3.0, name="b")
    with tf.Session(graph=g) as sess:
        sess.run(a.initializer)
        md = tf.RunMetadata()
        sess.run(b, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=md)
    trace = json.loads(Timeline(md.step_stats, graph=g).generate_chrome_trace_format())
    assert [e["args"]["name"] for e in events(trace, "M") if e["name"] == "process_name"] \
        == ["/job:localhost/replica:0/task:0"]
    flows = events(trace, "s", "DataFlow")
    assert "a/read:0" in {e["name"] for e in flows}
    (b_slice,) = [e for e in events(trace, "X", "Op") if e["args"]["name"] == "b"]
    assert b_slice["args"]["input0"] == "a/read:0" and b_slice["name"] == "Mul"


def test_a_transfer_arrow_starts_when_the_sender_was_ready(step):
    """A transfer's record starts when the receiver began to wait; its arrow
    starts when the sender's _Send (or the op that made the value) finished."""
    stats = step.md.step_stats
    trace = json.loads(Timeline(stats).generate_chrome_trace_format(show_dataflow=False))
    ends = {ns.node_name: ns.all_start_micros + ns.all_end_rel_micros
            for d in stats.dev_stats for ns in d.node_stats}
    starts = {e["name"]: e["ts"] for e in events(trace, "s", "transfer")}
    for t in stats.transfers:
        producer = t.tensor.split(":")[0]
        assert ends[producer] <= starts[t.tensor] <= t.end_micros
    receivers = [e for e in events(trace, "X", "transfer") if e["name"].startswith("recv ")]
    for e in receivers:  # the receiver's slice still shows its whole wait
        t = [t for t in stats.transfers if "recv " + t.tensor == e["name"]][0]
        if not t.tensor.endswith("(fetch)"):
            assert e["ts"] == min(t.start_micros, starts[t.tensor])


def test_each_tensor_received_from_another_task_has_tfs_recv_tensor_record(step):
    """TF's workers add one ``RecvTensor`` node per received tensor to the
    receiver's step stats; minitf writes the same records from its transfers,
    so code that counts bytes between tasks from dev_stats runs on both."""
    import re
    label = re.compile(r"^\[(\d+)B\] \[[^\]]*\] edge_\d+_(\S+) from (\S+) to (\S+)$")
    stats = step.md.step_stats
    records = [(d.device, ns) for d in stats.dev_stats for ns in d.node_stats
               if ns.node_name == "RecvTensor"]
    seen = set()
    for device, ns in records:
        nbytes, producer, src, dst = label.match(ns.timeline_label).groups()
        assert device == dst
        assert int(nbytes) == ns.output[0].tensor_description.allocation_description.requested_bytes
        seen.add((producer, src.split("/")[3], dst.split("/")[3], int(nbytes)))
    # x (1x4), w (4x3) and b cross to task 1; the result goes back to the master's task 0
    assert {("x", "task:0", "task:1", 16), ("w/read", "task:0", "task:1", 48),
            ("b/read", "task:0", "task:1", 4)} <= seen
    assert any(p[1:3] == ("task:1", "task:0") and p[3] == 4 for p in seen)
    cross = [t for t in stats.transfers if t.src_device.split("/")[3] != t.dst_device.split("/")[3]]
    assert len(records) == len(cross)
