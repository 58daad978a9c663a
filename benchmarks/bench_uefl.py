"""UEFL rounds per second: in process (trustlab's engine) and over Flower on loopback.

Runs the same protocol on the same digit silos and seeds twice: with
trustlab.federated.simulate_uefl (every silo in this process) and with a real Flower deployment
on 127.0.0.1 (one SuperLink, one SuperNode per silo, the app submitted with `flwr run`). Prints the
seconds, federated rounds per second (training rounds; the uncertainty tests between iterations
are included in the time), the transport overhead ratio (Flower time / in-process time) and
whether both ended with the same parameters. --quick: 2 silos, 1 + 1 rounds.
Run: python benchmarks/bench_uefl.py [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from trustlab.federated import UEFLConfig, run_loopback, simulate_uefl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 silos, 1 + 1 rounds")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    silos, rounds, plus = (2, 1, 1) if args.quick else (3, 3, 2)
    config = UEFLConfig(rounds=rounds, rounds_plus=plus, local_epochs=1, mc_passes=5,
                        max_iterations=2, threshold_factor=0.0, evaluate_every_round=False,
                        random_state=args.seed)  # fmt: skip

    _warm_up()
    start = time.perf_counter()
    local = simulate_uefl(n_silos=silos, config=config, baselines=()).methods["uefl"]
    local_s = time.perf_counter() - start
    n_rounds = len(local.rounds)
    print(f"{silos} silos, {n_rounds} rounds (UEFL, {len(local.extensions)} extension(s))")
    print(f"in process:        {local_s:8.2f} s   {n_rounds / local_s:8.3f} rounds/s", flush=True)

    with tempfile.TemporaryDirectory() as work:
        flower = run_loopback(config, n_silos=silos, workdir=work, timeout=900)
    loop_s, wall_s = flower.seconds, flower.wall_seconds
    print(f"Flower, rounds:    {loop_s:8.2f} s   {n_rounds / loop_s:8.3f} rounds/s "
          f"(the ServerApp's loop)")  # fmt: skip
    print(f"Flower, with start:{wall_s:8.2f} s   {n_rounds / wall_s:8.3f} rounds/s "
          f"(SuperLink, SuperNodes and `flwr run` included)")  # fmt: skip
    print(f"transport overhead ratio: {loop_s / local_s:.1f}x (rounds), {wall_s / local_s:.1f}x "
          f"(with start-up)")  # fmt: skip
    gap = max(float(np.max(np.abs(flower.weights[k] - v))) for k, v in local.weights.items())
    print(f"largest parameter difference Flower vs in process: {gap:.2e}")


def _warm_up() -> None:
    """Import torch and scikit-learn's KMeans once, so the in-process time is the rounds'."""
    from trustlab.federated import kmeans_codebook

    kmeans_codebook(np.random.default_rng(0).random((64, 4)), 4)


if __name__ == "__main__":
    main()
