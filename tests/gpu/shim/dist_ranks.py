#!/usr/bin/env python3
"""tests/gpu/shim/dist_ranks.py: a data-parallel float64 step in several processes on one GPU, and its check (dist_check.sh).

    dist_ranks.py rank OUTDIR          one rank (launched by torchrun, or by mpirun: RANK and
                                       WORLD_SIZE then come from OMPI_COMM_WORLD_*)
    dist_ranks.py compare NATIVE RUN MODE [--world 2]
                                       RUN's ranks against NATIVE's (MODE: off, phase22, ozaki2)
    dist_ranks.py same RUN_A RUN_B [--world 2]
                                       every tensor of every rank bit-equal in both runs (one
                                       process a GPU against all on one GPU, in one mode)

DIST_BACKEND=nccl (the environment) makes it one process a GPU: rank r on cuda:LOCAL_RANK, the
all-reduce through NCCL on the GPU; the default, gloo, puts every rank on cuda:0.

Rank r (gloo, every rank on cuda:0): the shared weights W (one seed) and its own batch X (seed
1000 + r), 1024 x 1024 x 1024 float64: Y = X W, the gradient of sum(Y^2), G = X^T (2 Y), and
1 + 2 r more products Z = X X^T (so rank r makes 3 + 2 r products); G all-reduced (sum) over
gloo, then W1 = W - 1e-3 G_sum / world. Each rank saves its tensors to OUTDIR/rank<r>.pt.

compare holds, for every rank: X and W bit-equal to NATIVE's (the same data); in MODE off every
tensor bit-equal to NATIVE's; otherwise each product within its mode's bound of the same product
computed here natively on the run's own operands (Y against X W, G against X^T (2 Y_run), Z
against X X^T):
  ozaki2:  |d| <= 8 (k+2) 2^-53 (|A||B|)_ij + k 2^-52 rowmax colmax         (FP64 tolerance)
  phase22: |d| <= 8 (k+2) 2^-53 (|A||B|)_ij + k 2^-32 rowmax colmax
and, in every mode, G_sum bit-equal to the sum of the ranks' own G and W1 to W - 1e-3 G_sum / world
(the communication and the step exact). Prints PASS/FAIL lines, then "N passed, M failed"; exit 1
on any failure.
"""
import os
import sys

import torch

from verdicts import Verdicts

M = K = N = 1024


def rank_main(outdir):
    import torch.distributed as dist

    if "RANK" not in os.environ and "OMPI_COMM_WORLD_RANK" in os.environ:  # launched by mpirun
        os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
        os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
        os.environ["LOCAL_RANK"] = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", os.environ["RANK"])
    backend = os.environ.get("DIST_BACKEND", "gloo")
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda:%d" % (int(os.environ.get("LOCAL_RANK", rank)) if backend == "nccl" else 0))
    torch.cuda.set_device(dev)
    gw = torch.Generator(device=dev).manual_seed(20261202)
    gx = torch.Generator(device=dev).manual_seed(1000 + rank)
    W = torch.rand(K, N, dtype=torch.float64, device=dev, generator=gw) * 2 - 1
    X = torch.rand(M, K, dtype=torch.float64, device=dev, generator=gx) * 2 - 1
    Y = X @ W
    G = X.T @ (2 * Y)
    for _ in range(1 + 2 * rank):
        Z = X @ X.T
    Gsum = G.clone() if backend == "nccl" else G.cpu()
    dist.all_reduce(Gsum)
    Gsum = Gsum.cpu()
    W1 = W.cpu() - 1e-3 * Gsum / world
    torch.save({"X": X.cpu(), "W": W.cpu(), "Y": Y.cpu(), "G": G.cpu(), "Z": Z.cpu(), "Gsum": Gsum, "W1": W1,
                "world": world, "products": 3 + 2 * rank}, os.path.join(outdir, "rank%d.pt" % rank))
    print("rank %d of %d (%s, %s), pid %d: %d products, |G_sum| %.6e" % (
        rank, world, backend, dev, os.getpid(), 3 + 2 * rank, Gsum.abs().sum().item()), flush=True)
    dist.destroy_process_group()
    return 0


VERDICTS = Verdicts()
check = VERDICTS.check


def load_pair(dir_a, dir_b, r):
    """rank r's tensors of both runs, or None (a failed check) when one is missing"""
    try:
        return torch.load(os.path.join(dir_a, "rank%d.pt" % r)), torch.load(os.path.join(dir_b, "rank%d.pt" % r))
    except OSError as e:
        check("rank %d: both runs saved their tensors" % r, False, str(e))
        return None


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.view(torch.int64), b.view(torch.int64))


def within(got, a, b, mode):
    """got against a b computed here (natively), within the mode's bound: (ok, detail)"""
    dev = torch.device("cuda:0")
    a, b = a.to(dev), b.to(dev)
    ref = a @ b
    k = a.shape[1]
    ab = a.abs() @ b.abs()
    rmax = a.abs().amax(dim=1, keepdim=True)
    cmax = b.abs().amax(dim=0, keepdim=True)
    tol = 8 * (k + 2) * 2.0 ** -53 * ab + k * (2.0 ** -32 if mode == "phase22" else 2.0 ** -52) * rmax * cmax
    err = (got.to(dev) - ref).abs()
    bad = int((~(err <= tol)).sum().item())
    return bad == 0, "%d elements beyond, max |d|/tol %.3g" % (bad, (err / tol).max().item())


def compare_main(native_dir, run_dir, mode, world):
    for r in range(world):
        pair = load_pair(native_dir, run_dir, r)
        if pair is None:
            continue
        nat, run = pair
        check("rank %d: the same X and W as natively" % r, same(nat["X"], run["X"]) and same(nat["W"], run["W"]))
        if mode == "off":
            for t in ("Y", "G", "Z", "Gsum", "W1"):
                check("rank %d, off: %s bit-equal to native" % (r, t), same(nat[t], run[t]))
            continue
        X, W = run["X"], run["W"]
        ok, why = within(run["Y"], X, W, mode)
        check("rank %d, %s: Y = X W within the bound" % (r, mode), ok, why)
        ok, why = within(run["G"], X.T.contiguous(), 2 * run["Y"], mode)
        check("rank %d, %s: G = X^T (2 Y) within the bound" % (r, mode), ok, why)
        ok, why = within(run["Z"], X, X.T.contiguous(), mode)
        check("rank %d, %s: Z = X X^T within the bound" % (r, mode), ok, why)
    # the all-reduce and the step: exact in every mode
    try:
        runs = [torch.load(os.path.join(run_dir, "rank%d.pt" % r)) for r in range(world)]
    except OSError:
        runs = []
    if runs:
        gsum = runs[0]["G"].clone()
        for x in runs[1:]:
            gsum += x["G"]
        for r, x in enumerate(runs):
            check("rank %d: G_sum bit-equal to the sum of the ranks' G (%s)" % (r, mode), same(x["Gsum"], gsum))
            check("rank %d: W1 = W - 1e-3 G_sum / world, exactly (%s)" % (r, mode),
                  same(x["W1"], x["W"] - 1e-3 * x["Gsum"] / world))
    return VERDICTS.summary()


def same_main(run_a, run_b, world):
    for r in range(world):
        pair = load_pair(run_a, run_b, r)
        if pair is None:
            continue
        a, b = pair
        for t in ("X", "W", "Y", "G", "Z", "Gsum", "W1"):
            check("rank %d: %s bit-equal in %s and %s" % (r, t, os.path.basename(run_a), os.path.basename(run_b)),
                  same(a[t], b[t]))
    return VERDICTS.summary()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "rank":
        sys.exit(rank_main(sys.argv[2]))
    if len(sys.argv) in (5, 7) and sys.argv[1] == "compare":
        world = int(sys.argv[6]) if len(sys.argv) == 7 and sys.argv[5] == "--world" else 2
        sys.exit(compare_main(sys.argv[2], sys.argv[3], sys.argv[4], world))
    if len(sys.argv) in (4, 6) and sys.argv[1] == "same":
        world = int(sys.argv[5]) if len(sys.argv) == 6 and sys.argv[4] == "--world" else 2
        sys.exit(same_main(sys.argv[2], sys.argv[3], world))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
