"""Benchmark: minitf frames vs. a raw Python socket, on loopback.

Run on demand (pytest does not collect it)::

    python tests/benchmarks/bench_wire.py [--mib 64] [--reps 5] [--pings 2000]

The peer is a separate process (fork), so sender and receiver do not share a
GIL. Measured, side by side in one run:

* bulk: the client sends N MiB and waits for a tiny ack; raw = ``sendall`` of
  a bytes-like buffer / ``recv_into`` a preallocated buffer (the ceiling);
  frame = ``send_frame`` of one float32 tensor / ``recv_frame`` (which
  allocates a fresh buffer per frame, as a real server does). GB/s, median.
* latency: a tiny request and its reply, round trip, median in microseconds;
  raw = 1-byte ping-pong, frame = ``{"op": "ping"}`` frame each way.
"""

import argparse
import multiprocessing as mp
import os
import socket
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from minitf.distributed import wire  # noqa: E402


def _recv_exact_raw(sock, view):
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            raise EOFError
        got += n


def _peer(listener, nbytes):
    """Serve one raw connection then one frame connection."""
    # raw
    conn, _ = listener.accept()
    wire.configure_socket(conn)
    buf = bytearray(nbytes)
    view = memoryview(buf)
    one = bytearray(1)
    with conn:
        while True:
            kind = conn.recv(1)
            if not kind:
                break
            if kind == b"B":
                _recv_exact_raw(conn, view)
                conn.sendall(b"k")
            else:  # ping
                conn.sendall(b"p")
    del one
    # frames
    conn, _ = listener.accept()
    wire.configure_socket(conn)
    with conn:
        while True:
            try:
                header, tensors = wire.recv_frame(conn)
            except wire.ConnectionClosed:
                break
            if header["op"] == "bulk":
                assert tensors[0].nbytes == nbytes
                wire.send_frame(conn, {"op": "ack"})
            else:
                wire.send_frame(conn, {"op": "pong"})
            del tensors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pings", type=int, default=2000)
    args = ap.parse_args(argv)
    nbytes = args.mib << 20

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    ctx = mp.get_context("fork")
    proc = ctx.Process(target=_peer, args=(listener, nbytes), daemon=True)
    proc.start()
    arr = np.random.default_rng(0).standard_normal(nbytes // 4).astype(np.float32)
    raw_bulk, raw_ping, frame_bulk, frame_ping = [], [], [], []
    try:
        # ---- raw socket
        s = socket.create_connection(listener.getsockname())
        wire.configure_socket(s)
        ack = bytearray(1)
        payload = memoryview(arr).cast("B")
        with s:
            for _ in range(args.reps + 1):
                t0 = time.perf_counter()
                s.sendall(b"B")
                s.sendall(payload)
                _recv_exact_raw(s, memoryview(ack))
                raw_bulk.append(time.perf_counter() - t0)
            for _ in range(args.pings + 100):
                t0 = time.perf_counter()
                s.sendall(b"P")
                _recv_exact_raw(s, memoryview(ack))
                raw_ping.append(time.perf_counter() - t0)
        # ---- frames
        s = socket.create_connection(listener.getsockname())
        wire.configure_socket(s)
        with s:
            for _ in range(args.reps + 1):
                t0 = time.perf_counter()
                wire.send_frame(s, {"op": "bulk"}, [arr])
                h, _ = wire.recv_frame(s)
                frame_bulk.append(time.perf_counter() - t0)
                assert h["op"] == "ack"
            for _ in range(args.pings + 100):
                t0 = time.perf_counter()
                wire.send_frame(s, {"op": "ping"})
                h, _ = wire.recv_frame(s)
                frame_ping.append(time.perf_counter() - t0)
    finally:
        proc.join(30)
        if proc.is_alive():
            proc.terminate()
        listener.close()

    # first rep / first 100 pings are warm-up
    gbps = lambda ts: nbytes / statistics.median(ts[1:]) / 1e9  # noqa: E731
    us = lambda ts: statistics.median(ts[100:]) * 1e6  # noqa: E731
    rb, fb = gbps(raw_bulk), gbps(frame_bulk)
    rp, fp = us(raw_ping), us(frame_ping)
    print("minitf wire benchmark, loopback, %d MiB x %d reps, %d pings (python %s, %d CPUs)"
          % (args.mib, args.reps, args.pings, sys.version.split()[0], os.cpu_count()))
    print("%-30s %12s %12s %10s" % ("measure", "raw socket", "minitf frame", "frame/raw"))
    print("%-30s %12.2f %12.2f %9.0f%%" % ("bulk %d MiB (GB/s, median)" % args.mib,
                                             rb, fb, 100 * fb / rb))
    print("%-30s %12.1f %12.1f %9.0f%%" % ("tiny round trip (us, median)", rp, fp,
                                             100 * fp / rp))
    return {"raw_gbps": rb, "frame_gbps": fb, "raw_rtt_us": rp, "frame_rtt_us": fp}


if __name__ == "__main__":
    main()
