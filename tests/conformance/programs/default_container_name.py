# A server's default container is named after the task's job (TF's ResourceMgr(job)):
# "worker" on /job:worker, "localhost" on create_local_server's /job:localhost.
from engine import tf

workers, _ = tf.test.create_local_cluster(1, 0)
local = tf.train.Server.create_local_server()


def initialized(target, var):
    with tf.Session(target) as sess:
        return bool(sess.run(tf.is_variable_initialized(var)))


with tf.device("/job:worker/task:0"):
    v = tf.Variable(5.0, name="v")
with tf.Session(workers[0].target) as sess:
    sess.run(v.initializer)
tf.Session.reset(workers[0].target, ["localhost"])
print("/job:worker: reset(['localhost']) keeps v:", initialized(workers[0].target, v))
tf.Session.reset(workers[0].target, ["worker"])
print("/job:worker: reset(['worker']) clears v:", not initialized(workers[0].target, v))

g = tf.Graph()
with g.as_default():
    w = tf.Variable(1.0, name="w")
    with tf.Session(local.target) as sess:
        sess.run(w.initializer)
    tf.Session.reset(local.target, ["worker"])
    print("/job:localhost: reset(['worker']) keeps w:", initialized(local.target, w))
    tf.Session.reset(local.target, ["localhost"])
    print("/job:localhost: reset(['localhost']) clears w:", not initialized(local.target, w))
