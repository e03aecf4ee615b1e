# Two local Sessions on the same graph do not share variable values:
# each Session keeps its own copy of every variable.
from engine import tf

v = tf.Variable(10, name="v")
bump = tf.assign_add(v, 5)
init = tf.global_variables_initializer()

sess_a = tf.Session()
sess_b = tf.Session()
sess_a.run(init)
sess_b.run(init)

print("a after assign_add:", sess_a.run(bump))
print("a reads v:", sess_a.run(v))
print("b reads v:", sess_b.run(v))

sess_b.run(bump)
sess_b.run(bump)
print("after two bumps in b -> a:", sess_a.run(v), "b:", sess_b.run(v))

# Re-running the initializer resets only that session's copy.
sess_a.run(init)
print("after re-init of a -> a:", sess_a.run(v), "b:", sess_b.run(v))

print("dtype:", v.dtype.name, v.dtype.base_dtype.name, "type of value:", type(sess_b.run(v)).__name__)
sess_a.close()
sess_b.close()
