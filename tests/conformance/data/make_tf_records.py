"""Writes the TFRecord files in this folder with real TensorFlow.

The tf_records conformance program reads them on both engines, so minitf is
checked against files TF wrote, not only against its own. Run with the oracle:

    ~/.cache/minitf/tf-venv/bin/python tests/conformance/data/make_tf_records.py tests/conformance/data
"""
import os, struct, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow.compat.v1 as tf
out = sys.argv[1]
records = [struct.pack("<3f", 12.0 + h, 60.0 + 5 * h, float(h % 3 == 0)) for h in range(4)]
records += [b"", "text, not bytes".encode()]
for name, ct in (("tf_written.tfrecord", ""), ("tf_written.tfrecord.gz", "GZIP"), ("tf_written.tfrecord.zz", "ZLIB")):
    with tf.io.TFRecordWriter(os.path.join(out, name), options=ct) as w:
        for r in records:
            w.write(r)
