"""A non-callable ``progress`` is refused before any work (review 61 progress, round 3).

Each of these functions called ``progress`` without checking it: ``progress=5`` ran the first
batch, epoch, prompt, image or step and then failed with a bare "TypeError: 'int' object is
not callable". Now trustlab._progress.check_progress refuses it first, naming the argument.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor

from agents.one_rule_policy import one_rule_policy
from trustlab.agents import Guardrail, evaluate_guardrail
from trustlab.audit import run_audit
from trustlab.errors import InputError
from trustlab.explain import FastPD, explain_table
from trustlab.explain.anova_tpnn import ANOVATPNN
from trustlab.explain.equigx import evaluate_explanations, train_tfn
from trustlab.explain.regions import evaluate_regions
from trustlab.safety.polytope.language_model import generation_states
from trustlab.watermark import evaluate_backend

TWO = "a callable (done, total) or None"
POLICY = one_rule_policy(rule_id="a", weights={"a": 1.0})
CASE = {"trajectory": [], "action": "pay", "label": "safe", "evidence": {"ok": True}}


@pytest.fixture(scope="module")
def gbm():
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"])
    table["y"] = table.a * table.b
    return GradientBoostingRegressor(n_estimators=5, max_depth=2).fit(
        table[["a", "b", "c"]], table.y
    ), table


class _Answers:  # a watermark backend and a language model that record being used
    name, used = "fake", []

    def answer(self, image, question):
        self.used.append("answer")
        return "invisible"

    def level_logits(self, image):
        return np.zeros(5)

    @contextlib.contextmanager
    def intervene(self, layer, hook):
        self.used.append("intervene")
        yield

    def generate(self, prompts, max_new_tokens, chat=True, batch_size=1):
        self.used.append("generate")
        return ["x"]


class _TwoImages:
    images = [np.zeros((4, 4, 3)), np.zeros((4, 4, 3))]

    def __len__(self):
        return 2


CALLS = {
    "FastPD.explain": (
        lambda m, t: FastPD(m).fit(t[["a", "b", "c"]][:20]).explain(t[["a", "b", "c"]], progress=5),
        TWO,
    ),
    "explain_table": (
        lambda m, t: explain_table(m, t, label="y", background_size=20, progress=5),
        TWO,
    ),
    "evaluate_guardrail": (
        lambda m, t: evaluate_guardrail(Guardrail(POLICY), [CASE], n_bootstrap=10, progress=5),
        TWO,
    ),
    "run_audit": (
        lambda m, t: run_audit(
            t.assign(yhat=t.y > 0, y=t.y > 0),
            label="y",
            pred="yhat",
            out=t.attrs["out"],
            sections=["overview"],
            progress=5,
        ),
        "a callable (description, done, total) or None",
    ),
    "ANOVATPNN.fit": (
        lambda m, t: ANOVATPNN(max_epochs=1).fit(t[["a", "b"]], t.y, progress=5),
        "a callable (epoch, max_epochs, validation_loss) or None",
    ),
    "evaluate_regions": (
        lambda m, t: evaluate_regions({}, None, None, None, progress=5),
        "a callable (step, n_steps, what) or None",
    ),
    "train_tfn": (
        lambda m, t: train_tfn(None, None, progress=5),
        "a callable (epoch, max_epochs, loss, train_accuracy, validation_accuracy) or None",
    ),
    "evaluate_explanations": (
        lambda m, t: evaluate_explanations(None, None, progress=5),
        TWO,
    ),
    "generation_states": (
        lambda m, t: generation_states(_Answers(), ["a", "b"], 0, progress=5),
        TWO,
    ),
    "evaluate_backend": (lambda m, t: evaluate_backend(_Answers(), _TwoImages(), progress=5), TWO),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_non_callable_progress_is_refused_before_any_work(name, gbm, tmp_path):
    call, expected = CALLS[name]
    model, table = gbm
    table = table.copy()
    table.attrs["out"] = str(tmp_path / "out")
    _Answers.used = []
    with pytest.raises(InputError) as info:
        call(model, table)
    assert str(info.value) == f"progress: expected {expected}, got 5"
    assert info.value.argument == "progress"
    assert _Answers.used == []  # no answer read, no prompt generated
    assert not (tmp_path / "out").exists()  # the audit wrote nothing
