# tf.data element order for the deterministic transformations (compare with
# the queue pipelines): repeat, batch, interleave, take, skip, filter, map,
# padded_batch, from_tensor_slices of a dict, initializable iterators.
from engine import tf


def drain(dataset, limit=100):
    it = tf.data.make_one_shot_iterator(dataset)
    nxt = it.get_next()
    out = []
    with tf.Session() as sess:
        try:
            while len(out) < limit:
                v = sess.run(nxt)
                out.append(v.tolist() if hasattr(v, "tolist") else v)
        except tf.errors.OutOfRangeError:
            out.append("End")
    return out


D = tf.data.Dataset
print("range.repeat(2).batch(4):", drain(D.range(5).repeat(2).batch(4)))
print("batch(4).repeat(2):", drain(D.range(5).batch(4).repeat(2)))
print("drop_remainder:", drain(D.range(7).batch(3, drop_remainder=True)))
print("interleave c=2 b=1:", drain(D.range(1, 4).interleave(
    lambda x: D.from_tensors(x).repeat(x), cycle_length=2, block_length=1)))
print("interleave c=2 b=3:", drain(D.range(1, 5).interleave(
    lambda x: D.range(10 * x, 10 * x + x), cycle_length=2, block_length=3)))
print("skip/take:", drain(D.range(10).skip(3).take(4)))
print("take(-1):", drain(D.range(3).take(-1)))
print("filter/map:", drain(D.range(10).filter(lambda x: x % 3 > 0).map(lambda x: x * x)))
print("map to tuple:", drain(D.range(3).map(lambda x: (x, tf.cast(x, tf.float32) / 2)).batch(2)))
print("padded_batch:", drain(D.range(1, 5).map(lambda x: tf.range(1, x + 1)).padded_batch(2, padded_shapes=[None])))
print("padded to 5:", drain(D.range(1, 3).map(lambda x: tf.range(1, x + 1)).padded_batch(2, padded_shapes=[5], padding_values=tf.constant(-1, tf.int64))))
print("dict slices:", drain(D.from_tensor_slices({"a": [1, 2], "b": [[1.5, 2.5], [3.5, 4.5]]})))
print("prefetch:", drain(D.range(4).prefetch(2)))
print("shuffle keeps elements:", sorted(drain(D.range(8).shuffle(4, seed=1))[:-1]))
ds = D.range(3).map(lambda x: x * 10)
print("types/shapes:", ds.output_types.name, ds.output_shapes, D.range(3).batch(2).output_shapes)

x = tf.placeholder(tf.int64, [None])
it = tf.data.make_initializable_iterator(D.from_tensor_slices(x).map(lambda v: v + 1))
nxt = it.get_next()
with tf.Session() as sess:
    try:
        sess.run(nxt)
    except tf.errors.FailedPreconditionError:
        print("before initializer: FailedPreconditionError")
    sess.run(it.initializer, {x: [1, 2, 3]})
    print("initializable:", sess.run(nxt), sess.run(nxt))
    sess.run(it.initializer, {x: [7]})
    print("re-initialized:", sess.run(nxt))
    try:
        sess.run(nxt)
    except tf.errors.OutOfRangeError:
        print("OutOfRangeError at the end")
