# What Session.run returns for different kinds of fetches.
import collections

from engine import tf

a = tf.constant(3, name="a")
b = tf.constant([1.5, 2.5], name="b")
c = tf.add(a, 4, name="c")
s = tf.constant("hello", name="s")
noop = tf.no_op(name="noop")
Pair = collections.namedtuple("Pair", ["x", "y"])

with tf.Session() as sess:
    for fetches in [
        a,                              # 0-d tensor -> numpy scalar
        b,                              # 1-d tensor -> numpy array
        s,                              # string -> bytes
        noop,                           # an Operation -> None
        [a, b],                         # list -> list
        (a, c),                         # tuple -> tuple
        {"sum": c, "op": noop},         # dict -> dict, same keys
        Pair(x=a, y=[c, (s,)]),         # namedtuple, nested mixes
        "c:0",                          # a tensor by name
        "noop",                         # an operation by name
        [a, a],                         # the same tensor twice
    ]:
        result = sess.run(fetches)
        print(f"{type(result).__name__:8} {result!r}")

    print("eval:", repr(c.eval()))
    print("eval with feed:", repr(c.eval(feed_dict={a: 10})))
    print("run:", repr(noop.run()))
    print("default session:", tf.get_default_session() is sess)

print("outside with:", tf.get_default_session())

isess = tf.InteractiveSession()
print("interactive eval:", repr(c.eval()), repr(b.eval()))
print("interactive default:", tf.get_default_session() is isess)
isess.close()
