"""Which thread codes: with a one-thread rayon pool, the calling thread (python/src/pool.rs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# The calling thread's share of the process's CPU time over a few encodes
# and decodes of each dtype, as JSON, after THREADS short-lived threads
# have coded a small image each.
SCRIPT = r"""
import json, sys, threading, time
import numpy as np
import wavelane

for _ in range(int(sys.argv[1])):
    thread = threading.Thread(target=lambda: wavelane.encode(np.zeros((8, 8), np.uint8)))
    thread.start()
    thread.join()
rng = np.random.default_rng(1)
images = {"uint8": rng.integers(0, 256, (256, 256), np.uint8),
          "uint16": rng.integers(0, 4096, (256, 256), np.uint16)}
shares = {}
for name, image in images.items():
    data = wavelane.encode(image, lossless=True, backend="cpu")
    for op, call in [("encode", lambda: wavelane.encode(image, lossless=True, backend="cpu")),
                     ("decode", lambda: wavelane.decode(data, backend="cpu"))]:
        call()
        process, thread = time.process_time(), time.thread_time()
        for _ in range(4):
            call()
        shares[f"{name} {op}"] = (time.thread_time() - thread) / (time.process_time() - process)
print(json.dumps(shares))
"""

# python/src/pool.rs, OWN_POOLS_MAX.
OWN_POOLS_MAX = 128


def shares_after(threads: int) -> dict:
    # Its own process, because rayon reads RAYON_NUM_THREADS once per process.
    env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(threads)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    shares = json.loads(run.stdout)
    assert len(shares) == 4
    return shares


def test_a_one_thread_pool_codes_on_the_calling_thread():
    # With RAYON_NUM_THREADS=1 (Dask workers, the benchmarks) the pool's one
    # thread adds no parallelism, only a hand-over and two wake-ups a call,
    # and would serialise every Python thread's calls: the calling thread
    # codes itself. Measured by CPU time, which the load of the machine
    # does not change: the calling thread's share of the process's CPU time
    # over the calls is nearly all of it (a hand-over to the pool thread
    # leaves the caller asleep: a share near 0).
    for call, share in shares_after(0).items():
        assert share > 0.8, f"{call}: the calling thread did {share:.0%} of the process's CPU time"


def test_threads_beyond_the_bound_hand_over_to_the_pool():
    # Each thread that codes on its own keeps a few kilobytes for good, so
    # only the first OWN_POOLS_MAX do; later ones hand the call over to the
    # pool's thread as before and sleep meanwhile. The main thread of the
    # script comes after OWN_POOLS_MAX threads that coded.
    for call, share in shares_after(OWN_POOLS_MAX).items():
        assert share < 0.5, f"{call}: the calling thread did {share:.0%} of the process's CPU time"
