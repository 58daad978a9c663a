"""Aggregate-regime values: ``dcp_from_aggregates`` against the authors' joint method.

Both methods run 5 restarts with seed 0 from the same starts (the independence start, then random
ones; ``tests/fairness/dcp_joint_reference.py`` draws them as the library does) on random
problems drawn like ``benchmarks/bench_dcp.py`` draws them, one seed a problem. Each line gives
the reduced method's value, its value without second descents (``SECOND_DESCENT_WORK`` set to -1
for that run only), the joint method's value and both CPU times; the summary gives the mean
difference (reduced - joint; below 0 is better), the largest excess and how many excesses are
above 0.005. The documented figures (docs/fairness-dcp.md, "Measured") came from:

    python benchmarks/bench_dcp_joint_values.py --sizes mixed --seeds 100-121
    python benchmarks/bench_dcp_joint_values.py --sizes large --seeds 130-132  # ~200 CPU-s each
    python benchmarks/bench_dcp_joint_values.py --sizes small --seeds 200-299
    python benchmarks/bench_dcp_joint_values.py --sizes small --seeds 300-323 --beta 0.5
    python benchmarks/bench_dcp_joint_values.py --chile out/predictions.csv  # of `trustlab audit`

Sizes (K labels, G groups): mixed cycles (3, 5), (4, 10), (6, 20) over the seeds; large is
(10, 50); small is K = 2 + seed % 4, G = 2 + (seed // 4) % 7. ``--chile`` reads the vote, region
and logistic_regression columns of the default audit's predictions.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before numpy loads its BLAS

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import trustlab.fairness._aggregate as aggregate  # noqa: E402
from trustlab.fairness import dcp_from_aggregates, dcp_inputs  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fairness"))
from bench_dcp import problem  # noqa: E402
from dcp_joint_reference import solve_joint  # noqa: E402

SEED, RESTARTS = 0, 5


def size(kind: str, seed: int) -> tuple[int, int]:
    if kind == "mixed":
        return [(3, 5), (4, 10), (6, 20)][seed % 3]
    if kind == "large":
        return 10, 50
    return 2 + seed % 4, 2 + (seed // 4) % 7


def ours(weights, dist, pred, beta: float, second: bool) -> float:
    saved = aggregate.SECOND_DESCENT_WORK
    aggregate.SECOND_DESCENT_WORK = saved if second else -1
    try:
        result = dcp_from_aggregates(
            weights, dist, pred, beta=beta, n_restarts=RESTARTS, random_state=SEED
        )
    finally:
        aggregate.SECOND_DESCENT_WORK = saved
    return result.estimate


def compare(label: str, weights, dist, pred, beta: float) -> tuple[float, float, float]:
    start = time.process_time()
    value = ours(weights, dist, pred, beta, second=True)
    ours_s = time.process_time() - start
    without = ours(weights, dist, pred, beta, second=False)
    start = time.process_time()
    joint = solve_joint(
        weights, dist, pred, beta=beta, restarts=RESTARTS, rng=np.random.default_rng(SEED)
    ).value
    joint_s = time.process_time() - start
    print(
        f"{label} ours {value:.6f} (no 2nd descent {without:.6f}) joint {joint:.6f} "
        f"diff {value - joint:+.6f}; CPU-s {ours_s:.3f} / {joint_s:.3f}",
        flush=True,
    )
    return value, without, float(joint)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", choices=["mixed", "large", "small"], default="mixed")
    parser.add_argument("--seeds", default="100-121", help="problem seeds, FIRST-LAST")
    parser.add_argument("--beta", type=float, default=1.0)
    parser.add_argument("--chile", type=Path, help="predictions.csv of `trustlab audit`")
    args = parser.parse_args()
    rows = []
    if args.chile is not None:
        import pandas as pd

        frame = pd.read_csv(args.chile)
        inp = dcp_inputs(frame["vote"], frame["logistic_regression"], frame["region"])
        rows.append(compare("chile", inp.group_weights, inp.label_dist, inp.pred_dist, args.beta))
    else:
        first, last = (int(part) for part in args.seeds.split("-"))
        for seed in range(first, last + 1):
            n_labels, n_groups = size(args.sizes, seed)
            _, weights, dist, pred = problem(n_labels, n_groups, seed)
            label = f"seed {seed} K={n_labels} G={n_groups}"
            rows.append(compare(label, weights, dist, pred, args.beta))
    values = np.array(rows)
    for name, column in (("ours", 0), ("no 2nd descent", 1)):
        diff = values[:, column] - values[:, 2]
        print(
            f"{name} - joint over {len(diff)}: mean {diff.mean():+.4f}, largest excess "
            f"{diff.max():+.4f}, excesses above 0.005: {int((diff > 0.005).sum())}"
        )


if __name__ == "__main__":
    main()
