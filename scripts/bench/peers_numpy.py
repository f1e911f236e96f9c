"""NumPy's side of `make bench`: the same workloads as scripts/bench/cpu.lua,
timed the same way (warm-up, median of repeats, inputs rotated among
several random sets so that none stays in cache). Prints `name seconds`."""
import statistics
import sys
import time

import numpy as np

rng = np.random.default_rng(0)


def median_time(fn, inputs, repeats):
    fn(*inputs[0])
    times = []
    for r in range(repeats):
        args = inputs[r % len(inputs)]
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    n = 10**7
    sets = [(rng.random(n), rng.random(n)) for _ in range(3)]
    print("add_f64_1e7", median_time(lambda a, b: a + b, sets, 9))
    print("exp_f64_1e7", median_time(lambda a, b: np.exp(a), sets, 9))
    m = [(rng.random((2048, 2048)), rng.random((2048, 2048))) for _ in range(2)]
    print("mm_f64_2048", median_time(lambda a, b: a @ b, m, 5))
    x, y = rng.random(4), rng.random(4)
    calls = 200000
    per_call = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            x + y
        per_call.append((time.perf_counter() - t0) / calls)
    print("tiny_add_4", statistics.median(per_call))
    sys.stdout.flush()


main()
