# tf.decode_raw (TF1's parser for binary records): little- and big-endian,
# the output's static and run-time shapes, a batch of strings, empty strings,
# and TF's errors for a length that is not a multiple of the element size,
# for strings of different lengths, and for an out_type it does not allow.
import struct

from engine import tf

s = tf.placeholder(tf.string, [None])
f32 = tf.decode_raw(s, tf.float32)
u8 = tf.decode_raw(s, tf.uint8)
i16be = tf.decode_raw(s, tf.int16, little_endian=False)
one = tf.decode_raw(tf.constant(struct.pack("<2i", 7, -1)), tf.int32)
grid = tf.io.decode_raw(tf.constant([[b"ab"], [b"cd"]]), tf.uint8)
print("static shapes:", f32.shape, u8.shape, one.shape, grid.shape)
print("op:", f32.op.type, f32.op.name, f32.dtype.name)
with tf.Session() as sess:
    rec = [struct.pack("<2f", 1.5, -2.0), struct.pack("<2f", 3.0, 0.25)]
    print("float32:", sess.run(f32, {s: rec}).tolist())
    print("uint8:", sess.run(u8, {s: rec}).tolist())
    print("int16 big-endian:", sess.run(i16be, {s: [b"\x01\x02\x00\x03"]}).tolist())
    print("scalar in, vector out:", sess.run(one).tolist())
    print("[2, 1] strings:", sess.run(grid).tolist())
    print("empty strings:", sess.run(tf.decode_raw(s, tf.float64), {s: [b"", b""]}).shape)
    print("bool:", sess.run(tf.decode_raw(tf.constant([b"\x01\x00"]), tf.bool)).tolist())
    for bad in ([b"abcde"], [b"abcd", b"abcdefgh"]):
        try:
            sess.run(f32, {s: bad})
        except tf.errors.InvalidArgumentError as e:
            print(type(e).__name__, [line for line in e.message.splitlines()
                                     if line.startswith(("Input to", "DecodeRaw requires"))])
try:
    tf.decode_raw(s, tf.string)
except TypeError as e:
    print("TypeError:", e)
