# tf.nn.dynamic_rnn over every TF1 cell, with sequence_length: TF's variable
# names, outputs, final states and gradients (weights set to known values);
# bidirectional_dynamic_rnn, static_rnn, time-major inputs, DeviceWrapper.
import numpy as np

from engine import tf

rs = np.random.RandomState(0)
x = tf.constant(rs.randn(3, 5, 4).astype(np.float32))
lengths = tf.constant([5, 3, 1])
results = {}
for kind in ["basic_rnn", "gru", "basic_lstm", "lstm", "multi"]:
    with tf.variable_scope(kind):
        cell = {
            "basic_rnn": lambda: tf.nn.rnn_cell.BasicRNNCell(6),
            "gru": lambda: tf.nn.rnn_cell.GRUCell(6),
            "basic_lstm": lambda: tf.nn.rnn_cell.BasicLSTMCell(6),
            "lstm": lambda: tf.nn.rnn_cell.LSTMCell(6, use_peepholes=True, num_proj=3,
                                                    cell_clip=1.0),
            "multi": lambda: tf.nn.rnn_cell.MultiRNNCell(
                [tf.nn.rnn_cell.BasicLSTMCell(4), tf.nn.rnn_cell.GRUCell(3)]),
        }[kind]()
        out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
        results[kind] = (out, state)
        print(kind, "output", out.shape, "state sizes", cell.state_size)
y = tf.constant(rs.randn(2, 4, 3).astype(np.float32))
(fw, bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
    tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.BasicRNNCell(2), y,
    sequence_length=tf.constant([4, 2]), dtype=tf.float32)
static_out, static_state = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(2), tf.unstack(y, axis=1),
                                            dtype=tf.float32, sequence_length=[4, 2])
layers = tf.nn.rnn_cell.MultiRNNCell([
    tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.BasicRNNCell(2), "/cpu:0"),
    tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.BasicRNNCell(2), "/cpu:1")])
device_out, _ = tf.nn.dynamic_rnn(layers, y, dtype=tf.float32, scope="layers")
time_major, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(2), tf.transpose(y, [1, 0, 2]),
                                  time_major=True, dtype=tf.float32, scope="tm")
print("matmul devices of the layers:", [op.device for op in tf.get_default_graph().get_operations()
                                        if op.name.startswith("layers/") and op.type == "MatMul"])
variables = tf.global_variables()
print("variables:", [(v.name, v.shape.as_list()) for v in variables])
assigns = [tf.assign(v, (np.arange(int(np.prod(v.shape.as_list()))).reshape(v.shape.as_list()) % 7
                         - 3).astype(np.float32) * 0.05) for v in variables]
loss = (sum(tf.reduce_sum(tf.square(o)) for o, _ in results.values()) + tf.reduce_sum(fw * bw)
        + tf.reduce_sum(tf.stack(static_out)) + tf.reduce_sum(device_out)
        + tf.reduce_sum(time_major))
grads = tf.gradients(loss, variables + [x, y])


def r(a):
    return np.round(np.asarray(a, dtype=np.float64), 4).tolist()


with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
    s.run(assigns)
    got = s.run(results)
    for kind in sorted(got):
        out, state = got[kind]
        print(kind, "outputs of entry 1:", r(out[1]))
        print(kind, "final state of entry 1:", [r(a[1]) for a in
                                                 (state if isinstance(state, tuple) else [state])])
    for name, value in zip(["fw", "bw", "state_fw", "state_bw", "static", "devices", "time_major"],
                           s.run([fw, bw, state_fw, state_bw, static_out, device_out, time_major])):
        print(name, r(value))
    for v, g in zip(variables + [x, y], s.run(grads)):
        print("gradient of", v.name, "sum", r(np.sum(g)), "max", r(np.abs(g).max()))
