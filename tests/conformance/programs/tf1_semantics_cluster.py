# Servers as TF names and checks them: create_local_server's job, bad jobs and
# tasks, device_filters in list_devices, soft placement that never invents a task.
import socket

from engine import tf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


local = tf.train.Server.create_local_server()
with tf.Session(local.target) as sess:
    print("local server devices:", [d.name for d in sess.list_devices()])

for bad in (dict(job_name="nope", task_index=0), dict(job_name="worker", task_index=3)):
    try:
        tf.train.Server({"worker": ["localhost:%d" % free_port()]}, start=False, **bad)
    except tf.errors.OpError as e:
        print(bad, type(e).__name__, e.message)

cluster = tf.train.ClusterSpec({"ps": ["localhost:%d" % free_port()],
                                "worker": ["localhost:%d" % free_port(),
                                           "localhost:%d" % free_port()]})
servers = [tf.train.Server(cluster, job_name=job, task_index=i)
           for job, i in (("ps", 0), ("worker", 0), ("worker", 1))]
target = servers[1].target
filters = ["/job:ps", "/job:worker/task:0"]
with tf.Session(target, config=tf.ConfigProto(device_filters=filters)) as sess:
    print("filtered:", sorted(d.name for d in sess.list_devices()))
with tf.Session(target) as sess:
    print("unfiltered:", sorted(d.name for d in sess.list_devices()))


def soft_place(device, name, device_filters=()):
    with tf.Graph().as_default():
        with tf.device(device):
            c = tf.constant(1.0, name=name)
        config = tf.ConfigProto(allow_soft_placement=True)
        config.device_filters.extend(device_filters)
        with tf.Session(target, config=config) as sess:
            try:
                print(device, "->", sess.run(c))
            except tf.errors.InvalidArgumentError as e:
                message = e.message
                print(device, "->", type(e).__name__,
                      "Cannot assign a device for operation %s" % name in message,
                      "was explicitly assigned to %s" % device in message,
                      "Make sure the device specification refers to a valid device." in message)


soft_place("/job:ps/task:0/device:GPU:0", "on_a_gpu_the_ps_lacks")
soft_place("/job:ps/task:0/device:CPU:3", "on_a_cpu_the_ps_lacks")
soft_place("/job:worker/task:5", "on_a_task_that_does_not_exist")
soft_place("/job:nojob/task:0", "on_a_job_that_does_not_exist")
soft_place("/job:worker/task:1", "on_a_filtered_out_task", filters)

with tf.Graph().as_default():
    with tf.device("/job:ps/task:0"):
        c = tf.constant(1.0, name="ps_in_a_local_session")
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        try:
            sess.run(c)
        except tf.errors.InvalidArgumentError as e:
            print("local session, /job:ps:", type(e).__name__,
                  "but available devices are [ /job:localhost/replica:0/task:0/device:CPU:0 ]"
                  in e.message)
