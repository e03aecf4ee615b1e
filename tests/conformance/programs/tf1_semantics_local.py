# Small TF1 behaviours learners run into: gradients of integer tensors and
# grad_ys, queues without shapes, assign outputs, tf.group across devices.
from engine import tf

x = tf.constant(3)
print("gradient of an integer tensor:", tf.gradients(x * 2, x))
a = tf.constant(2.0)
y = a * a
(g,) = tf.gradients(y, a, grad_ys=tf.constant(3.0))
for ys, grad_ys in (([y, y], [tf.constant(1.0)]), (y, [tf.constant(1.0), tf.constant(2.0)])):
    try:
        tf.gradients(ys, a, grad_ys=grad_ys)
    except ValueError as e:
        print("ValueError:", e)

q = tf.FIFOQueue(10, [tf.float32])
many = q.dequeue_many(2)
up_to = q.dequeue_up_to(2)
try:
    tf.FIFOQueue(10, [tf.float32, tf.int32]).enqueue_many([[1.0, 2.0, 3.0], [1, 2]])
except ValueError as e:
    print("enqueue_many of different lengths:", e)
try:
    q.enqueue_many([3.0])
except ValueError as e:
    print("enqueue_many of a scalar:", e)
shaped = tf.FIFOQueue(10, [tf.float32], shapes=[[]])
p = tf.placeholder(tf.float32, [None])
print("an unknown first dimension builds:", shaped.enqueue_many([p]).type)

v = tf.Variable(1.0, name="v")
twice = tf.assign(tf.assign(v, 5.0), 7.0)
added = tf.assign_add(v.assign(2.0), 3.0)
print("assign outputs:", twice.dtype, added.dtype, twice.op.inputs[0].op.name)

with tf.device("/cpu:0"):
    on_cpu = tf.no_op(name="on_cpu")
plain = tf.no_op(name="plain")
grouped = tf.group(on_cpu, plain, v.initializer, name="grouped")
print("group:", [c.name for c in grouped.control_inputs])
for c in grouped.control_inputs:
    print("  ", c.name, repr(c.device), [d.name for d in c.control_inputs])
single = tf.group(on_cpu, name="single")
print("one device:", [c.name for c in single.control_inputs], repr(single.device))

with tf.Session() as sess:
    print("grad with grad_ys=3:", sess.run(g))
    sess.run(q.enqueue(1.0))
    for op in (many, up_to):
        try:
            sess.run(op)
        except tf.errors.InvalidArgumentError as e:
            print(type(e).__name__, "FIFOQueue's DequeueMany and DequeueUpTo require the "
                  "components to have specified shapes." in e.message)
    sess.run(v.initializer)
    print("assign chain:", sess.run(twice), sess.run(v))
    print("assign_add of an assign:", sess.run(added), sess.run(v))
    sess.run(grouped)
    print("ran the group")
