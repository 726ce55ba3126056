"""Settings of the whole test suite.

One thread per test process for torch's and the BLAS libraries' intra-op pools
(``OMP_NUM_THREADS=1``, read when they load, and inherited by the processes the tests start):
the tests' networks are tiny and the suite runs one process per core (pytest-xdist), where
extra pool threads only spin against each other. On a busy 2-core machine SB3's PPO on the
batched market took 219 s with torch's default pool and 3.7 s with one thread.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
