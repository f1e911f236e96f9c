"""PyTorch's side of scripts/bench/binary.lua (issue "Binary (±1) matrix
products and Hamming search"): the 8192^3 product of ±1 matrices through
cuBLAS as int8 (torch._int_mm, int32 sums), bf16, TF32 and float32, and
the Hamming kNN of 10^4 queries among 10^6 references of 256-bit codes,
k = 10, as int8 products of the ±1 codes (distance = (256 - dot) / 2) in
chunks of references, each chunk's topk merged with the last. Called by
peers_torch.py with its timer; prints `name seconds` lines."""
import torch

dev = "cuda"


def pm1(shape, dtype):
    return (torch.randint(0, 2, shape, device=dev) * 2 - 1).to(dtype)


def main(median_time):
    n = 8192
    torch.manual_seed(0)
    sets = [(pm1((n, n), torch.int8), pm1((n, n), torch.int8)) for _ in range(2)]
    print("binary_mm_8192", median_time(lambda a, b: torch._int_mm(a, b), sets, 9, 2))
    for name, dtype, tf32 in (("bf16", torch.bfloat16, False), ("tf32", torch.float32, True),
                              ("f32", torch.float32, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        fs = [(a.to(dtype), b.to(dtype)) for a, b in sets]
        print("binary_mm_8192_" + name, median_time(lambda a, b: a @ b, fs, 9, 2))
        del fs
    torch.backends.cuda.matmul.allow_tf32 = False
    del sets

    m, refs, k, bits, chunk = 10000, 1000000, 10, 256, 65536
    q, r = pm1((m, bits), torch.int8), pm1((refs, bits), torch.int8)

    def knn(q, r):
        best_d = best_i = None
        for j0 in range(0, refs, chunk):
            dot = torch._int_mm(q, r[j0:j0 + chunk].t())
            d, i = torch.topk(dot, k, dim=1)
            i += j0
            if best_d is not None:
                d, sel = torch.topk(torch.cat((best_d, d), 1), k, dim=1)
                i = torch.gather(torch.cat((best_i, i), 1), 1, sel)
            best_d, best_i = d, i
        return (bits - best_d) // 2, best_i

    print("knn_hamming_1e6", median_time(knn, [(q, r)], 7))
