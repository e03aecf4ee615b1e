"""minitf.distributed.ports: ports for a cluster's tasks never repeat."""

import socket

from minitf.distributed import launcher, ports
from minitf.distributed.launcher import _cluster_from


def test_ports_asked_for_together_are_distinct_and_free(monkeypatch):
    # An OS that hands the same port out again as soon as its probe closes
    # (Linux may): the probes stay open until every port is picked.
    real_socket = socket.socket
    open_ports = set()

    class RecyclingSocket(real_socket):
        def bind(self, address):
            port = 40000
            while port in open_ports:
                port += 1
            super().bind((address[0], 0))
            self._fake = port
            open_ports.add(port)

        def getsockname(self):
            return ("127.0.0.1", self._fake)

        def close(self):
            open_ports.discard(getattr(self, "_fake", None))
            super().close()

    monkeypatch.setattr(ports.socket, "socket", RecyclingSocket)
    picked = ports.free_ports(5)
    assert len(set(picked)) == 5
    assert not open_ports                              # every probe was closed
    spec = _cluster_from({"ps": 1, "worker": 2}, "localhost", None)
    addresses = spec["ps"] + spec["worker"]
    assert len(set(addresses)) == 3


def test_a_free_port_can_be_listened_on():
    port = launcher.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen(1)
