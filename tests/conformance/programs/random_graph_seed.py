# Seeded randomness, graph seed only: tf.set_random_seed(42) and no op seeds.
# Every random op and initializer prints TF's numbers (see random_catalog.py):
# TF numbers the seedless ops 0, 1, 2... in the order the API functions ask
# for seeds, so minitf's API must ask exactly when TF's does.
import random_catalog

random_catalog.show(graph_seed=42, op_seed=None)
