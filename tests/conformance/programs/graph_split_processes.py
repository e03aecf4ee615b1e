# The seed's 238 example: two servers in their own processes, one graph
# split across them, run from a session on task 0.
import multiprocessing
import socket
import sys
import time

from engine import tf, ENGINE


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def create_server(tasks, worker_number):
    from engine import tf
    cluster = tf.train.ClusterSpec({"local": tasks})
    server = tf.train.Server(cluster, job_name="local", task_index=worker_number)
    server.join()


def wait_for(address, timeout=60.0):
    host, port = address.split(":")
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("server at %s did not come up" % address)


if __name__ == "__main__":
    tasks = ["localhost:%d" % free_port(), "localhost:%d" % free_port()]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=create_server, args=(tasks, i), daemon=True)
             for i in range(2)]
    for p in procs:
        p.start()
    try:
        for address in tasks:
            wait_for(address)
        x = tf.constant(2)
        with tf.device("/job:local/task:0"):
            y2 = x - 66
        with tf.device("/job:local/task:1"):
            y1 = x + 300
            y = y1 + y2
        with tf.Session("grpc://" + tasks[0]) as sess:
            print("y =", sess.run(y))
            print("y1, y2 =", sess.run([y1, y2]))
        print("servers still alive:", [p.is_alive() for p in procs])
    finally:
        for p in procs:
            p.terminate()
            p.join(10)
