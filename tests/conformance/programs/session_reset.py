# State on a server outlives sessions until Session.reset clears containers.
from engine import tf

server = tf.train.Server.create_local_server()
print("target starts with grpc://localhost:", server.target.startswith("grpc://localhost:"))
v = tf.Variable(5.0, name="v")
with tf.container("scratch"):
    w = tf.Variable(1.0, name="w")

with tf.Session(server.target) as sess:
    sess.run([v.initializer, w.initializer])
    print("incremented:", sess.run(v.assign_add(1.0)))
with tf.Session(server.target) as sess:
    print("a new session sees:", sess.run(v), sess.run(w))

tf.Session.reset(server.target, ["scratch"])
with tf.Session(server.target) as sess:
    print("after resetting 'scratch', v is kept:", sess.run(v))
    try:
        sess.run(w)
    except tf.errors.FailedPreconditionError as e:
        print("w is gone:", "Attempting to use uninitialized value w" in e.message)

with tf.container("exp1"):
    kept = tf.Variable(3.0, name="kept")
    q = tf.FIFOQueue(3, tf.float32, shared_name="kept_queue", name="kept_queue")
with tf.Session(server.target) as sess:
    sess.run([kept.initializer, q.enqueue(7.0)])

tf.Session.reset(server.target)
with tf.Session(server.target) as sess:
    try:
        sess.run(v)
    except tf.errors.FailedPreconditionError as e:
        print("after reset(target) v is gone too:",
              "Attempting to use uninitialized value v" in e.message)
    print("but the container 'exp1' survives it:", sess.run(kept), sess.run(q.size()))

tf.Session.reset(server.target, ["exp1"])
with tf.Session(server.target) as sess:
    try:
        sess.run(kept)
    except tf.errors.FailedPreconditionError as e:
        print("reset(target, ['exp1']) clears it:", "uninitialized value kept" in e.message)
    print("a new queue of that name is empty:", sess.run(q.size()))

try:
    tf.Session("localhost:1234")
except tf.errors.NotFoundError as e:
    print("target without grpc://: NotFoundError",
          "No session factory registered" in e.message)
