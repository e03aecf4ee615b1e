"""TFRecord files: the writer, the iterator, the TFRecordReader op and
TFRecordDataset; compression; TF's errors for damaged files (the messages and
offsets were checked against TF 2.21, see tests/conformance/programs/tf_records.py)."""
import re
import zlib

import numpy as np
import pytest

import minitf.compat.v1 as tf
from minitf.data import remote

RECORDS = [b"one", b"", b"three" * 10, b"\x00\xff"]
OFFSETS = [0, 19, 35, 101]          # 16 framing bytes per record + its length


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def write(path, records=RECORDS, options=None):
    with tf.python_io.TFRecordWriter(str(path), options) as writer:
        for r in records:
            writer.write(r)
    return str(path)


def read_all(path, options=None):
    return list(tf.python_io.tf_record_iterator(str(path), options))


@pytest.mark.parametrize("options", [None, "GZIP", "ZLIB",
                                     tf.python_io.TFRecordOptions("GZIP", compression_level=9),
                                     tf.python_io.TFRecordOptions(
                                         tf.python_io.TFRecordCompressionType.ZLIB,
                                         input_buffer_size=5, output_buffer_size=3)])
def test_round_trip(tmp_path, options):
    path = write(tmp_path / "r.tfrecord", RECORDS + ["text \u00e9", bytearray(b"ab")], options)
    assert read_all(path, options) == RECORDS + ["text \u00e9".encode(), b"ab"]


def test_compressed_files_are_zlib_streams_of_the_plain_file(tmp_path):
    """GZIP/ZLIB compress the whole stream of framed records, not each record."""
    plain = open(write(tmp_path / "p"), "rb").read()
    gz = open(write(tmp_path / "g", options="GZIP"), "rb").read()
    zz = open(write(tmp_path / "z", options="ZLIB"), "rb").read()
    assert gz[:2] == b"\x1f\x8b" and zlib.decompress(gz, 31) == plain
    assert zz[:1] == b"\x78" and zlib.decompress(zz) == plain
    # TF's window_bits replaces the whole value: 15 with GZIP writes a zlib header
    wb = open(write(tmp_path / "w", options=tf.io.TFRecordOptions("GZIP", window_bits=15)),
              "rb").read()
    assert wb == zz


def test_flush_makes_the_records_so_far_readable(tmp_path):
    path = str(tmp_path / "f.gz")
    writer = tf.io.TFRecordWriter(path, "GZIP")
    writer.write(b"first")
    writer.flush()
    assert read_all(path, "GZIP") == [b"first"]      # a stream without its end yet
    writer.write(b"second")
    writer.close()
    assert read_all(path, "GZIP") == [b"first", b"second"]


def test_writer_errors(tmp_path):
    writer = tf.io.TFRecordWriter(str(tmp_path / "c"))
    with pytest.raises(TypeError, match="bytes or str, not int"):
        writer.write(3)
    writer.close()
    writer.close()                                       # twice is fine
    with pytest.raises(tf.errors.FailedPreconditionError, match="Writer is closed."):
        writer.write(b"x")
    with pytest.raises(tf.errors.FailedPreconditionError, match="Writer is closed."):
        writer.flush()
    with pytest.raises(tf.errors.NotFoundError, match="x; No such file or directory"):
        tf.io.TFRecordWriter(str(tmp_path / "no" / "x"))
    with pytest.raises(tf.errors.FailedPreconditionError, match="Is a directory"):
        tf.io.TFRecordWriter(str(tmp_path))


def test_options_are_checked_never_ignored(tmp_path):
    with pytest.raises(ValueError, match='Not a valid compression_type: "BZIP"'):
        tf.io.TFRecordOptions("BZIP")
    with pytest.raises(ValueError, match='Not a valid compression_type: "BZIP"'):
        tf.io.TFRecordWriter(str(tmp_path / "b"), "BZIP")
    with pytest.raises(ValueError, match="compression_level tune zlib compression"):
        tf.io.TFRecordWriter(str(tmp_path / "l"), tf.io.TFRecordOptions(compression_level=3))
    with pytest.raises(tf.errors.UnimplementedError, match="flush_mode Z_NO_FLUSH"):
        tf.io.TFRecordWriter(str(tmp_path / "m"), tf.io.TFRecordOptions("GZIP", flush_mode=2))
    with pytest.raises(ValueError, match='Not a valid compression_type: "BZIP"'):
        tf.TFRecordReader(options="BZIP")
    with pytest.raises(TypeError, match="Expected string"):
        tf.data.TFRecordDataset("x", compression_type=tf.io.TFRecordOptions("GZIP"))
    with pytest.raises(tf.errors.UnimplementedError, match="interleave"):
        tf.data.TFRecordDataset("x", num_parallel_reads=2)
    opts = tf.io.TFRecordOptions(tf.io.TFRecordCompressionType.GZIP)
    assert tf.io.TFRecordOptions.get_compression_type_string(opts) == "GZIP"
    assert tf.io.TFRecordOptions.get_compression_type_string(None) == ""


def _damaged(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def flip(data, i):
    return data[:i] + bytes([data[i] ^ 1]) + data[i + 1:]


@pytest.mark.parametrize("name, change, count, message", [
    ("length_crc_first", lambda d: flip(d, 0), 0,
     "corrupted record at 0 (Is this even a TFRecord file?)"),
    ("length_crc_third", lambda d: flip(d, 40), 2, "corrupted record at 35$"),
    ("data_crc", lambda d: flip(d, 50), 2, "corrupted record at 47$"),
    ("cut_in_data", lambda d: d[:60], 2,
     "truncated record at 35' failed with Read less bytes than requested"),
    ("cut_after_header", lambda d: d[:113], 3, "truncated record at 101'"),
])
def test_damaged_files_lose_data_where_tf_says(tmp_path, name, change, count, message):
    raw = open(write(tmp_path / "good"), "rb").read()
    path = _damaged(tmp_path, name, change(raw))
    it = tf.io.tf_record_iterator(path)
    got = []
    with pytest.raises(tf.errors.DataLossError, match=re.escape(message).replace("\\$", "$")):
        for r in it:
            got.append(r)
    assert got == RECORDS[:count]
    with pytest.raises(tf.errors.DataLossError):         # and it stays broken
        next(it)


def test_a_file_cut_inside_a_header_just_ends(tmp_path):
    raw = open(write(tmp_path / "good"), "rb").read()
    assert read_all(_damaged(tmp_path, "cut", raw[:OFFSETS[3] + 8])) == RECORDS[:3]
    assert read_all(_damaged(tmp_path, "empty", b"")) == []


def test_damaged_compressed_files(tmp_path):
    gz = open(write(tmp_path / "g", options="GZIP"), "rb").read()
    with pytest.raises(tf.errors.DataLossError, match="inflate\\(\\) failed with error -3: "
                       "incorrect header check"):
        read_all(write(tmp_path / "plain"), "GZIP")
    big = open(write(tmp_path / "big", [bytes(range(256)) * 8] * 3, "GZIP"), "rb").read()
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 0' failed with "
                       "EOF reached"):
        read_all(_damaged(tmp_path, "half", big[:len(big) // 2]), "GZIP")
    # two gzip members read as one stream; junk after a member is a bad header
    assert read_all(_damaged(tmp_path, "two", gz + gz), "GZIP") == RECORDS * 2
    with pytest.raises(tf.errors.DataLossError, match="incorrect header check"):
        read_all(_damaged(tmp_path, "junk", gz + b"junk"), "GZIP")


def test_missing_file_fails_at_once_a_directory_when_read(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="nope; No such file or directory"):
        tf.io.tf_record_iterator(str(tmp_path / "nope"))
    it = tf.io.tf_record_iterator(str(tmp_path))
    with pytest.raises(tf.errors.FailedPreconditionError, match="Is a directory"):
        next(it)


def test_tf_record_reader_keys_are_byte_offsets(tmp_path):
    a = write(tmp_path / "a.gz", options="GZIP")
    b = write(tmp_path / "b.gz", RECORDS[:1], options="GZIP")
    q = tf.FIFOQueue(5, tf.string)
    reader = tf.TFRecordReader(options=tf.io.TFRecordOptions("GZIP"))
    key, value = reader.read(q)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[a, b]]))
        sess.run(q.close())
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(sess.run([key, value]))
        assert [(k.decode(), v) for k, v in got] == \
            [("%s:%d" % (a, o), r) for o, r in zip(OFFSETS, RECORDS)] + [(b + ":0", b"one")]
        assert sess.run(reader.num_records_produced()) == 5
        assert sess.run(reader.num_work_units_completed()) == 2


def test_tf_record_reader_data_loss_names_the_offset(tmp_path):
    raw = open(write(tmp_path / "good"), "rb").read()
    path = _damaged(tmp_path, "bad", flip(raw, 50))
    q = tf.FIFOQueue(5, tf.string)
    value = tf.TFRecordReader().read(q)[1]
    with tf.Session() as sess:
        sess.run(q.enqueue(path))
        assert [sess.run(value) for _ in range(2)] == RECORDS[:2]
        for _ in range(2):                                # the reader stays on the damage
            with pytest.raises(tf.errors.DataLossError, match="corrupted record at 47"):
                sess.run(value)


def test_tf_record_dataset_and_its_wire_description(tmp_path):
    a = write(tmp_path / "a.z", options="ZLIB")
    b = write(tmp_path / "b.z", [b"last"], options="ZLIB")
    ds = tf.data.TFRecordDataset([a, b], compression_type="ZLIB")
    assert ds.output_types == tf.string and ds.output_shapes.as_list() == []
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got = [sess.run(nxt) for _ in range(5)]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)
    assert got == RECORDS + [b"last"]
    # the description a server rebuilds the pipeline from: same records
    again = remote.rebuild(remote.describe(ds))
    names = np.array([a.encode(), b.encode()], dtype=object)
    assert [e[0] for e in again._generate({0: names})] == got
