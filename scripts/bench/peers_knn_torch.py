"""PyTorch's side of scripts/bench/knn_grid.lua: the grid of Garcia et al.
(m = n from 256 to --max, d in 1, 4, 16, 64, 256, k = 20, uniform float32
in [-500, 500]) as squared distances |r|^2 - 2 q.r by torch.addmm, top-k
by torch.topk, and the square roots of the k distances (with |q|^2 added).
Median of repeats after a warm-up, inputs rotated between two random sets,
timed with CUDA events on a GPU. Prints `knn_<n>_<d> seconds` lines."""
import argparse
import statistics
import sys
import time

try:
    import torch
except ImportError:
    sys.exit("torch is not importable")

K = 20
DIMS = (1, 4, 16, 64, 256)


def knn(q, r):
    rn = (r * r).sum(1)
    d2 = torch.addmm(rn.unsqueeze(0), q, r.t(), beta=1, alpha=-2)
    vals, idx = torch.topk(d2, K, dim=1, largest=False)
    qn = (q * q).sum(1, keepdim=True)
    return (vals + qn).clamp_min_(0).sqrt_(), idx


def median_time(fn, sets, repeats, cuda):
    fn(*sets[0])
    if cuda:
        torch.cuda.synchronize()
    times = []
    for i in range(repeats):
        args = sets[i % len(sets)]
        if cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*args)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        else:
            t0 = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max", type=int, default=32768)
    p.add_argument("--device", default="cuda")
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    cuda = a.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        sys.exit("torch has no GPU")
    torch.backends.cuda.matmul.allow_tf32 = False
    n = 256
    while n <= a.max:
        for d in DIMS:
            sets = [tuple(torch.empty(n, d, device=a.device).uniform_(-500, 500)
                          for _ in range(2)) for _ in range(2)]
            t = median_time(knn, sets, a.repeats, cuda)
            print("knn_%d_%d %.9g" % (n, d, t), flush=True)
            del sets
        n *= 2


if __name__ == "__main__":
    main()
