"""PyTorch's side of `make bench` on a GPU: the workloads of
scripts/bench/gpu.lua, timed with CUDA events after a warm-up (2 s for the
GEMMs): the median of repeats, inputs rotated among random sets. Prints
`name seconds`."""
import gzip
import os
import statistics
import time

import numpy as np
import torch

import peers_binary_torch
import peers_conv_torch
import peers_filter
import peers_mixture_torch
import peers_rearrange_torch

dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False


def median_time(fn, sets, repeats, warm_seconds=0):
    end = time.perf_counter() + warm_seconds
    while True:
        fn(*sets[0])
        torch.cuda.synchronize()
        if time.perf_counter() >= end:
            break
    times = []
    for r in range(repeats):
        args = sets[r % len(sets)]
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def main():
    a = torch.rand(256, device=dev)
    b = torch.rand(256, device=dev)
    per_op = []
    for _ in range(5):
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(20000):
            a + b
        end.record()
        end.synchronize()
        per_op.append(start.elapsed_time(end) / 1e3 / 20000)
    print("tiny_add_256", statistics.median(per_op))

    n = 2**28
    sets = [(torch.rand(n, device=dev), torch.rand(n, device=dev)) for _ in range(2)]
    print("add_f32_2e28", median_time(lambda x, y: x + y, sets, 9))
    print("sum_f32_2e28", median_time(lambda x, y: x.sum(), sets, 9))
    del sets
    print("randn_f32_2e28", median_time(lambda: torch.randn(n, device=dev), [()], 9))
    for dtype, name in ((torch.float32, "float32"), (torch.float64, "float64")):
        m = [(torch.rand(8192, 8192, device=dev, dtype=dtype),
              torch.rand(8192, 8192, device=dev, dtype=dtype)) for _ in range(2)]
        print("mm_%s_8192" % name, median_time(lambda x, y: x @ y, m, 9, 2))
        del m
    x = [(torch.rand(32768, 32768, device=dev),)]
    print("topk20_f32_32768", median_time(lambda v: torch.topk(v, 20, dim=1), x, 5))
    del x
    u = [(torch.randint(0, 2**20, (2**26,), device=dev, dtype=torch.int32),)]
    print("unique_i32_2e26", median_time(lambda v: torch.unique(v), u, 5))
    del u
    h = [(torch.rand(n, device=dev),) for _ in range(2)]
    print("histogram_f32_2e28",
          median_time(lambda v: torch.histc(v, bins=256, min=0, max=1), h, 9))
    del h
    c = [(1 + (torch.rand(n, device=dev) * 2 - 1) * 1e-6,)]
    print("cumprod_f32_2e28", median_time(lambda v: torch.cumprod(v, 0), c, 9))
    del c
    sm = [(torch.randn(8192, 8192, device=dev),) for _ in range(2)]
    print("softmax_f32_8192", median_time(lambda v: torch.softmax(v, 1), sm, 9))
    del sm

    def knn(q, r, k):
        d = torch.addmm((q * q).sum(1, keepdim=True), q, r.T, alpha=-2)
        d += (r * r).sum(1)
        return torch.topk(d, k, dim=1, largest=False)

    folder = os.environ.get("MOONLAB_DATA", "/usr/share/datasets/fashion-mnist")

    def images(name):
        raw = gzip.open(os.path.join(folder, name)).read()
        x = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 784)
        return torch.tensor(x, device=dev, dtype=torch.float32) / 255

    q, r = images("t10k-images-idx3-ubyte.gz"), images("train-images-idx3-ubyte.gz")
    print("knn_fashion", median_time(lambda a, b: knn(a, b, 5), [(q, r)], 5))
    for d in (16, 256):
        q = torch.rand(32768, d, device=dev) * 1000 - 500
        r = torch.rand(32768, d, device=dev) * 1000 - 500
        print("knn_32768_d%d" % d, median_time(lambda a, b: knn(a, b, 20), [(q, r)], 5))
    del q, r
    peers_filter.main(median_time)
    peers_mixture_torch.main(median_time)
    peers_conv_torch.main(median_time)
    peers_rearrange_torch.main(median_time)
    peers_binary_torch.main(median_time)


main()
