# Reading a variable before its initializer ran.
from engine import tf

v = tf.Variable([1.0, 2.0], name="v")
w = tf.Variable(3, name="w")
doubled = v * 2

with tf.Session() as sess:
    try:
        sess.run(doubled)
    except tf.errors.FailedPreconditionError as e:
        print("error:", type(e).__name__)
        print("message names v:",
              "Attempting to use uninitialized value v" in e.message)
        print("is an OpError:", isinstance(e, tf.errors.OpError), e.error_code)

    print("initialized?", sess.run(tf.is_variable_initialized(v)))
    print("uninitialized:", repr(sess.run(tf.report_uninitialized_variables())))

    sess.run(v.initializer)
    print("initialized now?", sess.run(tf.is_variable_initialized(v)))
    print("still uninitialized:", repr(sess.run(tf.report_uninitialized_variables())))
    print("doubled:", sess.run(doubled))

    sess.run(tf.global_variables_initializer())
    print("after global init:", repr(sess.run(tf.report_uninitialized_variables())))
    print("w:", sess.run(w))
