"""tf.data: element order of each transformation (TF's), structures,
static shapes, iterators, errors."""
import numpy as np
import pytest

import minitf.compat.v1 as tf

D = tf.data.Dataset


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def drain(ds, limit=200):
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
            while len(out) < limit:
                out.append(sess.run(nxt))
    return out


def ints(ds):
    return [np.asarray(v).tolist() for v in drain(ds)]


def test_range_repeat_batch_take_skip():
    assert ints(D.range(3)) == [0, 1, 2]
    assert ints(D.range(2, 8, 2)) == [2, 4, 6]
    assert ints(D.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert ints(D.range(5).batch(2)) == [[0, 1], [2, 3], [4]]
    assert ints(D.range(5).batch(2, drop_remainder=True)) == [[0, 1], [2, 3]]
    assert ints(D.range(10).skip(7)) == [7, 8, 9]
    assert ints(D.range(10).take(2)) == [0, 1]
    assert ints(D.range(3).skip(-1)) == []
    assert ints(D.range(3).repeat(2).take(tf.constant(4, tf.int64))) == [0, 1, 2, 0]


def test_infinite_repeat_with_take():
    assert ints(D.range(2).repeat().take(5)) == [0, 1, 0, 1, 0]


def test_map_filter_and_structures():
    assert ints(D.range(6).filter(lambda x: tf.equal(x % 2, 0)).map(lambda x: x * 10)) == [0, 20, 40]
    pairs = drain(D.from_tensor_slices(([1, 2], [[1.0, 2.0], [3.0, 4.0]]))
                  .map(lambda a, b: (a + 1, tf.reduce_sum(b))))
    assert [(int(a), float(b)) for a, b in pairs] == [(2, 3.0), (3, 7.0)]
    d = drain(D.from_tensor_slices({"x": [1, 2], "y": ["a", "b"]}).map(lambda e: e))
    assert [(int(e["x"]), e["y"]) for e in d] == [(1, b"a"), (2, b"b")]
    assert [v.tolist() for v in drain(D.from_tensors([1, 2]).repeat(2))] == [[1, 2], [1, 2]]


def test_static_types_and_shapes():
    ds = D.from_tensor_slices((np.zeros((4, 3), np.float32), np.arange(4)))
    assert ds.output_shapes[0].as_list() == [3]
    b = ds.batch(2)
    assert b.output_shapes[0].as_list() == [None, 3]
    assert ds.batch(2, drop_remainder=True).output_shapes[1].as_list() == [2]
    x, y = b.make_one_shot_iterator().get_next()
    assert x.dtype == tf.float32 and x.shape.as_list() == [None, 3]
    assert y.dtype == tf.int64


def test_interleave_order_matches_tf():
    # TF's documented example: cycle_length=2, block_length=4 over [1..5]
    ds = D.range(1, 6).interleave(lambda x: D.from_tensors(x).repeat(6),
                                  cycle_length=2, block_length=4)
    assert ints(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3,
                        4, 4, 5, 5, 5, 5, 5, 5]
    # an inner dataset ending frees its slot, refilled when the cycle returns
    ds = D.range(1, 4).interleave(lambda x: D.range(x), cycle_length=2, block_length=1)
    assert ints(ds) == [0, 0, 1, 0, 1, 2]
    assert ints(D.range(3).flat_map(lambda x: D.range(x))) == [0, 0, 1]


def test_padded_batch():
    ds = D.range(1, 4).map(lambda x: tf.range(x))
    assert ints(ds.padded_batch(2, padded_shapes=[None])) == [[[0, 0], [0, 1]], [[0, 1, 2]]]
    assert ints(ds.padded_batch(3, padded_shapes=[4])) == [
        [[0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 2, 0]]]
    with tf.Session() as sess:
        nxt = ds.padded_batch(3, padded_shapes=[2]).make_one_shot_iterator().get_next()
        with pytest.raises(tf.errors.InvalidArgumentError, match="pad to a smaller size"):
            sess.run(nxt)


def test_batch_of_unequal_shapes_fails_like_tf():
    ds = D.range(1, 3).map(lambda x: tf.range(x)).batch(2)
    with tf.Session() as sess:
        nxt = ds.make_one_shot_iterator().get_next()
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Cannot batch tensors with different shapes in component 0. "
                                 r"First element had shape \[1\] and element 1 had shape \[2\]"):
            sess.run(nxt)


def test_shuffle_is_a_permutation_seeded_and_reshuffled_each_epoch():
    vals = ints(D.range(20).shuffle(5, seed=4).repeat(2))
    assert sorted(vals[:20]) == list(range(20)) and sorted(vals[20:]) == list(range(20))
    assert vals[:20] != list(range(20)) and vals[:20] != vals[20:]
    tf.reset_default_graph()
    assert ints(D.range(20).shuffle(5, seed=4).repeat(2)) == vals
    same = ints(D.range(10).shuffle(4, seed=1, reshuffle_each_iteration=False).repeat(2))
    assert same[:10] == same[10:]


def test_text_line_dataset(tmp_path):
    a = tmp_path / "a.txt"
    a.write_bytes(b"x\r\ny\n")
    b = tmp_path / "b.txt"
    b.write_bytes(b"z")
    assert drain(D.from_tensors(0).flat_map(
        lambda _: tf.data.TextLineDataset([str(a), str(b)]))) == [b"x", b"y", b"z"]
    assert drain(tf.data.TextLineDataset(str(a)).skip(1)) == [b"y"]
    nxt = tf.data.TextLineDataset(str(tmp_path / "nope")).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="nope; No such file"):
            sess.run(nxt)


def test_initializable_iterator_with_a_placeholder():
    x = tf.placeholder(tf.int64, [None])
    it = tf.data.make_initializable_iterator(D.from_tensor_slices(x).batch(2))
    nxt = it.get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="has not been initialized"):
            sess.run(nxt)
        sess.run(it.initializer, {x: [1, 2, 3]})
        assert sess.run(nxt).tolist() == [1, 2]
        sess.run(it.initializer, {x: [9]})            # restart from the beginning
        assert sess.run(nxt).tolist() == [9]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)


def test_one_shot_iterator_state_is_per_session():
    nxt = D.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as s1, tf.Session() as s2:
        assert [s1.run(nxt), s1.run(nxt), s2.run(nxt)] == [0, 1, 0]


def test_concatenate_zip_prefetch():
    assert ints(D.range(2).concatenate(D.range(5, 6)).prefetch(1)) == [0, 1, 5]
    z = drain(D.zip((D.range(3), D.range(10, 12))))
    assert [(int(a), int(b)) for a, b in z] == [(0, 10), (1, 11)]


def test_build_time_errors():
    with pytest.raises(ValueError, match="must return a `tf.bool` scalar"):
        D.range(3).filter(lambda x: x + 1)
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        D.range(3).interleave(lambda x: x, cycle_length=1)
    with pytest.raises(RuntimeError, match="eager mode"):
        iter(D.range(3))


def _every_kind_of_pipeline():
    text = np.arange(8, dtype=np.float32)
    ds = (tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(text),
                               tf.data.Dataset.range(8)))
          .map(lambda a, b: (a * 2.0, b + 1))
          .filter(lambda a, b: tf.greater(b, 1))
          .concatenate(tf.data.Dataset.from_tensors((np.float32(-1), np.int64(-1))))
          .shuffle(4, seed=3).skip(1).take(5).padded_batch(2, ([], []))
          .prefetch(1))
    it = ds.make_initializable_iterator(shared_name="remote_pipeline")
    return it, it.get_next()


def test_an_iterator_in_a_remote_session_lives_on_its_task():
    """The pipeline (functions included) crosses the wire as plain data and runs
    on the task the iterator op is placed on: its resource is in that server's
    resource manager, and every pipeline kind gives what it gives locally."""
    from minitf.distributed import launcher
    from minitf.distributed.inspect import cluster_state
    with tf.Graph().as_default():
        it, nxt = _every_kind_of_pipeline()
        with tf.Session() as sess:
            sess.run(it.initializer)
            local_values = [sess.run(nxt) for _ in range(3)]
    with launcher.LocalCluster({"worker": 2}, echo=False) as cluster, \
            tf.Graph().as_default():
        with tf.device("/job:worker/task:1"):
            it, nxt = _every_kind_of_pipeline()
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(it.initializer)
            remote_values = [sess.run(nxt) for _ in range(3)]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)
        for (la, lb), (ra, rb) in zip(local_values, remote_values):
            np.testing.assert_array_equal(la, ra)
            np.testing.assert_array_equal(lb, rb)
        state = {t["task"]: t["resources"] for t in cluster_state(cluster)}
        holders = [task for task, resources in state.items()
                   for containers in resources.values() for res in containers.values()
                   for name, summary in res.items() if summary.get("kind") == "Iterator"]
        assert holders == ["/job:worker/replica:0/task:1"], state
