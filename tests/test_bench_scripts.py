"""The benchmark scripts' printed verdicts and ratio labels (their times are never asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        check=True,
    )
    return done.stdout


def test_markets_quick_run_does_not_claim_the_million_user_target():
    # --quick times m = 100,000 only: the m = 10^6 target is not measured, so not "met"
    out = _run("bench_markets.py", "--quick")
    verdict = next(line for line in out.splitlines() if line.startswith("target"))
    assert "not measured" in verdict
    assert not verdict.endswith(": met")


def test_dcp_ratio_columns_name_their_direction():
    # the time ratio is ours / the authors' (> 1: ours slower), unlike the peer / ours elsewhere
    out = _run("bench_dcp.py", "--quick", "--skip-aggregate")
    header = next(line for line in out.splitlines() if "ours s" in line)
    assert "ours/authors" in header.split()


def test_equigx_agreement_line_counts_the_graphs_it_compared():
    # the float64 agreement runs on the first five graphs, or on all of them when fewer
    out = _run("bench_equigx.py", "--graphs", "2", "--steps", "2", "--layers", "1", "--mul", "2")
    assert "float64, 2 graphs" in out


def test_anova_tpnn_curve_skips_fits_call_before_training():
    # fit calls progress(0, max_epochs, nan) before the network exists; the curve starts at 1
    import importlib.util

    from trustlab.explain.anova_tpnn import ANOVATPNN

    spec = importlib.util.spec_from_file_location("bench_anova", BENCHMARKS / "bench_anova_tpnn.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    X, _, y = bench.make_data(300, 6, 0)
    X_test, truth_test, _ = bench.make_data(100, 6, 1)
    model = ANOVATPNN(max_epochs=2, random_state=0, n_jobs=1)
    run = bench.fit_with_curve(model, X, y, X_test, truth_test)
    assert [point[0] for point in run["curve"]] == list(range(1, run["epochs"] + 1))


def test_watermark_bench_refuses_no_images_in_one_line():
    for flag in ("--images", "--batch-size"):
        done = subprocess.run(
            [sys.executable, str(BENCHMARKS / "bench_watermark.py"), flag, "0"],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert f"{flag}: expected an integer >= 1, got 0" in done.stderr
