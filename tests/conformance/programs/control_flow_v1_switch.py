# tf.disable_control_flow_v2(): on TF 2 it makes tf.while_loop build TF1's frame ops
# (the loops minitf builds); control_flow_v2_enabled() then says False on both engines.
from engine import tf

tf.disable_control_flow_v2()
print("control flow v2 enabled:", tf.control_flow_v2_enabled())
i_final, a_final = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 2.0),
                                [tf.constant(0), tf.constant(1.0)])
for op in tf.get_default_graph().get_operations():
    if op.name.startswith("while/"):
        print(op.name, op.type, [t.name for t in op.inputs])
with tf.Session() as sess:
    print("result:", sess.run([i_final, a_final]))
