"""A helper for socket tests: run one side of a conversation in a thread."""

import threading


class Background:
    """Run ``fn(*args)`` in a daemon thread. ``join()`` waits (failing the
    test if the thread hangs) and returns its result, leaving any exception
    in ``.error``; ``result()`` does the same but re-raises that exception."""

    def __init__(self, fn, *args):
        self.result_value = self.error = None
        self._t = threading.Thread(target=self._run, args=(fn,) + args, daemon=True)
        self._t.start()

    def _run(self, fn, *args):
        try:
            self.result_value = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            self.error = e

    def join(self, timeout=30):
        self._t.join(timeout)
        assert not self._t.is_alive(), "background thread hung"
        return self.result_value

    def result(self, timeout=30):
        value = self.join(timeout)
        if self.error is not None:
            raise self.error
        return value
