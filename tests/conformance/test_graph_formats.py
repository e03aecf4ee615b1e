"""TF's files move between minitf and real TensorFlow, both ways.

* A ``.meta`` file minitf writes (Géron's linear regression: a random
  initializer, a gradient-descent train op, a scalar summary, a Saver)
  imports in TF 2.21, trains there, and TF's imported Saver saves it.
* A ``.meta`` file TF writes of the same program imports in minitf, trains,
  runs its summary op and saves and restores through its SaverDef; with the
  same start the losses are TF's.
* A GraphDef from ``as_graph_def()`` imports in TF with ``tf.import_graph_def``
  and computes what minitf computes.
* ``minitf/framework/tf_op_defs.pbtxt`` (TF's op definitions minitf reads)
  is still what TF says.

Each needs the oracle (``MINITF_TF_PYTHON``); without it they are skipped.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import conformance_harness as harness

pytest.importorskip("tensorboard.compat.proto.meta_graph_pb2")

REPO = Path(__file__).resolve().parents[2]

# The program both engines run: a model whose start is fixed (theta = 0.1s)
# when FIXED is set, else Géron's random start.
MODEL = """
import os, sys
import numpy as np
from engine import tf
X = tf.placeholder(tf.float32, shape=(None, 3), name="X")
y = tf.placeholder(tf.float32, shape=(None, 1), name="y")
start = tf.fill([3, 1], 0.1) if os.environ.get("FIXED") else \\
    tf.random_uniform([3, 1], -1.0, 1.0, seed=42)
theta = tf.Variable(start, name="theta")
error = tf.matmul(X, theta, name="predictions") - y
mse = tf.reduce_mean(tf.square(error), name="mse")
training_op = tf.train.GradientDescentOptimizer(learning_rate=0.05).minimize(mse)
mse_summary = tf.summary.scalar("MSE", mse)
init = tf.global_variables_initializer()
saver = tf.train.Saver()
"""

DATA = """
data_x = np.array([[1, 2, .5], [0, 1, 1], [2, 0, 1], [1, 1, 1]], dtype=np.float32)
data_y = data_x.dot(np.array([[1.], [-2.], [.5]], dtype=np.float32))
feed = {"X:0": data_x, "y:0": data_y}
"""

WRITE = MODEL + DATA + """
with tf.Session() as sess:
    sess.run(init)
    print(saver.save(sess, os.path.join(sys.argv[1], "model.ckpt")))
"""

READ = """
import os, sys
import numpy as np
from engine import tf
""" + DATA + """
saver = tf.train.import_meta_graph(os.path.join(sys.argv[1], "model.ckpt.meta"))
g = tf.get_default_graph()
mse = g.get_tensor_by_name("mse:0")
(train,) = tf.get_collection("train_op")
(summary,) = tf.get_collection("summaries")
print("variables", [v.name for v in tf.global_variables()], "train_op", train.name)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = [float(sess.run([mse, train], feed)[0]) for _ in range(5)]
    print("losses", " ".join("%.6f" % l for l in losses))
    print("decreasing", all(b < a for a, b in zip(losses, losses[1:])))
    tag = tf.Summary.FromString(sess.run(summary, feed)).value[0].tag
    print("summary tag", tag)
    out = saver.save(sess, os.path.join(sys.argv[2], "again"))
    saver.restore(sess, out)
    print("saved and restored", os.path.basename(out))
"""


def _run(engine, source, *args, fixed=False):
    python = harness.oracle_python() if engine == "tf" else sys.executable
    if engine == "tf" and (python is None or not Path(python).exists()):
        pytest.skip("real TensorFlow not available: set MINITF_TF_PYTHON "
                    "(see scripts/setup_tf_oracle.sh)")
    env = dict(os.environ, MINITF_ENGINE=engine, TF_CPP_MIN_LOG_LEVEL="3",
               PYTHONPATH=os.pathsep.join([str(Path(__file__).parent)] +
                                          os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    if fixed:
        env["FIXED"] = "1"
    run = subprocess.run([python, "-c", source] + [str(a) for a in args], env=env,
                         capture_output=True, text=True, timeout=harness.TIMEOUT_S)
    assert run.returncode == 0, "%s failed:\n%s" % (engine, run.stderr[-4000:])
    return run.stdout.splitlines()


@pytest.mark.parametrize("writer,reader", [("minitf", "tf"), ("tf", "minitf")])
def test_a_meta_graph_moves_between_engines(tmp_path, writer, reader):
    (tmp_path / "w").mkdir()
    (tmp_path / "r").mkdir()
    _run(writer, WRITE, tmp_path / "w")
    lines = _run(reader, READ, tmp_path / "w", tmp_path / "r")
    assert lines[0] == "variables ['theta:0'] train_op GradientDescent"
    assert lines[2] == "decreasing True"
    assert lines[3] == "summary tag MSE_1"      # (the op "mse" exists: names ignore case)
    assert lines[4] == "saved and restored again"


def test_imported_training_computes_what_the_writer_computes(tmp_path):
    """With a fixed start, TF training minitf's graph and minitf training TF's
    graph give the losses each engine gives its own graph."""
    out = {}
    for writer in ("minitf", "tf"):
        (tmp_path / writer).mkdir()
        (tmp_path / (writer + "-r")).mkdir()
        _run(writer, WRITE, tmp_path / writer, fixed=True)
    for writer, reader in (("minitf", "tf"), ("tf", "minitf"), ("minitf", "minitf"),
                           ("tf", "tf")):
        lines = _run(reader, READ, tmp_path / writer, tmp_path / (writer + "-r"), fixed=True)
        out[(writer, reader)] = [float(v) for v in lines[1].split()[1:]]
    reference = out[("tf", "tf")]
    for key, losses in out.items():
        assert np.allclose(losses, reference, rtol=1e-5), (key, losses, reference)


GRAPH = """
import sys
import numpy as np
from engine import tf
x = tf.placeholder(tf.float32, [None, 3], name="x")
w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 4, name="w")
h = tf.nn.relu(tf.matmul(x, w) - 1.0, name="h")
p = tf.nn.softmax(h, name="p")
s = tf.reduce_sum(tf.cast(tf.argmax(p, axis=1), tf.float32) + tf.reduce_mean(h), name="s")
c = tf.concat([h, tf.ones_like(h)], axis=1, name="c")
open(sys.argv[1], "wb").write(tf.get_default_graph().as_graph_def().SerializeToString())
with tf.Session() as sess:
    print(np.round(sess.run([p, s, c], {x: [[1, 2, 3], [0, -1, 4]]})[0], 5).tolist())
"""

IMPORT = """
import sys
import numpy as np
from engine import tf
gd = tf.GraphDef()
gd.ParseFromString(open(sys.argv[1], "rb").read())
p, s = tf.import_graph_def(gd, return_elements=["p:0", "s:0"], name="")
with tf.Session() as sess:
    print(np.round(sess.run([p, s], {"x:0": [[1, 2, 3], [0, -1, 4]]})[0], 5).tolist())
"""


@pytest.mark.parametrize("writer,reader", [("minitf", "tf"), ("tf", "minitf")])
def test_a_graph_def_moves_between_engines(tmp_path, writer, reader):
    path = tmp_path / "graph.pb"
    written = _run(writer, GRAPH, path)
    assert _run(reader, IMPORT, path) == written


def test_the_recorded_tf_op_defs_are_current(tmp_path):
    python = harness.oracle_python()
    if python is None or not Path(python).exists():
        pytest.skip("real TensorFlow not available")
    current = (REPO / "minitf" / "framework" / "tf_op_defs.pbtxt").read_text()
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import record_tf_op_defs
    finally:
        sys.path.remove(str(REPO / "scripts"))
    from minitf.framework import op_def
    names = sorted(r.name for r in op_def.all_op_defs())
    run = subprocess.run([python, "-c", record_tf_op_defs.ORACLE], input="\n".join(names),
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout == current, "run scripts/record_tf_op_defs.py: TF's op definitions " \
        "changed (or minitf declares new op types)"
