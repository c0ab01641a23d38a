#!/usr/bin/env python3
"""tests/gpu/shim/torchrun_ranks.py: one rank of torchrun_check.sh: rank r runs 3 + 2 r float64 products on cuda:0 (gloo, so that two ranks share one GPU), then all-reduces a checksum."""
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
a = torch.randn(1024, 1024, dtype=torch.float64, device="cuda:0")
s = torch.zeros((), dtype=torch.float64)
for _ in range(3 + 2 * rank):
    s += (a @ a).sum().cpu()
dist.all_reduce(s)
print("rank %d pid %d: %d products, checksum %.6e" % (rank, os.getpid(), 3 + 2 * rank, s.item()), flush=True)
dist.destroy_process_group()
