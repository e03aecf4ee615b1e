"""The rendezvous's asynchronous receive (runtime/rendezvous.py): how a
``_Recv`` waits for a tensor without a thread of its own, as TF's RecvAsync."""

import threading

import numpy as np
import pytest

from minitf.framework import errors
from minitf.runtime.rendezvous import Rendezvous


def _collector():
    got = []
    event = threading.Event()

    def callback(value, error):
        got.append((value, error, threading.get_ident()))
        event.set()
    return got, event, callback


def test_a_value_already_sent_is_handed_over_at_once():
    r = Rendezvous()
    r.send(1, "x", np.float32(3.0))
    got, _, callback = _collector()
    r.recv_async(1, "x", callback)
    assert got == [(3.0, None, threading.get_ident())]
    assert r.pending() == {}                      # taken, not left behind


def test_a_value_sent_later_arrives_in_the_senders_thread():
    r = Rendezvous()
    got, event, callback = _collector()
    r.recv_async(7, "w", callback)
    assert got == [] and r.pending() == {}
    sender = threading.Thread(target=r.send, args=(7, "w", np.arange(3)))
    sender.start()
    sender.join()
    assert event.wait(5)
    value, error, thread = got[0]
    assert error is None and value.tolist() == [0, 1, 2]
    assert thread == sender.ident
    assert r.pending() == {}                      # delivered, not stored


def test_keys_and_steps_do_not_mix():
    r = Rendezvous()
    got, _, callback = _collector()
    r.recv_async(1, "a", callback)
    r.send(2, "a", 1.0)                           # another step
    r.send(1, "b", 2.0)                           # another key
    assert got == []
    r.send(1, "a", 3.0)
    assert [v for v, _, _ in got] == [3.0]
    assert r.pending() == {1: 1, 2: 1}


def test_an_abort_tells_the_waiting_receiver_and_a_late_one():
    r = Rendezvous()
    got, _, callback = _collector()
    r.recv_async(4, "g", callback)
    failure = errors.UnavailableError(None, None, "task /job:ps/task:0 died")
    r.abort(4, failure)
    assert got[0][:2] == (None, failure)
    late, _, late_callback = _collector()
    r.recv_async(4, "h", late_callback)
    assert late[0][:2] == (None, failure)
    r.send(4, "g", 1.0)                           # a late sender's value is dropped
    assert len(got) == 1 and r.pending() == {}


def test_a_finished_step_forgets_its_receivers():
    r = Rendezvous()
    got, _, callback = _collector()
    r.recv_async(9, "never", callback)
    r.finish(9)
    r.send(9, "never", 1.0)
    assert got == [] and r.pending() == {9: 1}


@pytest.mark.parametrize("first", ["send", "receive"])
def test_each_value_goes_to_exactly_one_receiver(first):
    r = Rendezvous()
    got, _, callback = _collector()
    if first == "send":
        r.send(3, "k", 5.0)
        r.recv_async(3, "k", callback)
    else:
        r.recv_async(3, "k", callback)
        r.send(3, "k", 5.0)
    with pytest.raises(errors.DeadlineExceededError):
        r.recv(3, "k", deadline=0.0)              # nothing left for a second receiver
    assert [v for v, _, _ in got] == [5.0]
