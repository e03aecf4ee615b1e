"""Free TCP ports for the servers of a cluster on one machine.

A port the OS hands out for ``bind(("127.0.0.1", 0))`` is free at that
moment; once that socket closes, the next ``bind(0)`` may hand out the very
same port. So ports for several tasks are asked for with every probe socket
still open, and only then released: two tasks never get one port (which
would leave one server failing to start and the other answering at both
addresses).
"""

import socket


def free_ports(count, host="127.0.0.1"):
    """``count`` distinct TCP ports nobody listens on right now."""
    probes = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            probes.append(s)
            s.bind((host, 0))
        return [s.getsockname()[1] for s in probes]
    finally:
        for s in probes:
            s.close()


def free_port(host="127.0.0.1"):
    """A TCP port nobody listens on right now."""
    return free_ports(1, host)[0]
