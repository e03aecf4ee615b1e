# The first seed's cluster: two tasks in this process, a variable pinned to
# task 0, and one session per task. Both sessions see the same variable.
import socket

from engine import tf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


tasks = ["localhost:%d" % free_port(), "localhost:%d" % free_port()]
cluster = tf.train.ClusterSpec({"local": tasks})
print("jobs:", cluster.jobs, "tasks:", cluster.num_tasks("local"))
s1 = tf.train.Server(cluster, job_name="local", task_index=0)
s2 = tf.train.Server(cluster, job_name="local", task_index=1)
print("targets start with grpc://:", s1.target.startswith("grpc://"),
      s2.target.startswith("grpc://"))

with tf.device("/job:local/task:0"):
    var = tf.Variable(initial_value=0.0, name="var")
sess1 = tf.Session(s1.target)
sess2 = tf.Session(s2.target)
sess1.run(tf.global_variables_initializer())
sess2.run(tf.global_variables_initializer())
print("session 1:", sess1.run(var), "session 2:", sess2.run(var))
sess1.run(var.assign_add(1.0))
print("after += 1 in session 1 -> session 1:", sess1.run(var), "session 2:", sess2.run(var))

with tf.device("/job:local/task:0"):
    var1 = tf.Variable(0.0, name="var1")
with tf.device("/job:local/task:1"):
    var2 = tf.Variable(0.0, name="var2")
sess1.run(tf.global_variables_initializer())
sess2.run(var2.assign_add(5.0))
print("var1, var2 seen from session 1:", sess1.run([var1, var2]))
sess1.close()
sess2.close()
