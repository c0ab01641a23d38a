#!/usr/bin/env python3
"""tests/gpu/shim/torch_graph_check.py: a float64 mm captured with torch.cuda.graphs and replayed is bit-equal to the same mm made eagerly.

Run natively and under libozcrt.so (graphs.sh, which also counts in the shim's
log that the captured call was emulated: every mm of this shape, the captured
one included, emulated; none forwarded as capture-no-workspace).
PyTorch's recipe: warm-up on a side stream, then capture (global capture mode,
PyTorch's default). Prints PASS/FAIL; exit status 1 on FAIL.
"""
import sys

N = 768  # above the shim's default thresholds (512)
EAGER_CALLS = 3  # the reference and two warm-up calls; one more is captured


def main():
    import torch
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device for torch")
        return 0
    d = dict(device="cuda", dtype=torch.float64)
    torch.manual_seed(20261130)
    a, b = torch.rand(N, N, **d), torch.rand(N, N, **d)
    eager = a @ b
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(EAGER_CALLS - 1):
            warm = a @ b
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static = a @ b
    same = True
    for _ in range(3):
        static.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        same = same and torch.equal(static.view(torch.int64), eager.view(torch.int64))
    same = same and torch.equal(warm.view(torch.int64), eager.view(torch.int64))
    print(f"{'PASS' if same else 'FAIL'}: torch.cuda.graphs float64 mm {N}x{N}x{N}: "
          f"replays {'bit-equal to' if same else 'DIFFER from'} the eager call")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
