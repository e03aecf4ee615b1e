"""Readers, decode_csv, read_file, string_to_number: values, keys, counts,
and TF's errors (texts checked against TF 2.21)."""
import os
import threading

import numpy as np
import pytest

import minitf.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


@pytest.fixture
def files(tmp_path):
    def write(name, data):
        p = tmp_path / name
        p.write_bytes(data)
        return str(p)
    return write


def filename_queue(sess, names):
    q = tf.FIFOQueue(10, tf.string)
    sess.run(q.enqueue_many([names]))
    sess.run(q.close())
    return q


def drain(sess, fetch):
    out = []
    while True:
        try:
            out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            return out


def test_text_line_reader_keys_lines_and_header(files):
    a = files("a.txt", b"h\nx1\r\nx2")          # CRLF and no final newline
    b = files("b.txt", b"h\n\ny3\n")            # an empty line is a record
    with tf.Session() as sess:
        q = filename_queue(sess, [a, b])
        r = tf.TextLineReader(skip_header_lines=1)
        got = drain(sess, r.read(q))
        assert [(k.decode(), v) for k, v in got] == [
            (a + ":2", b"x1"), (a + ":3", b"x2"), (b + ":2", b""), (b + ":3", b"y3")]
        assert sess.run(r.num_records_produced()) == 4
        assert sess.run(r.num_work_units_completed()) == 2


def test_read_up_to_stays_in_one_file(files):
    a = files("a.txt", b"1\n2\n3\n")
    b = files("b.txt", b"4\n5\n")
    with tf.Session() as sess:
        q = filename_queue(sess, [a, b])
        r = tf.TextLineReader()
        ks, vs = r.read_up_to(q, 2)
        assert ks.shape.as_list() == [None]
        got = [sess.run(vs).tolist() for _ in range(3)]
        assert got == [[b"1", b"2"], [b"3"], [b"4", b"5"]]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(vs)


def test_missing_file_is_not_found_and_reading_goes_on(files, tmp_path):
    a = files("a.txt", b"ok\n")
    with tf.Session() as sess:
        q = filename_queue(sess, [str(tmp_path / "nope.txt"), a])
        k, v = tf.TextLineReader().read(q)
        with pytest.raises(tf.errors.NotFoundError, match="nope.txt; No such file or directory"):
            sess.run(v)
        assert sess.run(v) == b"ok"


def test_reset_and_state_survives_runs(files):
    a = files("a.txt", b"1\n2\n3\n")
    with tf.Session() as sess:
        q = tf.FIFOQueue(10, tf.string)
        sess.run(q.enqueue_many([[a, a]]))
        r = tf.TextLineReader()
        k, v = r.read(q)
        assert sess.run(v) == b"1"
        assert sess.run(v) == b"2"              # the position lives in the resource
        sess.run(r.reset())
        assert sess.run(r.num_records_produced()) == 0
        assert sess.run(k).decode() == a + ":1"   # the next file, from the start


def test_reader_read_times_out_without_losing_a_filename(files):
    a = files("a.txt", b"1\n")
    q = tf.FIFOQueue(10, tf.string)
    r = tf.TextLineReader()
    k, v = r.read(q)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(v, options=tf.RunOptions(timeout_in_ms=150))
        sess.run(q.enqueue(a))
        assert sess.run(v) == b"1"


def test_readers_are_private_per_session(files):
    a = files("a.txt", b"1\n2\n")
    q = tf.FIFOQueue(10, tf.string, shared_name="names")
    r = tf.TextLineReader()
    k, v = r.read(q)
    with tf.Session() as s1, tf.Session() as s2:
        for s in (s1, s2):
            s.run(q.enqueue_many([[a]]))
        assert s1.run(v) == b"1" and s2.run(v) == b"1"


def test_two_threads_share_one_reader_without_duplicates(files):
    names = [files("f%d.txt" % i, b"".join(b"%d\n" % (100 * i + j) for j in range(50)))
             for i in range(4)]
    with tf.Session() as sess:
        q = filename_queue(sess, names)
        v = tf.TextLineReader().read(q)[1]
        out = []

        def work():
            out.extend(drain(sess, v))
        ts = [threading.Thread(target=work) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(20)
        assert sorted(int(x) for x in out) == sorted(100 * i + j for i in range(4)
                                                     for j in range(50))


def test_whole_file_and_fixed_length_readers(files):
    a = files("a.bin", b"abcdefghij")
    with tf.Session() as sess:
        q = filename_queue(sess, [a, a])
        kw, vw = tf.WholeFileReader().read(q)
        assert sess.run([kw, vw]) == [a.encode(), b"abcdefghij"]
        q2 = filename_queue(sess, [a])
        fr = tf.FixedLengthRecordReader(3, header_bytes=1, footer_bytes=1)
        got = drain(sess, fr.read(q2))
        assert [(k.decode(), v) for k, v in got] == [(a + ":0", b"bcd"), (a + ":1", b"efg")]
        q3 = filename_queue(sess, [a])
        hop = tf.FixedLengthRecordReader(4, hop_bytes=3)
        assert [v for _, v in drain(sess, hop.read(q3))] == [b"abcd", b"defg", b"ghij"]


def test_decode_csv_values_and_dtypes():
    out = tf.decode_csv(['1,2.5,3,"x,y",-7', " 2 ,inf,,z,"],
                        [[0], [0.0], [tf.constant(9, tf.int64)], [""], np.array([1.5])])
    assert [t.dtype.name for t in out] == ["int32", "float32", "int64", "string", "float64"]
    with tf.Session() as sess:
        vals = sess.run(out)
    assert vals[0].tolist() == [1, 2]
    assert vals[1].tolist() == [2.5, float("inf")]
    assert vals[2].tolist() == [3, 9]
    assert vals[3].tolist() == [b"x,y", b"z"]
    assert vals[4].tolist() == [-7.0, 1.5]


def test_decode_csv_keeps_record_shape_and_options():
    recs = tf.constant([["a|NA", "b|2"]])
    x, y = tf.decode_csv(recs, [[""], [5]], field_delim="|", na_value="NA")
    assert x.shape.as_list() == [1, 2]
    with tf.Session() as sess:
        assert sess.run(y).tolist() == [[5, 2]]
        assert sess.run(tf.decode_csv(['"q"'], [[""]], use_quote_delim=False))[0] == [b'"q"']
        assert sess.run(tf.decode_csv(['"say ""hi"""'], [[""]]))[0] == [b'say "hi"']
        assert sess.run(tf.decode_csv(["1,2,3"], [[0], [0]], select_cols=[0, 2]))[1] == [3]


@pytest.mark.parametrize("record,defaults,message", [
    ("1,2", [[1], [2], [3]], "Expect 3 fields but have 2 in record 0"),
    ("1,2,3", [[1], [2]], "Expect 2 fields but have 3 in record 0"),
    ("1,x,3", [[1], [2], [3]], "Field 1 in record 0 is not a valid int32: x"),
    ("1.5", [[1]], "Field 0 in record 0 is not a valid int32: 1.5"),
    ("1,99999999999", [[1], [1]], "Field 1 in record 0 is not a valid int32: 99999999999"),
    ("7,2.5x", [[1], [2.0]], "Field 1 in record 0 is not a valid float: 2.5x"),
    ("1_0", [np.array([1.0])], "Field 0 in record 0 is not a valid double: 1_0"),
    ("x", [np.array([1], np.int64)], "Field 0 in record 0 is not a valid int64: x"),
    ('a,b"c', [[""], [""]], "Unquoted fields cannot have quotes/CRLFs inside"),
    ('"ab"c', [[""]], "Quote inside a string has to be escaped by another quote"),
    ('"ab', [[""]], "Quoted field has to end with quote followed by delim or end"),
])
def test_decode_csv_errors(record, defaults, message):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(tf.decode_csv([record], defaults))
    assert info.value.message.split("\n")[0] == message


def test_decode_csv_required_field_and_build_errors():
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Field 1 is required but missing in record 1!"):
            sess.run(tf.decode_csv(["1,2", "3,"], [[0], tf.zeros([0], tf.int32)]))
    with pytest.raises(ValueError, match="Length of select_cols and record_defaults"):
        tf.decode_csv(["1"], [[1]], select_cols=[0, 1])
    with pytest.raises(ValueError, match="length-0 or length-1 vector"):
        tf.decode_csv(["1"], [[1, 2]])


def test_read_file_and_string_to_number(files, tmp_path):
    a = files("a.txt", b"hello\n")
    with tf.Session() as sess:
        assert sess.run(tf.read_file(a)) == b"hello\n"
        with pytest.raises(tf.errors.NotFoundError, match="nope; No such file or directory"):
            sess.run(tf.read_file(str(tmp_path / "nope")))
        n = tf.string_to_number(["1.5", " -2", "1e3", "nan"])
        assert n.dtype.name == "float32"
        v = sess.run(n)
        assert v[:3].tolist() == [1.5, -2.0, 1000.0] and np.isnan(v[3])
        assert sess.run(tf.string_to_number(["12"], tf.int64)).tolist() == [12]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="StringToNumberOp could not correctly convert string: 3.5"):
            sess.run(tf.string_to_number(["3.5"], tf.int32))


def test_count_up_to():
    v = tf.Variable(0, name="c")
    up = tf.count_up_to(v, 2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(up), sess.run(up)] == [0, 1]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(up)
        assert sess.run(v) == 2
