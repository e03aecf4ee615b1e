# Seeded randomness with a graph seed and op seeds (tf.set_random_seed(7), seed=100+k).
import random_catalog

random_catalog.show(graph_seed=7, op_seed=100)
