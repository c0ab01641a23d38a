"""tests/python/readme_cell.py: the notebook cell of docs/python.md, exactly (import ozcrt first, no LD_PRELOAD); its output on the H200 is in docs/python.md."""
import ozcrt, torch
torch.manual_seed(0)
a = torch.rand(1024, 1024, dtype=torch.float64, device="cuda") * 2 - 1
b = torch.rand(1024, 1024, dtype=torch.float64, device="cuda") * 2 - 1
with ozcrt.mode("off"):
    native = a @ b
with ozcrt.region(mode="phase22", min_m=1, min_n=1, min_k=1):
    emulated = a @ b
print(((emulated - native).norm() / native.norm()).item())   # about 1e-10: the 34-bit bound
with ozcrt.compare(min_m=1, min_n=1, min_k=1) as rep:
    a @ b
print(rep.sites[0]["normwise_worst"], rep.sites[0]["beyond_bound_total"])
print(ozcrt.stats())
