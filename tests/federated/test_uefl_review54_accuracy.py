"""Review 5: the accuracy a UEFL result reports is the deterministic model's (dropout off) on each
silo's test data, and the docs page says so (it said every figure was "measured with dropout
really on in the head", the setting of the entropy only)."""

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.federated import Silo, simulate_uefl  # noqa: E402
from trustlab.federated.model import codebook_key  # noqa: E402
from trustlab.federated.protocol import InProcessEngine, ProtocolDriver  # noqa: E402
from trustlab.federated.silos import check_silo, load_silo_file, make_silos  # noqa: E402
from trustlab.federated.uefl import (  # noqa: E402
    SiloPlan,
    UEFLConfig,
    _prepare_model,
    initial_weights,
)

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "federated-uefl.md"


@pytest.mark.parametrize("use_vq", [True, False])
def test_reported_accuracy_is_the_deterministic_models(use_vq):
    cfg = UEFLConfig(rounds=1, rounds_plus=1, local_epochs=1, max_iterations=2, mc_passes=3,
                     threshold_factor=-0.5, random_state=11, weighting="examples")  # fmt: skip
    silos = make_silos("digits", 3, "rotation", random_state=11)
    engine = InProcessEngine(silos, cfg, 10)
    initial = initial_weights(cfg, silos[0].num_features, 10, use_vq=use_vq)
    driver = ProtocolDriver(cfg, 3, initial, use_vq=use_vq)
    driver.run(engine)
    reported = driver.state.history[-1]["accuracy"]
    for i, silo in enumerate(silos):
        plan = SiloPlan(i, driver.state.book_idx[i], False, use_vq)
        model = _prepare_model(driver.arrays, engine.states[i], silo, plan, cfg, 10)
        if use_vq:
            assert codebook_key(plan.book_idx) in engine.states[i].codebooks
            model.vq.active_book = plan.book_idx
        model.eval()
        with torch.no_grad():
            logits = model(torch.as_tensor(silo.X_test))[0]
        direct = float((logits.argmax(1).numpy() == silo.y_test).mean())
        assert reported[i] == pytest.approx(direct, abs=1e-12)
    if use_vq:
        assert driver.state.book_idx == [1, 1, 1]  # the extension books were evaluated


def test_docs_say_how_accuracy_and_entropy_are_measured():
    text = " ".join(DOCS_PAGE.read_text().split())
    assert "all measured with dropout really on" not in text
    assert "the accuracy of the deterministic model (dropout off" in text


@pytest.mark.parametrize(
    "label",
    [np.inf, 1e20, 2.0**63, np.uint64(2**63)],
    ids=["inf", "1e20", "2**63", "uint64 2**63"],
)
def test_labels_past_int64_are_refused_not_cast_to_a_negative_label(label, tmp_path):
    # Such labels became -2**63 and reached torch: raw IndexError 'Target -9223372036854775808
    # is out of bounds' (simulate_uefl, a Flower node's data-path file).
    X = np.zeros((4, 4), dtype=np.float32)
    y = np.array([0, 1, 1, 0], dtype=np.asarray(label).dtype)
    y[2] = label
    ok = np.array([0, 1, 0, 1])
    with pytest.raises(InputError, match=r"silos\[0\]\.y_train: expected labels 0, 1"):
        simulate_uefl([Silo(X, y, X, ok), Silo(X, ok, X, ok)], encoder="mlp", rounds=1,
                      max_iterations=1, local_epochs=1, mc_passes=2, baselines=())  # fmt: skip
    path = tmp_path / "silo.npz"
    np.savez(path, X_train=X, y_train=ok, X_test=X, y_test=y)
    with pytest.raises(InputError, match=r"data-path\.y_test: expected labels 0, 1"):
        load_silo_file(path)
    # Integer-valued floats are still labels.
    loaded = check_silo(Silo(X, ok.astype(float), X, ok), "silos[0]")
    assert loaded.y_train.dtype == np.int64 and loaded.y_train.tolist() == ok.tolist()


def test_long_names_cut_alike_in_the_summary_get_their_index():
    # The summary's silo column cuts names to 28 characters: two silos whose names differ only
    # after that were two rows with the same label.
    rng = np.random.default_rng(2)
    names = ["hospital-north-campus-scanner-A", "hospital-north-campus-scanner-B"]
    silos = [Silo(rng.random((6, 6)).astype(np.float32), rng.integers(0, 2, 6),
                  rng.random((4, 6)).astype(np.float32), rng.integers(0, 2, 4), name=name)
             for name in names]  # fmt: skip
    result = simulate_uefl(silos=silos, rounds=1, max_iterations=1, local_epochs=1, mc_passes=2,
                           encoder="mlp", seg=1, baselines=())  # fmt: skip
    rows = result.summary().splitlines()
    start = rows.index(next(r for r in rows if r.startswith("final accuracy"))) + 2
    labels = [row[2:30].strip() for row in rows[start : start + 2]]
    assert labels[0] != labels[1]
    assert [label.split()[0] for label in labels] == ["0:", "1:"]
