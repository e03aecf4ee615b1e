# Seeded randomness, op seeds only: no graph seed, every op has seed=100+k.
# TF then uses its default graph seed (87654321) with each op's seed.
import random_catalog

random_catalog.show(graph_seed=None, op_seed=100)
