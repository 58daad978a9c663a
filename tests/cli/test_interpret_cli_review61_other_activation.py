"""Review 61 (polysae): ``sae train`` refuses an option of the other activation.

``--activation relu --k 8`` trained a ReLU + L1 SAE and ``--l1-coefficient 3`` (TopK, the
default) a k=32 SAE, each option dropped without a word; both are now one line naming the
option, exit 2, before the model loads. Without them the defaults (k 32, L1 5.0) are as before.
"""

from __future__ import annotations

import pytest

from cli_helpers import one_line, run_main


class Loaded(Exception):
    """The options passed: the command went on to load the model."""


@pytest.fixture
def no_model(monkeypatch):
    import trustlab.llm as llm

    def loading(*args, **kwargs):
        raise Loaded

    monkeypatch.setattr(llm, "load_model", loading)
    monkeypatch.setattr("trustlab.cli.interpret._check_layer", lambda model, layer: None)


@pytest.mark.parametrize(
    "extra, option",
    [(["--activation", "relu", "--k", 8], "--k"), (["--l1-coefficient", 3], "--l1-coefficient"),
     (["--activation", "topk", "--l1-coefficient", 0], "--l1-coefficient")],
)  # fmt: skip
def test_an_option_of_the_other_activation_is_refused(tmp_path, capsys, no_model, extra, option):
    args = ["interpret", "sae", "train", "--model", "m", "--layer", 1, "--out", tmp_path / "o"]
    code, _, err = run_main([*args, *extra], capsys)
    assert code == 2 and one_line(err).startswith(f"trustlab: error: {option}: expected no"), err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "extra",
    [[], ["--k", 8], ["--activation", "relu"], ["--activation", "relu", "--l1-coefficient", 3]],
)
def test_the_options_of_the_activation_pass(tmp_path, capsys, no_model, monkeypatch, extra):
    from trustlab.interpret import SparseAutoencoder

    made = []
    check = SparseAutoencoder.check_params
    monkeypatch.setattr(SparseAutoencoder, "check_params",
                        lambda self, *a: made.append(self) or check(self, *a))  # fmt: skip
    args = ["interpret", "sae", "train", "--model", "m", "--layer", 1, "--out", tmp_path / "o"]
    code, _, err = run_main([*args, *extra], capsys)
    assert code != 2 and "Loaded" in err, err  # no refusal: it went on to load the model
    ((sae,),) = [made]
    given = dict(zip(extra[::2], extra[1::2], strict=True))
    assert sae.k == given.get("--k", 32) and sae.l1_coefficient == given.get(
        "--l1-coefficient", 5.0
    )
