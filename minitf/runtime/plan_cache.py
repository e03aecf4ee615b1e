"""One plan per step signature, built once: :class:`PlanCache`.

A program runs the same ``sess.run(train_op, feed_dict)`` thousands of times.
Pruning, placing, partitioning and binding kernels for it is done the first
time only: the plan is cached under the step's *signature* (what it fetches,
what it runs, what it feeds) and reused. Local sessions, masters (one
distributed plan per signature) and workers (one plan per registered
partition and signature) all keep their plans in one of these.

Many threads may ask at once (a server's connections, a QueueRunner's threads):
the first builds, the others wait for it and share the result.
"""

import threading


class PlanCache:
    """``get(key)`` returns the plan for ``key``, calling ``build(key)`` the first time."""

    def __init__(self, build):
        self._build = build
        self._plans = {}
        self._lock = threading.Lock()

    def get(self, key):
        plan = self._plans.get(key)      # the common case: no lock
        if plan is None:
            with self._lock:
                plan = self._plans.get(key)
                if plan is None:
                    plan = self._plans[key] = self._build(key)
        return plan

    def values(self):
        with self._lock:
            return list(self._plans.values())

    def clear(self):
        """Forget every plan (their nodes hold kernels and constants)."""
        with self._lock:
            self._plans = {}

    def __len__(self):
        return len(self._plans)
