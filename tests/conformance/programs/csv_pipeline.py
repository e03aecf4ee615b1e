# The classic TF1 CSV input pipeline: a filename queue (string_input_producer,
# one epoch), a TextLineReader skipping the header line, decode_csv with
# defaults for missing values, batching, and QueueRunner threads under a
# Coordinator. The end of the epoch shows up as OutOfRangeError.
import os
import tempfile

from engine import tf


def msg(e):
    """The error's own text: TF prefixes "Graph execution error" and the node."""
    return [l for l in e.message.split("\n") if l and not l.startswith(("\t", " "))][-1]

tmp = tempfile.mkdtemp()
files = []
for name, rows in (("a.csv", ["1,2.5,x", "2,,y"]), ("b.csv", ["3,4.0,", "4,-1e1,w", "5,0,v"])):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("id,score,tag\n" + "\n".join(rows) + "\n")
    files.append(path)

filename_queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
reader = tf.TextLineReader(skip_header_lines=1)
key, line = reader.read(filename_queue)
ident, score, tag = tf.decode_csv(line, record_defaults=[[0], [-9.0], ["none"]])
print("static shapes:", ident.shape, score.shape, tag.shape, ident.dtype.name, tag.dtype.name)
batch = tf.train.batch([ident, score, tag], batch_size=2, allow_smaller_final_batch=True)
print("batch shapes:", [t.shape for t in batch])

with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while not coord.should_stop():
            ids, scores, tags = sess.run(batch)
            print("batch:", ids.tolist(), scores.tolist(), tags.tolist())
    except tf.errors.OutOfRangeError:
        print("done: OutOfRangeError after one epoch")
    finally:
        coord.request_stop()
    coord.join(threads)
    print("records read:", sess.run(reader.num_records_produced()))

# The reader on its own: keys are file:line, counting the header line.
tf.reset_default_graph()
q = tf.FIFOQueue(5, tf.string)
r = tf.TextLineReader(skip_header_lines=1)
k, v = r.read(q)
ks, vs = r.read_up_to(q, 10)
with tf.Session() as sess:
    sess.run(q.enqueue_many([files + [os.path.join(tmp, "missing.csv")]]))
    sess.run(q.close())
    kk, vv = sess.run([k, v])
    print("one record:", os.path.basename(kk.decode()), vv)
    kk, vv = sess.run([ks, vs])
    print("read_up_to stops at the end of a file:", [os.path.basename(x.decode()) for x in kk], vv.tolist())
    kk, vv = sess.run([ks, vs])
    print("next file:", [os.path.basename(x.decode()) for x in kk], vv.tolist())
    try:
        sess.run(k)
    except tf.errors.NotFoundError as e:
        print("NotFoundError:", "missing.csv; No such file or directory" in e.message)
    try:
        sess.run(k)
    except tf.errors.OutOfRangeError as e:
        print("then OutOfRangeError:", "is closed and has insufficient elements" in e.message)
    print("produced:", sess.run(r.num_records_produced()))
    sess.run(r.reset())
    print("after reset:", sess.run(r.num_records_produced()))

# decode_csv's errors, in TF's words (the first line of the message).
tf.reset_default_graph()
with tf.Session() as sess:
    cases = [
        (["1,2"], [[1], [2], [3]], {}),
        (["1,x,3"], [[1], [2], [3]], {}),
        (["1,,3"], [[1], tf.zeros([0], tf.int32), [3]], {}),
        (["1.5,2"], [[1], [2.0]], {}),
        (["7,2.5x"], [[1], [2.0]], {}),
        (["1,99999999999"], [[1], [1]], {}),
        (['a,b"c'], [[""], [""]], {}),
    ]
    for records, defaults, kw in cases:
        try:
            sess.run(tf.decode_csv(records, defaults, **kw))
        except tf.errors.InvalidArgumentError as e:
            print("InvalidArgumentError:", msg(e))
    out = sess.run(tf.decode_csv(['"a,b";NA;1e2;-3', 'c;7;;'], [[""], [0], [1.5], [tf.constant(9, tf.int64)]],
                                 field_delim=";", na_value="NA"))
    print("quotes, delim, na_value:", [o.tolist() for o in out], [o.dtype for o in out])
    print("no quote parsing:", sess.run(tf.decode_csv(['"a"'], [[""]], use_quote_delim=False)))
    print("string_to_number:", sess.run(tf.string_to_number(["1.5", "-2", " 3"])),
          sess.run(tf.string_to_number(["12"], tf.int64)))
    try:
        sess.run(tf.string_to_number(["3.5"], tf.int32))
    except tf.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", "could not correctly convert string: 3.5" in e.message)
    print("read_file:", sess.run(tf.read_file(files[0])).splitlines()[0])
