# Matrices (tf.linalg), n-d indexing, masks, top_k and sorting: values, static
# shapes, errors and gradients against TF's.
import numpy as np

from engine import tf


def show(label, value):
    value = np.asarray(value)
    if value.dtype.kind == "f":
        value = np.round(value.astype(np.float64), 4) + 0.0
    print(label, value.tolist())


a = tf.constant([[4.0, 1.0, 2.0], [1.0, 3.0, 0.5], [2.0, 0.5, 5.0]], tf.float64, name="a")
batch = tf.constant(np.stack([np.eye(2) * 2 + 0.5, [[1.0, 2.0], [3.0, 4.0]]]), tf.float64)
rhs = tf.constant([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]], tf.float64)
x = tf.constant([[1.0, 5.0, 2.0, 5.0], [3.0, -1.0, 4.0, 0.0]], name="x")
m = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="m")

outputs = {
    "inverse": tf.matrix_inverse(a), "inverse adjoint": tf.linalg.inv(batch, adjoint=True),
    "det": tf.matrix_determinant(a), "det batch": tf.linalg.det(batch),
    "cholesky": tf.cholesky(a), "solve": tf.matrix_solve(a, rhs),
    "solve adjoint": tf.linalg.solve(a, rhs, adjoint=True),
    "triangular lower": tf.matrix_triangular_solve(a, rhs),
    "triangular upper adjoint": tf.linalg.triangular_solve(a, rhs, lower=False, adjoint=True),
    "diag": tf.matrix_diag([1.0, 2.0, 3.0]), "diag k=1": tf.linalg.diag([1.0, 2.0], k=1),
    "diag_part": tf.matrix_diag_part(a), "set_diag": tf.matrix_set_diag(a, [9.0, 8.0, 7.0]),
    "band_part lower": tf.matrix_band_part(a, -1, 0),
    "band_part 0 1": tf.linalg.band_part(a, 0, 1),
    "eye": tf.eye(3), "eye 2x3 batch": tf.eye(2, num_columns=3, batch_shape=[2]),
    "trace": tf.trace(a), "matrix_transpose": tf.matrix_transpose(batch),
    "tensordot 1": tf.tensordot(m, tf.constant([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]), axes=1),
    "tensordot [[0],[0]]": tf.tensordot(m, m, axes=[[0], [0]]),
    "tensordot 0": tf.tensordot(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0, 5.0]), 0),
    "einsum matmul": tf.einsum("ij,jk->ik", m, tf.constant([[1.0, 2.0], [0.0, 1.0]])),
    "einsum batch": tf.einsum("bij,bjk->bik", batch, batch),
    "einsum dot": tf.einsum("i,i->", tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])),
    "einsum outer implicit": tf.einsum("i,j", tf.constant([1.0, 2.0]),
                                       tf.constant([3.0, 4.0, 5.0])),
    "einsum transpose": tf.einsum("ij->ji", m), "einsum sum": tf.einsum("ij->", m),
    "einsum rowwise": tf.einsum("ij,ij->i", m, m),
    "gather_nd": tf.gather_nd(x, [[0, 1], [1, 2]]), "gather_nd rows": tf.gather_nd(x, [[1]]),
    "scatter_nd": tf.scatter_nd([[0], [2], [0]], [1.0, 2.0, 3.0], [4]),
    "scatter_nd rows": tf.scatter_nd([[1]], [[5.0, 6.0]], [3, 2]),
    "boolean_mask": tf.boolean_mask(x, [False, True]),
    "boolean_mask 2-d": tf.boolean_mask(x, tf.greater(x, 2.0)),
    "boolean_mask axis 1": tf.boolean_mask(x, [True, False, True, False], axis=1),
    "sequence_mask": tf.sequence_mask([1, 3, 0], 4),
    "sequence_mask float": tf.sequence_mask([2, 1], dtype=tf.float32),
    "where 1-arg": tf.where([[True, False], [False, True]]),
    "where 3-arg": tf.where([True, False], [1, 2], [3, 4]),
    "top_k values": tf.nn.top_k(x, 2).values, "top_k indices": tf.nn.top_k(x, 2).indices,
    "math.top_k k=4": tf.math.top_k(x, k=4)[0],
    "in_top_k": tf.nn.in_top_k(x, [1, 0], 1), "in_top_k k=3": tf.nn.in_top_k(x, [3, 1], 3),
    "in_top_k inf": tf.nn.in_top_k(tf.constant([[1.0, np.inf]]), [0], 2),
    "sort": tf.sort(x), "sort descending": tf.sort(x, direction="DESCENDING"),
    "sort axis 0": tf.sort(x, axis=0), "argsort": tf.argsort(x),
    "argsort descending": tf.argsort(x, direction="DESCENDING"),
}
for label in ("inverse", "det batch", "diag", "eye 2x3 batch", "trace", "tensordot 1",
              "einsum batch", "gather_nd", "boolean_mask", "sequence_mask", "top_k values",
              "in_top_k", "sort", "argsort"):
    t = outputs[label]
    print("static:", label, t.op.type, t.shape, t.dtype)

w = tf.constant([[2.0, 1.0], [1.0, 3.0]], tf.float64)
v = tf.constant([[1.0, 0.5], [0.25, 2.0]], tf.float64)
p = tf.constant([[5.0, 1.0, 4.0], [2.0, 6.0, 3.0]])
emb = tf.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
grads = {
    "inverse": tf.gradients(tf.reduce_sum(tf.matrix_inverse(w) * v), w)[0],
    "det": tf.gradients(tf.matrix_determinant(w), w)[0],
    "cholesky": tf.gradients(tf.reduce_sum(tf.cholesky(w) * v), w)[0],
    "solve": tf.gradients(tf.reduce_sum(tf.matrix_solve(w, v)), [w, v]),
    "triangular": tf.gradients(tf.reduce_sum(tf.matrix_triangular_solve(w, v)), [w, v]),
    "diag_part": tf.gradients(tf.reduce_sum(tf.matrix_diag_part(w) * [1.0, 2.0]), w)[0],
    "set_diag": tf.gradients(tf.reduce_sum(tf.matrix_set_diag(w, [3.0, 4.0]) * v), w)[0],
    "band_part": tf.gradients(tf.reduce_sum(tf.matrix_band_part(w, 0, -1) * v), w)[0],
    "trace": tf.gradients(tf.trace(w * v), w)[0],
    "einsum": tf.gradients(tf.reduce_sum(tf.einsum("ij,jk->ik", w, v) * v), [w, v]),
    "einsum summed letter": tf.gradients(tf.reduce_sum(tf.einsum("ij,k->k", w,
                                                                 v[0])), w)[0],
    "tensordot": tf.gradients(tf.reduce_sum(tf.tensordot(w, v, axes=[[0], [1]])), w)[0],
    "gather_nd": tf.gradients(tf.reduce_sum(tf.gather_nd(p, [[0, 2], [1, 1], [0, 2]])), p)[0],
    "scatter_nd": tf.gradients(tf.reduce_sum(tf.scatter_nd([[1], [0]], tf.reduce_sum(p, 1),
                                                           [3]) * [1.0, 2.0, 3.0]), p)[0],
    "top_k": tf.gradients(tf.reduce_sum(tf.nn.top_k(p, 2).values * [[1.0, 10.0]]), p)[0],
    "sort": tf.gradients(tf.reduce_sum(tf.sort(p) * [1.0, 2.0, 3.0]), p)[0],
    # (TF gives gather's gradient as IndexedSlices; as a dense tensor it is minitf's.)
    "boolean_mask": tf.convert_to_tensor(tf.gradients(tf.reduce_sum(
        tf.boolean_mask(p, [True, False]) * 2.0), p)[0]),
    "gather rows": tf.convert_to_tensor(tf.gradients(tf.reduce_sum(
        tf.gather(emb, [2, 0, 2]) * [[1.0], [2.0], [3.0]]), emb)[0]),
    "gather axis 1": tf.convert_to_tensor(tf.gradients(tf.reduce_sum(
        tf.gather(emb, [1, 1], axis=1)), emb)[0]),
}
print("no gradient through in_top_k:", tf.gradients(tf.reduce_sum(tf.cast(
    tf.nn.in_top_k(p, [0, 1], 1), tf.float32)), p))

singular = tf.constant([[1.0, 2.0], [2.0, 4.0]])
not_positive = tf.cholesky(tf.constant([[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]]))
checks = {"inverse of a singular matrix": tf.matrix_inverse(singular),
          "solve with a singular matrix": tf.matrix_solve(singular, tf.ones([2, 1])),
          "gather_nd out of range": tf.gather_nd(x, [[0, 7]]),
          "scatter_nd out of range": tf.scatter_nd([[5]], [1.0], [3])}
with tf.Session() as sess:
    for name, value in sess.run(outputs).items():
        show(name, value)
    for name, value in sess.run(grads).items():
        if isinstance(value, list):
            for i, g in enumerate(value):
                show("d %s [%d]" % (name, i), g)
        else:
            show("d " + name, value)
    print("det of a singular matrix:", abs(sess.run(tf.matrix_determinant(singular))))
    chol = sess.run(not_positive)        # (TF leaves the upper triangle of a NaN one undefined)
    print("cholesky of [SPD, not positive]:", np.round(chol[0], 4).tolist(),
          np.isnan(np.tril(chol[1])[np.tri(2, dtype=bool)]).tolist())
    for label, t in checks.items():
        try:
            sess.run(t)
            print(label, "ran")
        except tf.errors.InvalidArgumentError as e:
            print(label, "->", type(e).__name__,
                  [line.split(", node name")[0] for line in e.message.splitlines()
                   if "not invertible" in line or "does not index into" in line][:1])
try:
    tf.nn.top_k(x, 5)
except ValueError:
    print("top_k k=5 of 4 columns: ValueError")
try:
    tf.einsum("ij,jk->ik", m, m)
except ValueError:
    print("einsum of mismatched dimensions: ValueError")
