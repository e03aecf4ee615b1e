# A server in its own process keeps a variable; three separate client
# programs use it: the first initializes it, the others only increment.
import multiprocessing
import os
import socket
import subprocess
import sys
import time

from engine import tf


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(address):
    from engine import tf
    server = tf.train.Server(tf.train.ClusterSpec({"local": [address]}),
                             job_name="local", task_index=0)
    server.join()


def client(target, init):
    x = tf.Variable(0.0, name="x")
    increment_x = tf.assign(x, x + 1)
    with tf.Session(target) as sess:
        if init:
            sess.run(x.initializer)
        sess.run(increment_x)
        print(sess.run(x))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        client(sys.argv[1], sys.argv[2:] == ["init"])
        sys.exit(0)
    address = "localhost:%d" % free_port()
    proc = multiprocessing.get_context("spawn").Process(target=serve, args=(address,),
                                                        daemon=True)
    proc.start()
    try:
        end = time.time() + 60
        while True:
            try:
                socket.create_connection(("localhost", int(address.split(":")[1])), 1).close()
                break
            except OSError:
                if time.time() > end:
                    sys.exit("the server did not come up")
                time.sleep(0.1)
        target = "grpc://" + address
        for args in (["init"], [], []):
            out = subprocess.run([sys.executable, __file__, target] + args,
                                 capture_output=True, text=True, timeout=120,
                                 env=dict(os.environ))
            print("client", " ".join(args) or "(no init)", "->", out.stdout.strip(),
                  "exit", out.returncode)
    finally:
        proc.terminate()
        proc.join(10)
