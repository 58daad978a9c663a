"""Benchmark: ANOVA-TPNN against a comparable neural additive model, time to the same accuracy.

The work (issue 4): 10,000 rows x 10 features, every main effect and every pair (55
components), a regression target with known main effects and interactions plus noise. Target:
the full ANOVA-TPNN fit in under 2 minutes on this CPU.

* ours: ``trustlab.explain.anova_tpnn.ANOVATPNN`` with its defaults (10 basis neurons per
  component, Adam, early stopping on a 15 % validation split);
* baseline: a neural additive model with pairs (NA2M-like: one ReLU network with hidden layers
  (32, 16) per component, centred afterwards), trained by the same loop: the same
  preprocessing, split, optimiser, batch size and early stopping
  (``NeuralAdditiveBaseline`` in ``benchmarks/nam_baseline.py``).

A speed ratio means something only at equal accuracy (issue 17). After every epoch the script
measures the test RMSE against the noiseless truth on 5,000 fresh rows (the evaluation is kept
off the clock), so each fit gives a curve of RMSE against time. It prints, per seed and model,
the fit to early stopping (seconds, epochs, test RMSE of the kept checkpoint) and the time each
model first reaches a common RMSE: the worse of the two kept checkpoints' RMSEs on that seed
(each fit keeps the epoch with the best validation loss, so both reach it). Times are CPU
seconds of this process (with one thread, the compute time whatever else runs on the machine)
and wall seconds.

Run ``python benchmarks/bench_anova_tpnn.py`` (seeds 0-2, full size), ``--seeds 0`` (one), or
``--quick`` (2,000 rows x 6 features); ``--curves FILE.csv`` writes every curve point;
``--lr-decay 1.0`` trains both at a constant learning rate (the default before issue 17).
"""

from __future__ import annotations

import argparse
import csv
import time

import numpy as np


def make_data(n: int, d: int, seed: int):
    """Independent uniform features; y = main effects + three pairs + N(0, 0.1^2) noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    truth = (
        np.sin(np.pi * X[:, 0])
        + X[:, 1] ** 2
        + 0.5 * X[:, 2]
        + np.exp(X[:, 3]) / 2
        + 2 * X[:, 0] * X[:, 2]
        + np.sin(2 * X[:, 1]) * X[:, 3]
        + np.maximum(X[:, 4], 0) * X[:, 5]
    )
    return X, truth, truth + 0.1 * rng.standard_normal(n)


def fit_with_curve(model, X, y, X_test, truth_test) -> dict:
    """Fit ``model``; after each epoch, the test RMSE of the network as it stands.

    Returns the fit's CPU and wall seconds (without the evaluations) and the curve: one
    (epoch, cpu seconds, wall seconds, test RMSE) per epoch.
    """
    import torch

    from trustlab.explain.anova_tpnn._encoding import as_frame

    live = {}
    make_network = model._make_network

    def keep_network(*args):
        live["network"] = make_network(*args)
        return live["network"]

    model._make_network = keep_network  # the network being trained, to evaluate it per epoch
    curve: list[tuple[int, float, float, float]] = []
    off_cpu = off_wall = 0.0
    test_inputs = {}

    def evaluate(epoch, _max_epochs, _valid_loss):
        nonlocal off_cpu, off_wall
        if epoch == 0:  # fit's call once the input is checked, before the network exists
            return
        cpu, wall = time.process_time(), time.perf_counter()
        if not test_inputs:  # the fitted input map exists once training runs
            x_num, x_cat = model._features.transform(as_frame(X_test))
            test_inputs["x"] = (torch.as_tensor(x_num, dtype=torch.float32), torch.as_tensor(x_cat))
        network = live["network"]  # in evaluation mode, constants on all rows (validation step)
        with torch.no_grad():
            raw = (network.bias() + network(*test_inputs["x"]).sum(dim=1))[:, 0].double().numpy()
        pred = model._output_shift_ + model._output_scale_ * raw
        rmse = float(np.sqrt(np.mean((pred - truth_test) ** 2)))
        curve.append((epoch, cpu - start_cpu - off_cpu, wall - start_wall - off_wall, rmse))
        off_cpu += time.process_time() - cpu
        off_wall += time.perf_counter() - wall

    start_cpu, start_wall = time.process_time(), time.perf_counter()
    model.fit(X, y, progress=evaluate)
    cpu = time.process_time() - start_cpu - off_cpu
    wall = time.perf_counter() - start_wall - off_wall
    final = float(np.sqrt(np.mean((model.predict(X_test) - truth_test) ** 2)))
    kept = curve[model.history_["best_epoch"] - 1][3]  # the kept checkpoint, as the curve saw it
    return {"cpu": cpu, "wall": wall, "epochs": model.history_["n_epochs"], "rmse": final,
            "kept": kept, "curve": curve}  # fmt: skip


def time_to(curve, target: float) -> tuple[float, float, int] | None:
    """(cpu s, wall s, epoch) when the curve first reaches RMSE <= target; None if never."""
    for epoch, cpu, wall, rmse in curve:
        if rmse <= target:
            return cpu, wall, epoch
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 rows x 6 features")
    parser.add_argument("--n-jobs", type=int, default=1, help="torch threads for both models")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--curves", help="write every (model, seed, epoch, time, RMSE) here")
    parser.add_argument(
        "--lr-decay", type=float, help="both models' lr_decay (default theirs; 1.0: constant rate)"
    )
    args = parser.parse_args()
    n, d = (2_000, 6) if args.quick else (10_000, 10)

    from nam_baseline import NeuralAdditiveBaseline  # beside this script

    from trustlab.explain.anova_tpnn import ANOVATPNN

    names = ("ANOVA-TPNN", "NAM baseline")
    print(
        f"{n:,} rows x {d} features, all pairs ({d + d * (d - 1) // 2} components), "
        f"{args.n_jobs} thread(s); times in CPU s (wall s)"
    )
    rows, ratios, ours_fits = [], [], []
    for seed in args.seeds:
        X, _, y = make_data(n, d, seed)
        X_test, truth_test, _ = make_data(5_000, d, seed + 1)
        common = dict(random_state=seed, n_jobs=args.n_jobs)
        if args.lr_decay is not None:
            common["lr_decay"] = args.lr_decay
        models = (ANOVATPNN(**common), NeuralAdditiveBaseline(**common))
        runs = [fit_with_curve(m, X, y, X_test, truth_test) for m in models]
        ours_fits.append(runs[0]["cpu"])
        for name, run in zip(names, runs, strict=True):
            print(
                f"seed {seed}  {name:<11} fit {run['cpu']:6.1f} s ({run['wall']:6.1f} s) "
                f"{run['epochs']:4d} epochs  test RMSE {run['rmse']:.4f} "
                f"(lowest over the epochs {min(r for *_, r in run['curve']):.4f})"
            )
            rows += [(name, seed, *point) for point in run["curve"]]
        common_rmse = max(run["kept"] for run in runs)  # what both fits end at, or better
        reached = [time_to(run["curve"], common_rmse) for run in runs]
        (ours_cpu, ours_wall, ours_epoch), (base_cpu, base_wall, base_epoch) = reached
        ratios.append(base_cpu / ours_cpu)
        print(
            f"seed {seed}  time to test RMSE {common_rmse:.4f}: ANOVA-TPNN {ours_cpu:.1f} s "
            f"({ours_wall:.1f} s, epoch {ours_epoch}), NAM baseline {base_cpu:.1f} s "
            f"({base_wall:.1f} s, epoch {base_epoch}); ratio baseline / ours "
            f"{base_cpu / ours_cpu:.2f} (CPU)"
        )
    print(
        f"ratio at equal accuracy over seeds {args.seeds}: median {np.median(ratios):.2f}, "
        f"range {min(ratios):.2f}-{max(ratios):.2f}"
    )
    if args.curves:
        with open(args.curves, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["model", "seed", "epoch", "cpu_s", "wall_s", "test_rmse"])
            writer.writerows(rows)
    if not args.quick:
        slowest = max(ours_fits)
        verdict = "met" if slowest < 120 else "MISSED"
        print(f"target: ANOVA-TPNN full fit under 120 s: {verdict} (slowest {slowest:.1f} CPU s)")


if __name__ == "__main__":
    main()
