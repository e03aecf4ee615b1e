# tf.test.create_local_cluster: in-process servers on free ports, the way the
# lessons start a cluster that works on both engines. A graph spread over the
# ps and both workers runs from a session on worker 0; the cluster's jobs and
# every task's devices are TF's.
from engine import tf

workers, ps_servers = tf.test.create_local_cluster(num_workers=2, num_ps=1)
print("servers:", len(workers), "workers,", len(ps_servers), "ps")
print("targets look like grpc://localhost:PORT:",
      all(s.target.startswith("grpc://localhost:") for s in workers + ps_servers))
print("distinct ports:", len({s.target for s in workers + ps_servers}))
print("jobs in the server_def:", sorted(j.name for j in workers[0].server_def.cluster.job))
print("worker 1's task:", workers[1].server_def.job_name, workers[1].server_def.task_index)

with tf.Graph().as_default():
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.0, 2.0], name="v")
    with tf.device("/job:worker/task:1"):
        doubled = v * 2.0
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(doubled)
        update = tf.assign_add(v, [0.5, 0.5])
    with tf.Session(workers[0].target) as sess:
        sess.run(tf.global_variables_initializer())
        print("total:", sess.run(total))
        sess.run(update)
        print("after update:", sess.run(v).tolist())
        print("cpu devices:", sorted(d.name for d in sess.list_devices() if d.device_type == "CPU"))
    # State lives on the ps server: a second session on worker 1 sees the update.
    with tf.Session(workers[1].target) as sess:
        print("seen from worker 1:", sess.run(v).tolist())

try:
    tf.test.create_local_cluster(num_workers=1, num_ps=0, protocol="carrier-pigeon")
except Exception as e:
    print("bad protocol:", type(e).__name__)
