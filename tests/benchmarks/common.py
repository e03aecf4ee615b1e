"""What the benchmark scripts share: timing, free ports, waiting for a
server's port, and running the same script under real TensorFlow."""

import json
import os
import socket
import statistics
import subprocess
import sys
import time


def median(fn, repeats=9, inner=1):
    """Median seconds per call of ``fn`` (``inner`` calls per sample), after
    one call that pays for compiling and caching."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_ports(addresses, timeout=60.0):
    """Wait until something accepts connections at each ``host:port``."""
    for address in addresses:
        host, port = address.split(":")
        end = time.time() + timeout
        while True:
            try:
                socket.create_connection((host, int(port)), 1).close()
                break
            except OSError:
                if time.time() > end:
                    raise RuntimeError("server %s did not start" % address) from None
                time.sleep(0.1)


def run_under_tf(script, args=("--engine", "tf"), timeout=900):
    """Run ``script`` with $MINITF_TF_PYTHON and parse the JSON its last line
    prints; None when no real TensorFlow is configured or it failed."""
    python = os.environ.get("MINITF_TF_PYTHON")
    if not python:
        return None
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([python, script] + list(args), capture_output=True, text=True,
                          env=env, timeout=timeout)
    if proc.returncode != 0:
        print("real TF failed:\n" + proc.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])
