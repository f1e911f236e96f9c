"""The peers' side of scripts/bench/filter.lua (issue "Convolution"):
the same float32 workloads in PyTorch (conv2d and conv1d with zero
padding to the same size; the Gaussian as two conv2d passes of its 1-D
mask; the window sum as a conv1d with ones) and, when it is importable,
in CuPy (cupyx.scipy.ndimage's convolve, gaussian_filter and convolve1d,
with SciPy's semantics as moonlab's rows). Called by peers_torch.py with
its timer, which records CUDA events on the legacy default stream that
both libraries use by default; prints `name seconds` lines for PyTorch
and `name_cupy seconds` lines for CuPy."""
import torch
import torch.nn.functional as F

dev = "cuda"


def gaussian_mask(sigma, truncate=4.0):
    r = int(truncate * sigma + 0.5)
    x = torch.arange(-r, r + 1, device=dev, dtype=torch.float64)
    w = torch.exp(-0.5 / sigma ** 2 * x ** 2)
    return (w / w.sum()).float()


def torch_rows(median_time):
    torch.manual_seed(14)
    n = 8192
    images = [(torch.randn(1, 1, n, n, device=dev),) for _ in range(2)]
    for k in (5, 15):
        w = torch.randn(1, 1, k, k, device=dev)
        print("filt_conv%d" % k, median_time(lambda x: F.conv2d(x, w, padding=k // 2), images, 15))
    g = gaussian_mask(4.0)
    gy, gx = g.view(1, 1, -1, 1), g.view(1, 1, 1, -1)
    r = g.numel() // 2
    print("filt_gauss4", median_time(
        lambda x: F.conv2d(F.conv2d(x, gy, padding=(r, 0)), gx, padding=(0, r)), images, 15))
    del images
    m = 2 ** 26
    lines = [(torch.randn(1, 1, m, device=dev),) for _ in range(2)]
    w = torch.randn(1, 1, 31, device=dev)
    print("filt_conv1d", median_time(lambda x: F.conv1d(x, w, padding=15), lines, 15))
    ones = torch.ones(1, 1, 31, device=dev)
    print("filt_wsum", median_time(lambda x: F.conv1d(x, ones, padding=15), lines, 15))
    del lines


def cupy_rows(median_time):
    try:
        import cupy as cp
        from cupyx.scipy import ndimage as cnd
    except ImportError:
        return
    rng = cp.random.default_rng(14)
    n = 8192
    images = [(rng.standard_normal((n, n), dtype=cp.float32),) for _ in range(2)]
    for k in (5, 15):
        w = rng.standard_normal((k, k), dtype=cp.float32)
        print("filt_conv%d_cupy" % k, median_time(lambda x: cnd.convolve(x, w), images, 15))
    print("filt_gauss4_cupy", median_time(lambda x: cnd.gaussian_filter(x, 4.0), images, 15))
    del images
    m = 2 ** 26
    lines = [(rng.standard_normal(m, dtype=cp.float32),) for _ in range(2)]
    w = rng.standard_normal(31, dtype=cp.float32)
    print("filt_conv1d_cupy", median_time(
        lambda x: cnd.convolve1d(x, w, mode="constant"), lines, 15))
    print("filt_wsum_cupy", median_time(
        lambda x: cnd.uniform_filter1d(x, 31, mode="constant") * 31, lines, 15))
    del lines
    cp.get_default_memory_pool().free_all_blocks()


def main(median_time):
    torch_rows(median_time)
    torch.cuda.empty_cache()
    cupy_rows(median_time)
