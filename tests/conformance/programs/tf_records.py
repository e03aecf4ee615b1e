# TFRecord files: TFRecordWriter (plain, GZIP, ZLIB and zlib options), byte for
# byte the file TF writes; tf_record_iterator; the TFRecordReader op with its
# "file:offset" keys, fed by string_input_producer; TFRecordDataset; reading
# files real TF wrote (tests/conformance/data); and the errors of missing,
# corrupted and truncated files (DataLossError with TF's offsets).
import hashlib
import os
import struct
import tempfile

from engine import tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "data")
tmp = tempfile.mkdtemp()


def path(name):
    return os.path.join(tmp, name)


def digest(name):
    data = open(name, "rb").read()
    return "%d bytes sha256 %s" % (len(data), hashlib.sha256(data).hexdigest()[:16])


def msg(e):
    """The error's own text: TF prefixes "Graph execution error" and the node."""
    return [l for l in e.message.split("\n") if l and not l.startswith(("\t", " "))][-1]


def short(key):
    name, _, offset = key.decode().rpartition(":")
    return "%s:%s" % (os.path.basename(name), offset)


records = [b"one", b"", b"three" * 10, "unicode \u00e9", bytearray(b"\x00\xff")]
many = [bytes([i % 251]) * (i * 37 % 1000) for i in range(300)]

# -- writing: the same bytes as TF ---------------------------------------------------------
print("names:", sorted(n for n in dir(tf.python_io) if not n.startswith("_")))
print("tf.io has them:", all(hasattr(tf.io, n) for n in ("TFRecordWriter", "tf_record_iterator",
                                                          "TFRecordOptions", "TFRecordCompressionType")))
C = tf.python_io.TFRecordCompressionType
print("compression types:", C.NONE, C.ZLIB, C.GZIP)
for options in (None, "", "GZIP", "ZLIB", tf.python_io.TFRecordOptions(C.GZIP),
                tf.python_io.TFRecordOptions("ZLIB", compression_level=9),
                tf.python_io.TFRecordOptions("GZIP", compression_level=1, mem_level=4),
                tf.python_io.TFRecordOptions("ZLIB", compression_strategy=2),
                tf.python_io.TFRecordOptions("GZIP", window_bits=15),
                tf.python_io.TFRecordOptions("ZLIB", window_bits=10, input_buffer_size=7,
                                             output_buffer_size=5)):
    label = options if not isinstance(options, tf.python_io.TFRecordOptions) else \
        {k: v for k, v in sorted(vars(options).items()) if v is not None}
    print("options", label, "->", repr(tf.python_io.TFRecordOptions.get_compression_type_string(options)))
    for name, recs in (("few", records), ("many", many)):
        with tf.python_io.TFRecordWriter(path(name), options=options) as writer:
            for r in recs:
                writer.write(r)
        print("   ", name, digest(path(name)))
with tf.io.TFRecordWriter(path("flushed"), "GZIP") as writer:
    writer.write(b"before flush")
    writer.flush()
    writer.write(b"after flush")
print("GZIP with a flush:", digest(path("flushed")))

writer = tf.io.TFRecordWriter(path("closed"))
writer.write(b"x")
writer.close()
writer.close()
for call in (lambda: writer.write(b"y"), writer.flush):
    try:
        call()
    except tf.errors.FailedPreconditionError as e:
        print("after close:", type(e).__name__, e.message)
writer = tf.io.TFRecordWriter(path("types"))
for bad in (3, None, [b"a"]):
    try:
        writer.write(bad)
    except TypeError:
        print("write(%s): TypeError" % type(bad).__name__)
writer.close()
for bad in ("BZIP", 5):
    try:
        tf.python_io.TFRecordOptions(bad)
    except ValueError as e:
        print("ValueError:", e)
try:
    tf.python_io.TFRecordWriter(path("no_such_dir/x.tfrecord"))
except tf.errors.NotFoundError as e:
    print("NotFoundError:", e.message.endswith("x.tfrecord; No such file or directory"))
try:
    tf.python_io.TFRecordWriter(tmp)
except tf.errors.FailedPreconditionError as e:
    print("FailedPreconditionError:", e.message.endswith("; Is a directory"))

# -- tf_record_iterator --------------------------------------------------------------------
with tf.io.TFRecordWriter(path("plain.tfrecord")) as w:
    for r in records:
        w.write(r)
with tf.io.TFRecordWriter(path("packed.tfrecord.gz"), "GZIP") as w:
    for r in records:
        w.write(r)
print("iterate:", list(tf.python_io.tf_record_iterator(path("plain.tfrecord"))))
print("iterate GZIP:", list(tf.io.tf_record_iterator(path("packed.tfrecord.gz"), options="GZIP")))
print("iterate GZIP with options:", len(list(tf.io.tf_record_iterator(
    path("packed.tfrecord.gz"), tf.io.TFRecordOptions(C.GZIP)))))
it = tf.io.tf_record_iterator(path("plain.tfrecord"))
print("next:", next(it), next(it))
for name, ct in (("tf_written.tfrecord", ""), ("tf_written.tfrecord.gz", "GZIP"),
                 ("tf_written.tfrecord.zz", "ZLIB")):
    got = list(tf.io.tf_record_iterator(os.path.join(DATA, name), ct))
    print("written by TF:", name, [struct.unpack("<3f", r) if len(r) == 12 else r for r in got])
    # minitf writes the very same file
    with tf.io.TFRecordWriter(path("again"), ct) as w:
        for r in got:
            w.write(r)
    print("    rewritten identical:", open(path("again"), "rb").read() ==
          open(os.path.join(DATA, name), "rb").read())

# -- broken files ---------------------------------------------------------------------------
raw = open(path("plain.tfrecord"), "rb").read()
plain_offsets = [0]
for r in records:
    plain_offsets.append(plain_offsets[-1] + 16 + len(bytes(r, "utf-8") if isinstance(r, str) else r))
print("record offsets:", plain_offsets)
packed = open(path("packed.tfrecord.gz"), "rb").read()
broken = {
    "header_crc_first": (bytes([raw[0] ^ 1]) + raw[1:], ""),
    "header_crc_third": (raw[:40] + bytes([raw[40] ^ 1]) + raw[41:], ""),
    "data_crc": (raw[:50] + bytes([raw[50] ^ 1]) + raw[51:], ""),
    "footer_crc": (raw[:99] + bytes([raw[99] ^ 1]) + raw[100:], ""),
    "cut_in_data": (raw[:60], ""),
    "cut_in_footer": (raw[:99], ""),
    "cut_after_full_header": (raw[:113], ""),
    "cut_in_header": (raw[:109], ""),
    "empty": (b"", ""),
    "gzip_read_plain": (packed, ""),
    "plain_read_as_gzip": (raw, "GZIP"),
    "gzip_cut": (packed[:len(packed) // 2], "GZIP"),
    "gzip_no_trailer": (packed[:-4], "GZIP"),
    "gzip_bad_data": (packed[:20] + bytes([packed[20] ^ 0x55]) + packed[21:], "GZIP"),
}
for name, (data, ct) in broken.items():
    with open(path(name), "wb") as f:
        f.write(data)
    try:
        it = tf.io.tf_record_iterator(path(name), ct)
        got = []
        for r in it:
            got.append(r)
        print("broken", name, "-> %d records" % len(got))
    except tf.errors.OpError as e:
        print("broken", name, "-> %d records, then %s: %s" % (len(got), type(e).__name__, e.message))
for label, name in (("a missing file", path("missing.tfrecord")), ("a directory", tmp)):
    where = "at creation"
    try:
        it = tf.io.tf_record_iterator(name)
        where = "when read"
        next(it)
    except tf.errors.OpError as e:
        print("iterator on %s: %s %s" % (label, type(e).__name__, where))

# -- the TFRecordReader op --------------------------------------------------------------------
print("TFRecordReader supports_serialize:", tf.TFRecordReader().supports_serialize)
for bad in ("BZIP",):
    try:
        tf.TFRecordReader(options=bad)
    except ValueError as e:
        print("TFRecordReader(options=%r): ValueError: %s" % (bad, e))
tf.reset_default_graph()
names = tf.train.string_input_producer([path("plain.tfrecord"), os.path.join(DATA, "tf_written.tfrecord")],
                                       num_epochs=1, shuffle=False)
reader = tf.TFRecordReader()
key, value = reader.read(names)
print("ops:", reader.reader_ref.op.type, key.op.type, key.shape, value.shape)
print("attrs:", sorted(next(n for n in tf.get_default_graph().as_graph_def().node
                            if n.op == "TFRecordReaderV2").attr))
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            k, v = sess.run([key, value])
            print("   read", short(k), v)
    except tf.errors.OutOfRangeError:
        print("   then OutOfRangeError")
    coord.request_stop()
    coord.join(threads)
    print("   produced:", sess.run(reader.num_records_produced()),
          "files:", sess.run(reader.num_work_units_completed()))

tf.reset_default_graph()
q = tf.FIFOQueue(10, tf.string)
gz = tf.TFRecordReader(options=tf.python_io.TFRecordOptions("GZIP"))
print("compression attr:", next(n for n in tf.get_default_graph().as_graph_def().node
                                if n.op == "TFRecordReaderV2").attr["compression_type"].s)
ks, vs = gz.read_up_to(q, 4)
with tf.Session() as sess:
    sess.run(q.enqueue_many([[path("packed.tfrecord.gz"), os.path.join(DATA, "tf_written.tfrecord.gz")]]))
    sess.run(q.close())
    for _ in range(4):
        kk, vv = sess.run([ks, vs])
        print("   read_up_to:", [short(k) for k in kk], [len(v) for v in vv])
    try:
        sess.run(ks)
    except tf.errors.OutOfRangeError:
        print("   then OutOfRangeError")

# decode_raw of a record's payload
tf.reset_default_graph()
q = tf.FIFOQueue(10, tf.string)
k, v = tf.TFRecordReader(options="ZLIB").read(q)
row = tf.decode_raw(v, tf.float32)
with tf.Session() as sess:
    sess.run(q.enqueue(os.path.join(DATA, "tf_written.tfrecord.zz")))
    print("decode_raw:", [sess.run(row).tolist() for _ in range(4)])

# errors from the reader op, one reader per broken file
tf.reset_default_graph()
for name in ("header_crc_first", "data_crc", "cut_in_footer", "cut_in_header", "gzip_bad_data",
             "missing.tfrecord"):
    with tf.Graph().as_default():
        q = tf.FIFOQueue(5, tf.string)
        k, v = tf.TFRecordReader(options="GZIP" if name.startswith("gzip") else None).read(q)
        with tf.Session() as sess:
            sess.run(q.enqueue(path(name)))
            sess.run(q.close())
            n = 0
            try:
                while True:
                    sess.run(v)
                    n += 1
            except tf.errors.OutOfRangeError:
                print("reader on %s: %d records, then OutOfRangeError" % (name, n))
            except tf.errors.OpError as e:
                print("reader on %s: %d records, then %s: %s" % (name, n, type(e).__name__,
                                                              msg(e).split(tmp + "/")[-1]))

# -- tf.data.TFRecordDataset ------------------------------------------------------------------
tf.reset_default_graph()
ds = tf.data.TFRecordDataset([path("plain.tfrecord"), os.path.join(DATA, "tf_written.tfrecord")])
print("dataset:", ds.output_types, ds.output_shapes)
get = tf.data.make_one_shot_iterator(ds.batch(4)).get_next()
with tf.Session() as sess:
    try:
        while True:
            print("   batch", sess.run(get).tolist())
    except tf.errors.OutOfRangeError:
        print("   then OutOfRangeError")
for ct in ("GZIP", "ZLIB"):
    name = "tf_written.tfrecord." + ("gz" if ct == "GZIP" else "zz")
    ds = tf.data.TFRecordDataset(os.path.join(DATA, name), compression_type=ct)
    floats = ds.take(4).map(lambda r: tf.decode_raw(r, tf.float32))
    get = tf.data.make_one_shot_iterator(floats.batch(4)).get_next()
    with tf.Session() as sess:
        print("dataset", ct, sess.run(get).tolist())
get = tf.data.make_one_shot_iterator(tf.data.TFRecordDataset(path("data_crc"))).get_next()
with tf.Session() as sess:
    n = 0
    try:
        while True:
            sess.run(get)
            n += 1
    except tf.errors.DataLossError as e:
        print("dataset on data_crc: %d records, then DataLossError: %s" % (n, msg(e)))
