"""PyTorch's side of scripts/bench/conv.lua (issue "Convolution"): the
convolution layer torch.nn.functional.conv2d with N = 32, C = O = 64,
112 x 112 images, 3 x 3 filters, padding 1, float32 in full FP32
(torch.backends.cudnn.allow_tf32 = False) and cuDNN's algorithm measured
for the shape (torch.backends.cudnn.benchmark = True), as moonlab
measures it. Called by peers_torch.py with its timer; prints
`name seconds` lines."""
import torch
import torch.nn.functional as F

dev = "cuda"


def main(median_time):
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    sets = [(torch.randn(32, 64, 112, 112, device=dev), torch.randn(64, 64, 3, 3, device=dev))
            for _ in range(2)]
    print("conv2d_f32", median_time(lambda x, w: F.conv2d(x, w, padding=1), sets, 21))
