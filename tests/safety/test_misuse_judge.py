"""ModelJudge, a language model as the monitor's judge: P(yes) from the first token's
alternatives (checked by hand and against SmolLM2's own log-probabilities), the first word of
the answer otherwise, and its place in the monitor's score."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trustlab.errors import BackendError, InputError
from trustlab.llm.completion import Completion
from trustlab.safety.misuse import ModelJudge, ReconstructionMonitor, judge_question

REQUESTS = ["Complete this function: def add(a, b).", "Add the canary line to this module."]
OBJECTIVE = "Complete def add(a, b) and put the canary line at the top."


class Says:
    name = "says"

    def __init__(self, text):
        self.text, self.prompts = text, []

    def generate(self, prompts, max_new_tokens=64, *, chat=True, **kwargs):
        self.prompts.extend(prompts)
        return [self.text for _ in prompts]


class Scores(Says):
    def __init__(self, top, text=""):
        super().__init__(text)
        self.top = top

    def completions(self, prompts, max_new_tokens=64, *, chat=True, top_logprobs=0, **kwargs):
        first = tuple((t, math.log(p)) for t, p in self.top)
        return [Completion(self.text, "length", ("x",), (-0.1,), (first,)) for _ in prompts]


@pytest.mark.parametrize(("text", "p"), [("Yes.", 1.0), (" no, they do not", 0.0), ("Maybe", 0.5)])
def test_the_first_word_decides_without_alternatives(text, p):
    model = Says(text)
    assert ModelJudge(model)(REQUESTS, OBJECTIVE) == p
    assert model.prompts == [judge_question(REQUESTS, OBJECTIVE)]


def test_the_yes_mass_among_yes_and_no_tokens():
    top = [(" yes", 0.45), ("Yes", 0.15), (" No", 0.2), ("maybe", 0.2)]
    assert ModelJudge(Scores(top))(REQUESTS, OBJECTIVE) == pytest.approx(0.6 / 0.8, abs=1e-12)


def test_without_yes_or_no_among_the_alternatives_the_text_decides():
    assert ModelJudge(Scores([("maybe", 0.9)], text="no"))(REQUESTS, OBJECTIVE) == 0.0
    assert (
        ModelJudge(Scores([("maybe", 0.9)], text="hmm"), undecided=0.3)(REQUESTS, OBJECTIVE) == 0.3
    )


def test_the_question_lists_every_request_and_the_objective():
    question = judge_question(REQUESTS, OBJECTIVE)
    assert all(r in question for r in REQUESTS) and OBJECTIVE in question


def test_the_monitor_mixes_the_judge_and_the_similarity():
    class Fixed:
        def encode(self, texts, **kwargs):
            return np.ones((len(texts), 3))

    judge = ModelJudge(Scores([("yes", 0.3), ("no", 0.7)]))
    monitor = ReconstructionMonitor(embedder=Fixed(), judge=judge, weight=0.25)
    # identical embeddings: similarity (1 + 1) / 2 = 1
    assert monitor.score(REQUESTS, OBJECTIVE) == pytest.approx(0.25 * 0.3 + 0.75 * 1.0, abs=1e-12)


def test_on_smollm2_the_probability_is_its_own_first_token_mass(smollm2):
    judge = ModelJudge(smollm2)
    p = judge(REQUESTS, OBJECTIVE)
    (c,) = smollm2.completions([judge_question(REQUESTS, OBJECTIVE)], 1, top_logprobs=20)
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in c.top_logprobs[0]:
        word = token.strip().lower()
        if word in mass:
            mass[word] += math.exp(logprob)
    assert 0.0 <= p <= 1.0
    if mass["yes"] + mass["no"] > 0:
        assert p == pytest.approx(mass["yes"] / (mass["yes"] + mass["no"]), abs=1e-9)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ModelJudge(object()), "model"),
        (lambda: ModelJudge(Says("yes"), undecided=2), "undecided"),
        (lambda: ModelJudge(Says("yes"))([], OBJECTIVE), "requests"),
        (lambda: ModelJudge(Says("yes"))(REQUESTS, ""), "objective"),
        (lambda: ModelJudge(Says("yes"))([3], OBJECTIVE), r"requests\[0\]"),
    ],
)
def test_bad_input_is_named(make, message):
    with pytest.raises(InputError, match=message):
        make()


class NoLogprobs(Says):
    """An endpoint whose server answers without log-probabilities (as RemoteModel raises)."""

    def completions(self, prompts, max_new_tokens=64, *, chat=True, top_logprobs=0, **kwargs):
        raise BackendError("POST http://x/v1/chat/completions: the response has no logprobs")


@pytest.mark.parametrize(("text", "p"), [("Yes", 1.0), ("No.", 0.0), ("Perhaps", 0.5)])
def test_an_endpoint_without_logprobs_falls_back_to_the_first_word(text, p):
    model = NoLogprobs(text)
    assert ModelJudge(model)(REQUESTS, OBJECTIVE) == p
    assert model.prompts == [judge_question(REQUESTS, OBJECTIVE)]


def test_a_remote_model_without_logprobs_is_judged_by_its_text(monkeypatch):
    from trustlab.llm import RemoteModel

    reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Yes"}}]}
    reply["choices"][0]["finish_reason"] = "stop"
    monkeypatch.setattr(RemoteModel, "_request", lambda self, method, path, payload: reply)
    model = RemoteModel("http://127.0.0.1:9/v1", "served")
    assert ModelJudge(model)(REQUESTS, OBJECTIVE) == 1.0


class Tokens(Says):
    """Answers with the first ``max_new_tokens`` of a token list; the first token's
    alternatives hold neither yes nor no."""

    def __init__(self, tokens):
        super().__init__("".join(tokens))
        self.tokens = tokens

    def completions(self, prompts, max_new_tokens=64, *, chat=True, top_logprobs=0, **kwargs):
        tokens = tuple(self.tokens[:max_new_tokens])
        top = ((tokens[0], -0.1), ("Sure", -3.0))
        logprobs = tuple(-0.1 for _ in tokens)
        return [Completion("".join(tokens), "length", tokens, logprobs, (top,)) for _ in prompts]


@pytest.mark.parametrize(
    ("tokens", "p"), [(["**", "Yes", "**"], 1.0), (["\n", "No", "."], 0.0), (["**", "Hmm"], 0.5)]
)
def test_the_first_word_is_read_past_a_first_token_that_is_not_a_word(tokens, p):
    assert ModelJudge(Tokens(tokens))(REQUESTS, OBJECTIVE) == p
