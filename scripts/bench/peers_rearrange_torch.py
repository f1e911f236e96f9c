"""PyTorch's side of scripts/bench/rearrange.lua: torch.flip (which
copies) and torch.roll of 2^28 float32, and torch.einsum's
"bij,bjk->bik" (128 x 1024^3) and "ij,kj->ik" (8192^3) in full FP32 (no
TF32, as peers_torch.py sets). Called by peers_torch.py with its timer;
prints `name seconds` lines."""
import torch

dev = "cuda"


def main(median_time):
    n = 2**28
    sets = [(torch.rand(n, device=dev),) for _ in range(2)]
    print("flip_f32_2e28", median_time(lambda x: torch.flip(x, [0]), sets, 9))
    print("roll_f32_2e28", median_time(lambda x: torch.roll(x, 12345), sets, 9))
    del sets
    sets = [(torch.rand(128, 1024, 1024, device=dev), torch.rand(128, 1024, 1024, device=dev))
            for _ in range(2)]
    print("einsum_bmm_f32",
          median_time(lambda x, y: torch.einsum("bij,bjk->bik", x, y), sets, 9, 2))
    del sets
    sets = [(torch.rand(8192, 8192, device=dev), torch.rand(8192, 8192, device=dev))
            for _ in range(2)]
    print("einsum_mmt_f32_8192",
          median_time(lambda x, y: torch.einsum("ij,kj->ik", x, y), sets, 9, 2))
    del sets
