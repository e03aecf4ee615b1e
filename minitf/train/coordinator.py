"""``tf.train.Coordinator``: how a group of threads agrees to stop.

Every thread loops ``while not coord.should_stop(): ...``. Any thread may
call ``coord.request_stop()``; with an exception (``request_stop(e)``, or by
leaving a ``with coord.stop_on_exception():`` block with one) the *first*
exception is kept, and ``coord.join(threads)`` re-raises it in the main
thread once the threads are done. OutOfRangeError counts as a clean stop
(the input ran out: that is how an epoch-limited pipeline ends).

``join`` waits for the threads, or for a stop request; after a stop request
it gives the threads ``stop_grace_period_secs`` more to finish, then raises
RuntimeError naming the stragglers. This mirrors TF's coordinator.py.
"""

import contextlib
import sys
import threading
import time

from minitf.framework import errors
from minitf.framework import tf_logging as logging


class Coordinator:
    """A stop flag, the first error, and the threads to join."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def _filter_exception(self, ex):
        ex2 = ex[1] if isinstance(ex, tuple) else ex
        if isinstance(ex2, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex=None):
        """Ask every thread to stop. ``ex`` (an exception or an ``exc_info``
        tuple) is reported by ``join`` unless an earlier one already was."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                # Nobody will join again: raise now rather than lose the error.
                if isinstance(ex, tuple):
                    raise ex[1].with_traceback(ex[2])
                if ex is not None:
                    raise ex
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    if isinstance(ex, tuple):
                        logging.info("Error reported to Coordinator: %s", ex[1], exc_info=ex)
                        self._exc_info_to_raise = ex
                    else:
                        logging.info("Error reported to Coordinator: %s, %s", type(ex), ex)
                        self._exc_info_to_raise = (type(ex), ex, ex.__traceback__)
                self._stop_event.set()

    def clear_stop(self):
        """Forget the stop request and the error, so the coordinator can be reused."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Inside this block any exception becomes ``request_stop(exception)``."""
        try:
            yield
        except:  # noqa: E722 - TF catches everything here, including SystemExit
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Block until a stop is requested (True) or ``timeout`` passes (False)."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Wait for ``threads`` (and the registered ones) to finish.

        Returns when all are done; or, once a stop was requested, after at
        most ``stop_grace_period_secs``: then a thread still alive is an error
        (RuntimeError) unless ``ignore_live_threads``. The first exception
        passed to ``request_stop`` is re-raised here.
        """
        with self._lock:
            if threads is None:
                threads = self._registered_threads
            else:
                threads = self._registered_threads.union(set(threads))
            threads = list(threads)
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        stop_wait_secs = 0.001
        while any(t.is_alive() for t in threads) and stop_grace_period_secs >= 0.0:
            time.sleep(stop_wait_secs)
            stop_grace_period_secs -= stop_wait_secs
            stop_wait_secs = 2 * stop_wait_secs
            stop_wait_secs = max(min(stop_wait_secs, stop_grace_period_secs), 0.001)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, value, tb = self._exc_info_to_raise
                raise value.with_traceback(tb)
            if stragglers and ignore_live_threads:
                logging.info("Coordinator stopped with threads still running: %s",
                             " ".join(stragglers))
            elif stragglers:
                raise RuntimeError("Coordinator stopped with threads still running: %s"
                                   % " ".join(stragglers))

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raise the reported exception now, if there is one."""
        with self._lock:
            if self._exc_info_to_raise:
                _, value, tb = self._exc_info_to_raise
                raise value.with_traceback(tb)

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Start a thread that calls ``target`` every ``timer_interval_secs``
        until the coordinator stops."""
        looper = LooperThread(self, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper


class LooperThread(threading.Thread):
    """A thread that runs ``target`` repeatedly until ``coord`` stops."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError("'coord' argument must be a Coordinator: %s" % coord)
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        coord.register_thread(self)

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_timer_time = time.time()
                while not self._coord.wait_for_stop(next_timer_time - time.time()):
                    next_timer_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        pass

    def stop_loop(self):
        pass

    def run_loop(self):
        if self._target:
            self._target(*self._args, **self._kwargs)
