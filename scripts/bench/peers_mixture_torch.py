"""PyTorch's side of scripts/bench/mixture.lua (issue "Linear algebra,
k-means and Gaussian mixtures"): the users' kernels, one EM iteration of
a full-covariance mixture on Fashion-MNIST in float64, a whole fit, a
diagonal mixture at speech-recognition scale and a k-means Lloyd
iteration, each written the way a careful PyTorch user would (precision
Cholesky factors, one GEMM for the E-step, batched products for the
M-step; mm + argmin + index_add for k-means). Called by peers_torch.py
with its timer; prints `name seconds` lines."""
import gzip
import math
import os

import numpy as np
import torch

dev = "cuda"
F64 = torch.float64


def fashion(dtype):
    folder = os.environ.get("MOONLAB_DATA", "/usr/share/datasets/fashion-mnist")
    raw = gzip.open(os.path.join(folder, "train-images-idx3-ubyte.gz")).read()
    x = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 784)
    return torch.tensor(x, device=dev, dtype=dtype) / 255


def precision_cholesky(cov):
    """Upper factors P with P P^T = cov^-1, as scikit-learn computes them."""
    chol = torch.linalg.cholesky(cov)
    eye = torch.eye(cov.shape[-1], device=dev, dtype=cov.dtype).expand_as(cov)
    return torch.linalg.solve_triangular(chol, eye, upper=False).transpose(-1, -2)


def e_step_full(X, means, prec_chol, log_weights):
    """Log responsibilities and the mean log-likelihood (the lower bound)."""
    n, d = X.shape
    K = means.shape[0]
    y = (X @ prec_chol.permute(1, 0, 2).reshape(d, K * d)).view(n, K, d)
    y -= torch.einsum("kd,kde->ke", means, prec_chol)
    log_det = torch.log(torch.diagonal(prec_chol, dim1=1, dim2=2)).sum(1)
    log_prob = -0.5 * (d * math.log(2 * math.pi) + (y * y).sum(2)) + log_det
    weighted = log_prob + log_weights
    lse = torch.logsumexp(weighted, 1)
    return weighted - lse[:, None], lse.mean()


def m_step_full(X, log_resp, reg):
    resp = log_resp.exp()
    nk = resp.sum(0) + 10 * torch.finfo(X.dtype).eps
    means = resp.T @ X / nk[:, None]
    K, d = means.shape
    cov = torch.empty(K, d, d, device=dev, dtype=X.dtype)
    for k in range(K):
        diff = X - means[k]
        cov[k] = (resp[:, k, None] * diff).T @ diff / nk[k]
    cov.diagonal(dim1=1, dim2=2).add_(reg)
    return nk / X.shape[0], means, cov


def em_iteration(X, state, reg=1e-6):
    weights, means, prec_chol = state
    log_resp, bound = e_step_full(X, means, prec_chol, weights.log())
    w, mu, cov = m_step_full(X, log_resp, reg)
    return (w, mu, precision_cholesky(cov)), bound


def kmeans_labels(X, K, iters=100):
    """Lloyd's algorithm from the first K rows (the PyTorch fit's init)."""
    C = X[:K].clone()
    labels = None
    for _ in range(iters):
        d2 = (C * C).sum(1) - 2 * X @ C.T
        new = d2.argmin(1)
        if labels is not None and torch.equal(new, labels):
            break
        labels = new
        sums = torch.zeros_like(C).index_add_(0, labels, X)
        counts = torch.bincount(labels, minlength=K).to(X.dtype)
        C = torch.where(counts[:, None] > 0, sums / counts.clamp_min(1)[:, None], C)
    return labels


def fit_full(X, K, max_iter=100, tol=1e-3, reg=1e-6):
    labels = kmeans_labels(X, K)
    resp = torch.nn.functional.one_hot(labels, K).to(X.dtype)
    w, mu, cov = m_step_full(X, resp.log(), reg)
    state = (w, mu, precision_cholesky(cov))
    bound = -math.inf
    for it in range(1, max_iter + 1):
        state, new = em_iteration(X, state, reg)
        new = new.item()
        if abs(new - bound) < tol:
            return it
        bound = new
    return max_iter


def em_diag_iteration(X, X2, means, precisions, log_weights):
    """One EM iteration of a diagonal mixture: the E-step's quadratic by
    two GEMMs, the M-step's moments by two more."""
    d = X.shape[1]
    log_det = 0.5 * torch.log(precisions).sum(1)
    log_prob = -0.5 * (d * math.log(2 * math.pi)
                       + (means ** 2 * precisions).sum(1)
                       - 2 * X @ (means * precisions).T
                       + X2 @ precisions.T) + log_det
    weighted = log_prob + log_weights
    lse = torch.logsumexp(weighted, 1)
    resp = torch.exp(weighted - lse[:, None])
    nk = resp.sum(0) + 10 * torch.finfo(X.dtype).eps
    mu = resp.T @ X / nk[:, None]
    var = resp.T @ X2 / nk[:, None] - mu * mu + 1e-6
    return nk / X.shape[0], mu, 1 / var, lse.mean()


def lloyd(X, C):
    d2 = (C * C).sum(1) - 2 * X @ C.T
    labels = d2.argmin(1)
    sums = torch.zeros_like(C).index_add_(0, labels, X)
    counts = torch.bincount(labels, minlength=C.shape[0]).to(X.dtype)
    return sums / counts.clamp_min(1)[:, None], labels


def main(median_time):
    torch.manual_seed(0)
    X = fashion(F64)
    n, d = X.shape
    K = 10
    R = torch.rand(n, K, device=dev, dtype=F64)
    print("mix_rtx", median_time(lambda: R.T @ X, [()], 9, 1))
    print("mix_cov", median_time(lambda: torch.cov(X.T), [()], 9, 1))
    W = R.T.contiguous()
    print("mix_scatter", median_time(
        lambda: torch.stack([(X * W[k, :, None]).T @ X for k in range(K)]), [()], 9, 1))
    A = torch.rand(4096, 4096, device=dev, dtype=F64)
    A = A @ A.T + 4096 * torch.eye(4096, device=dev, dtype=F64)
    print("mix_chol4096", median_time(lambda: torch.linalg.cholesky(A), [()], 9, 1))
    cov = torch.cov(X.T) + 1e-3 * torch.eye(d, device=dev, dtype=F64)
    L = torch.linalg.cholesky(cov)
    B = X.T.contiguous()
    print("mix_trsm", median_time(
        lambda: torch.linalg.solve_triangular(L, B, upper=False), [()], 9, 1))
    del A, B, R, W

    # one EM iteration from a state of 10 components fitted to k-means labels
    labels = kmeans_labels(X, K, 20)
    resp = torch.nn.functional.one_hot(labels, K).to(F64)
    w, mu, cov = m_step_full(X, resp.log(), 1e-6)
    state = (w, mu, precision_cholesky(cov))
    print("mix_em_full", median_time(lambda: em_iteration(X, state), [()], 9, 1))
    print("mix_fit_full", median_time(lambda: fit_full(X, K), [()], 3))
    print("mix_fit_full_iters", fit_full(X, K))

    n, d, K = 2**22, 64, 1024
    Xs = torch.randn(n, d, device=dev)
    X2 = Xs * Xs
    means = torch.randn(K, d, device=dev)
    precisions = torch.rand(K, d, device=dev) + 0.5
    log_weights = torch.full((K,), -math.log(K), device=dev)
    print("mix_em_diag", median_time(
        lambda: em_diag_iteration(Xs, X2, means, precisions, log_weights), [()], 5, 1))
    del Xs, X2

    n, d, K = 2**20, 128, 1024
    Xk = torch.randn(n, d, device=dev)
    C = Xk[torch.randperm(n, device=dev)[:K]].clone()
    print("mix_lloyd", median_time(lambda: lloyd(Xk, C), [()], 9, 1))
