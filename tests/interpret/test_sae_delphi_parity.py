"""Parity with the authors' package, delphi (``eai-delphi`` 0.1.3): the spec's checks D1-D3.

delphi is the oracle, run on the same examples as trustlab (same token ids, activations and
train/test/non-activating split, converted into delphi's ``LatentRecord``):

- **D1** detection and fuzzing: delphi's ``DetectionScorer`` / ``FuzzingScorer`` and ours, with
  one deterministic rule-based client and delphi's own prompt functions (through our
  ``prompt_builder``): the same multiset of rendered examples (``<< >>`` included), the same
  answer per example, and delphi's own ``compute_classification_metrics`` equal to ours exactly.
  With default settings our fuzzing negatives mark other wrong tokens than delphi's: delphi
  re-seeds Python's ``random`` with 22 before every window, so every non-activating window of a
  length gets the same marks (the centre and ``random.Random(22).sample`` of the other indices);
  a test pins that rule, and with it passed as ``wrong_positions`` the texts are identical.
- **D2** surprisal on SmolLM2-135M (fp32): delphi's ``SurprisalScorer`` (a KV-cached prompt,
  right padding) and ours (whole sequences, right padding) through a forward hook on the same
  Hugging Face model: per-token losses within 1e-4 nats. delphi never scores an example's first
  token (the logit that predicts it belongs to the cached prompt pass and is dropped); ours
  does, so per example ours = delphi's + the first token's gain, computed here directly from
  the prompts alone, and the AUROC of that sum equals ours to 1e-6.
- **D3** embedding with the shipped MiniLM: delphi's ``EmbeddingScorer`` and ours with its query
  prefix: cosines within 1e-5, the same AUROC.

delphi requires vLLM, which is not installed (delphi is installed with ``--no-deps``, see the
Makefile): the module fixture ``delphi`` puts stub modules for the vLLM names delphi imports at
import time into ``sys.modules``, imports delphi, and afterwards removes delphi's modules and the
stubs again (and restores Python's ``random`` state, which delphi re-seeds).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import importlib
import random
import re
import subprocess
import sys
import types
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import roc_auc_score
from test_sae_explain import decode, digit_cache

from trustlab.interpret import (
    detection_score,
    embedding_score,
    fuzzing_score,
    latent_examples,
    surprisal_score,
)

EXPLANATION = "the digits 0 to 4 and the word cat"
#: The fake client's rule: detection answers 1 iff an example holds one of these words, fuzzing
#: iff it has marks and every marked word is one of them (not the latent, so every cell of the
#: confusion matrix is filled).
KEYWORDS = {"0", "1", "2", "3", "4", "cat"}


class _NoVLLM:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("vLLM is a stub in this test")


def _no_vllm(*args, **kwargs):
    raise RuntimeError("vLLM is a stub in this test")


#: What ``delphi.clients.offline`` imports from vLLM at import time.
_STUBS = {
    "vllm": {"LLM": _NoVLLM, "SamplingParams": _NoVLLM},
    "vllm.distributed": {},
    "vllm.distributed.parallel_state": {
        "destroy_distributed_environment": _no_vllm,
        "destroy_model_parallel": _no_vllm,
    },
    "vllm.inputs": {"TokensPrompt": _NoVLLM},
}


def _ours(name):
    return name.split(".")[0] in ("delphi", "vllm")


@pytest.fixture(scope="module")
def delphi():
    """delphi's scorers and record types, imported with vLLM stubbed out."""
    before = {name: module for name, module in sys.modules.items() if _ours(name)}
    state = random.getstate()
    for name, attributes in _STUBS.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        sys.modules[name] = module
    try:
        scorers = importlib.import_module("delphi.scorers")
        latents = importlib.import_module("delphi.latents")
        yield types.SimpleNamespace(
            DetectionScorer=scorers.DetectionScorer,
            FuzzingScorer=scorers.FuzzingScorer,
            SurprisalScorer=scorers.SurprisalScorer,
            EmbeddingScorer=scorers.EmbeddingScorer,
            Response=importlib.import_module("delphi.clients.client").Response,
            Sample=importlib.import_module("delphi.scorers.classifier.sample").Sample,
            analysis=importlib.import_module("delphi.log.result_analysis"),
            Latent=latents.Latent,
            LatentRecord=latents.LatentRecord,
            ActivatingExample=latents.ActivatingExample,
            NonActivatingExample=latents.NonActivatingExample,
        )
    finally:
        for name in [name for name in sys.modules if _ours(name)]:
            del sys.modules[name]
        sys.modules.update(before)
        random.setstate(state)


@pytest.fixture(scope="module")
def examples():
    """A latent planted on digit tokens: 50 test and 50 non-activating windows of 16 tokens."""
    cache = digit_cache(4, n_contexts=200, length=80, digit_rate=0.02)
    return latent_examples(cache, 0, ctx_len=16, random_state=4)


def _pieces(example):
    return [decode(int(t)) for t in example.tokens]


def record(d, examples, explanation):
    """delphi's LatentRecord of trustlab's examples (non-activating ones at distance -1, also as
    the surprisal scorer's ``extra_examples``)."""
    test = [
        d.ActivatingExample(
            tokens=torch.as_tensor(e.tokens),
            activations=torch.as_tensor(e.activations),
            str_tokens=_pieces(e),
            quantile=e.quantile,
        )
        for e in examples.test
    ]
    not_active = [
        d.NonActivatingExample(
            tokens=torch.as_tensor(e.tokens),
            activations=torch.as_tensor(e.activations),
            str_tokens=_pieces(e),
            distance=-1,
        )
        for e in examples.not_active
    ]
    return d.LatentRecord(
        latent=d.Latent("toy", examples.latent),
        examples=sorted(test, key=lambda e: -e.max_activation),
        test=test,
        not_active=not_active,
        extra_examples=not_active,
        explanation=explanation,
    )


# ---- D1: detection and fuzzing ------------------------------------------------------------


def as_text(prompt):
    """A prompt as one string: delphi's conversations joined message by message."""
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in prompt)


def shown_texts(prompt):
    """The example texts of a delphi-worded prompt: the "Example i: <text>" lines after its last
    "Text examples:" (the few-shot demonstrations say "Test examples:")."""
    tail = as_text(prompt).rsplit("Text examples:", 1)[1]
    found = [re.match(r"Example (\d+): (.*)$", line) for line in tail.splitlines()]
    found = [m for m in found if m]
    assert [int(m.group(1)) for m in found] == list(range(len(found)))
    return [m.group(2) for m in found]


class KeywordRule:
    """The deterministic fake scorer shared by delphi and us; records (text, answer) in order."""

    def __init__(self, fuzzing):
        self.fuzzing, self.seen = fuzzing, []

    def answer(self, prompt):
        labels = []
        for text in shown_texts(prompt):
            if self.fuzzing:
                marked = [w for span in re.findall(r"<<(.*?)>>", text) for w in span.split()]
                label = int(bool(marked) and all(w in KEYWORDS for w in marked))
            else:
                label = int(any(w in KEYWORDS for w in text.split()))
            self.seen.append((text, label))
            labels.append(label)
        return str(labels)


class DelphiClient:
    """delphi's client interface (``await generate(prompt) -> Response``)."""

    def __init__(self, d, rule):
        self.d, self.rule = d, rule

    async def generate(self, prompt, **kwargs):
        return self.d.Response(text=self.rule.answer(prompt))


class OurScorer:
    """trustlab's scorer interface (``generate([prompt], ...) -> [answer]``)."""

    name = "keyword-rule"

    def __init__(self, rule):
        self.rule = rule

    def generate(self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, **kwargs):
        (prompt,) = prompts
        return [self.rule.answer(prompt)]


def delphi_wrong_positions(example, n_incorrect):
    """delphi 0.1.3's wrongly marked tokens in a window without activations, as read from
    ``delphi/scorers/classifier/sample.py``: the centre (``n - n // 4``), then
    ``random.seed(22); random.sample(others, k - 1)`` over the other indices in order."""
    n = len(example.tokens)
    centre = n - n // 4
    others = [i for i in range(n) if i != centre]
    return [centre, *random.Random(22).sample(others, min(n_incorrect, n) - 1)]


def run_both(d, examples, method, **ours):
    """delphi's scorer and ours on the same examples, batches of 5, the keyword rule.

    Returns delphi's rows, delphi's outputs, our result and our rows, a row being (text,
    activating, answer) in the order the examples were shown."""
    fuzzing = method == "fuzzing"
    theirs_rule, our_rule = KeywordRule(fuzzing), KeywordRule(fuzzing)
    scorer_class = d.FuzzingScorer if fuzzing else d.DetectionScorer
    theirs = scorer_class(DelphiClient(d, theirs_rule), n_examples_shown=5)
    outputs = theirs.call_sync(record(d, examples, EXPLANATION)).score
    assert len(outputs) == len(theirs_rule.seen)
    their_rows = [
        (text, o.activating, o.prediction)
        for (text, _), o in zip(theirs_rule.seen, outputs, strict=True)
    ]

    def builder(explanation, texts):  # delphi's "Example i:" lines and prompt function
        return as_text(theirs._build_prompt(explanation, [d.Sample(t, None) for t in texts]))

    score = fuzzing_score if fuzzing else detection_score
    result = score(examples, EXPLANATION, OurScorer(our_rule), decode, batch_size=5,
                   prompt_builder=builder, **ours)  # fmt: skip
    our_rows = [
        (text, bool(a), bool(p))
        for (text, _), a, p in zip(our_rule.seen, result.activating, result.predicted, strict=True)
    ]
    return their_rows, outputs, result, our_rows


def test_d1_detection_equals_delphis(delphi, examples):
    their_rows, outputs, result, our_rows = run_both(delphi, examples, "detection")
    assert len(our_rows) == result.n_examples == 100 and result.n_failed == 0
    assert Counter(their_rows) == Counter(our_rows)
    _assert_delphi_metrics(delphi, outputs, result)


def test_d1_fuzzing_with_delphis_wrong_tokens_equals_delphis(delphi, examples):
    their_rows, outputs, result, our_rows = run_both(
        delphi, examples, "fuzzing", wrong_positions=delphi_wrong_positions
    )
    assert len(our_rows) == result.n_examples == 100 and result.n_failed == 0
    assert Counter(their_rows) == Counter(our_rows)
    # the marks: activating windows at their digits, the others at two wrong tokens
    assert all("<<" in text for text, _, _ in our_rows)
    _assert_delphi_metrics(delphi, outputs, result)


def _assert_delphi_metrics(d, outputs, result):
    frame = pd.DataFrame([dataclasses.asdict(o) for o in outputs])
    confusion = d.analysis.compute_confusion(frame)
    metrics = d.analysis.compute_classification_metrics(confusion)
    assert (result.tp, result.tn, result.fp, result.fn) == (
        confusion["true_positives"],
        confusion["true_negatives"],
        confusion["false_positives"],
        confusion["false_negatives"],
    )
    assert min(result.tp, result.tn, result.fp, result.fn) > 0  # every cell is exercised
    assert result.balanced_accuracy == metrics["accuracy"]  # delphi's "accuracy" is balanced
    assert result.precision == metrics["precision"]
    assert result.recall == metrics["recall"]
    assert result.f1 == pytest.approx(metrics["f1_score"], rel=1e-12)


def marked_positions(text):
    """Indices of the marked tokens of a text whose tokens each start with one space."""
    marked, inside, index = [], False, -1
    for part in re.split(r"(<<|>>| )", text):
        if part == "<<":
            inside = True
        elif part == ">>":
            inside = False
        elif part == " ":
            index += 1
        elif part and inside:
            marked.append(index)
    return marked


def test_d1_fuzzing_negatives_differ_from_delphis_only_in_which_wrong_tokens(delphi, examples):
    their_rows, _, result, our_rows = run_both(delphi, examples, "fuzzing")
    assert Counter(r for r in their_rows if r[1]) == Counter(r for r in our_rows if r[1])
    theirs = [text for text, active, _ in their_rows if not active]
    ours = [text for text, active, _ in our_rows if not active]

    def plain(text):
        return text.replace("<<", "").replace(">>", "")

    assert Counter(map(plain, theirs)) == Counter(map(plain, ours))
    n_incorrect = int(np.ceil(np.mean([(e.activations > 0).sum() for e in examples.test])))
    assert n_incorrect == 2
    rule = sorted(delphi_wrong_positions(examples.not_active[0], n_incorrect))
    assert rule[-1] == 15  # the centre, 12, and what random.Random(22) draws from the rest
    # delphi: the same two marks in every window; ours: the centre and one random other each
    assert all(marked_positions(text) == rule for text in theirs)
    our_marks = [marked_positions(text) for text in ours]
    assert all(len(m) == 2 and 12 in m for m in our_marks)
    assert len({tuple(m) for m in our_marks}) > 5


def test_delphi_loses_a_short_last_batch_and_we_do_not(delphi, examples):
    few = dataclasses.replace(examples, not_active=examples.not_active[:47])  # 97 = 19 x 5 + 2
    their_rows, outputs, result, _ = run_both(delphi, few, "detection")
    # delphi parses every answer as a list of n_examples_shown: the last batch of 2 fails
    assert [o.prediction for o in outputs].count(None) == 2
    assert result.n_failed == 0 and len(result.predicted) == 97


def test_a_token_exactly_at_the_threshold_is_marked_by_delphi_not_by_us(delphi):
    # the one difference of the activating marks: delphi marks activation >= 0.3 max, we (and
    # the spec) mark > 0.3 max; 0.3 x 2.5 rounds to 0.75 exactly. The D1 data has no such tie.
    from trustlab.interpret import highlight

    pieces = [" a", " b", " c"]
    example = delphi.ActivatingExample(
        tokens=torch.tensor([0, 1, 2]),
        activations=torch.tensor([0.0, 0.75, 2.5]),
        str_tokens=pieces,
    )
    sample = sys.modules["delphi.scorers.classifier.sample"]
    (theirs,) = sample.examples_to_samples([example], highlighted=True)
    assert theirs.text == " a<< b c>>"
    assert highlight(pieces, [0.0, 0.75, 2.5], 0.3)[0] == " a b<< c>>"


def test_the_parity_options_check_their_inputs(examples):
    from trustlab.errors import InputError

    class Logprobs:
        name = "never-called"

        def logprobs(self, *args, **kwargs):
            raise AssertionError("the inputs are checked first")

    cases = [
        (dict(wrong_positions="centre"), "wrong_positions"),
        (dict(wrong_positions=lambda e, k: [0, 0]), "wrong_positions"),
        (dict(wrong_positions=lambda e, k: [len(e.tokens)]), "wrong_positions"),
        (dict(wrong_positions=lambda e, k: [0.5]), "wrong_positions"),
    ]
    for kwargs, argument in cases:
        with pytest.raises(InputError) as err:
            fuzzing_score(examples, EXPLANATION, OurScorer(KeywordRule(True)), decode, **kwargs)
        assert err.value.argument == argument
    for prompts in ("a prompt", lambda e: "one prompt", lambda e: ("a", 2)):
        with pytest.raises(InputError) as err:
            surprisal_score(examples, EXPLANATION, Logprobs(), decode, prompts=prompts)
        assert err.value.argument == "prompts"
    with pytest.raises(InputError) as err:
        embedding_score(examples, EXPLANATION, decode, query_prefix=3)
    assert err.value.argument == "query_prefix"


# ---- D2: surprisal --------------------------------------------------------------------------


class HFModel:
    """What delphi's SurprisalScorer calls: the Hugging Face model with ``tokenizer`` and
    ``device`` (a copy of the tokenizer: delphi changes its padding side and pad token)."""

    def __init__(self, model, tokenizer):
        self.model, self.tokenizer, self.device = model, copy.deepcopy(tokenizer), model.device

    def __call__(self, **kwargs):
        return self.model(**kwargs)


@pytest.mark.filterwarnings("ignore:`past_key_values` is deprecated:FutureWarning")
def test_d2_surprisal_equals_delphis_on_smollm2(delphi, smollm2, monkeypatch):
    torch.set_num_threads(1)
    cache = digit_cache(5, n_contexts=120, length=60, digit_rate=0.03)
    examples = latent_examples(cache, 0, ctx_len=16, n_test=5, n_quantiles=5, n_not_active=5,
                               random_state=5)  # fmt: skip
    # exactly one batch of delphi's (10). Seen while building this test: with fewer, delphi's
    # cached prompt gets 10 x too many rows and it fails; with more, transformers 5 extends its
    # cache in place, so later batches are scored after the first batch's tokens
    assert (examples.n_test, examples.n_not_active) == (5, 5)
    explanation = "numbers written as digits"
    surprisal = sys.modules["delphi.scorers.surprisal.surprisal"]
    # delphi's few-shot base prompt (662 tokens) cut to its first line, to stay fast on a CPU
    monkeypatch.setattr(surprisal, "base_prompt", surprisal.base_prompt.split("\n")[0] + "\n")
    scorer = delphi.SurprisalScorer(HFModel(smollm2.model, smollm2.tokenizer), verbose=False,
                                    batch_size=10)  # fmt: skip
    prompts = []
    original = scorer.compute_loss_with_kv_cache

    def recorded(prompt, samples, batch_size=2):
        prompts.append(prompt)
        return original(prompt, samples, batch_size=batch_size)

    monkeypatch.setattr(scorer, "compute_loss_with_kv_cache", recorded)
    theirs = asyncio.run(scorer(record(delphi, examples, explanation))).score
    neutral, explained = prompts  # delphi's order: without the explanation first
    assert explanation in explained and explanation not in neutral

    captured = []

    def hook(module, args, kwargs, output):
        captured.append((kwargs["input_ids"], kwargs["attention_mask"], output.logits.double()))

    handle = smollm2.model.register_forward_hook(hook, with_kwargs=True)
    try:
        # whole-sequence passes, so the hook sees every token's logits; the default runs the
        # shared prompt once per batch, equal up to float32 rounding (checked just below and in
        # tests/llm/test_local.py)
        result = surprisal_score(examples, explanation, smollm2, decode, share_prefix=False,
                                 prompts=lambda e: (explained, neutral), n_bootstrap=10)  # fmt: skip
    finally:
        handle.remove()
    default = surprisal_score(examples, explanation, smollm2, decode,
                              prompts=lambda e: (explained, neutral), n_bootstrap=10)  # fmt: skip
    np.testing.assert_allclose(default.scores, result.scores, rtol=0, atol=1e-4)
    # our log-probabilities of each sequence's tokens, from the hooked forward passes (logits
    # are kept for the last positions only)
    rows = {}
    for ids, mask, logits in captured:
        logp = torch.log_softmax(logits, dim=-1)
        for row in range(ids.shape[0]):
            length = int(mask[row].sum())
            rows[tuple(ids[row, :length].tolist())] = (logp[row], ids.shape[1] - logits.shape[1])

    tok = smollm2.tokenizer
    texts = ["".join(_pieces(e)) for e in examples.test + examples.not_active]
    by_text = {o.text: o for o in theirs}
    assert sorted(by_text) == sorted(texts)  # distinct texts, all scored by delphi
    first_gain = _first_token_gains(smollm2, explained, neutral)
    worst, delphi_scores = 0.0, []
    for text, ours in zip(texts, result.scores, strict=True):
        assert " " + " ".join(text.split()) == text  # our continuation is delphi's text
        cont = tok(text, add_special_tokens=False)["input_ids"]
        totals = []
        for prompt, their_losses in ((explained, by_text[text].explanation),
                                     (neutral, by_text[text].no_explanation)):  # fmt: skip
            ids = tok(prompt)["input_ids"]
            logp, dropped = rows[tuple(ids + cont)]
            our_losses = [
                -float(logp[len(ids) + j - 1 - dropped, cont[j]]) for j in range(len(cont))
            ]
            totals.append(-sum(our_losses))
            # delphi scores tokens 1..n-1; its list then ends in zeros (padding positions)
            n = len(cont) - 1
            assert their_losses[n:] == [0.0] * (len(their_losses) - n)
            worst = max(worst, float(np.max(np.abs(np.subtract(our_losses[1:], their_losses[:n])))))
        assert ours == pytest.approx(totals[0] - totals[1], abs=1e-9)
        theirs_score = sum(by_text[text].no_explanation) - sum(by_text[text].explanation)
        delphi_scores.append(theirs_score)
        assert ours == pytest.approx(theirs_score + first_gain[cont[0]], abs=1e-4 * len(cont))
    assert worst <= 1e-4
    full = np.array(delphi_scores) + [first_gain[tok(t, add_special_tokens=False)["input_ids"][0]]
                                      for t in texts]  # fmt: skip
    assert abs(result.auroc - roc_auc_score(result.activating, full)) <= 1e-6
    # delphi's own scores, without the first token, rank these 10 examples differently
    assert result.auroc == pytest.approx(0.84)
    assert roc_auc_score(result.activating, delphi_scores) == pytest.approx(0.92)


def _first_token_gains(lm, explained, neutral):
    """log p(token | explained prompt) - log p(token | neutral prompt) for every token, from one
    unpadded forward pass of each prompt alone (the gain delphi leaves out)."""
    out = []
    for prompt in (explained, neutral):
        ids = lm.tokenizer(prompt)["input_ids"]
        with torch.inference_mode():
            logits = lm.model(torch.tensor([ids])).logits[0, -1].double()
        out.append(torch.log_softmax(logits, dim=-1))
    return (out[0] - out[1]).tolist()


# ---- D3: embedding --------------------------------------------------------------------------


class RecordingEmbedder:
    """The shipped MiniLM for delphi's EmbeddingScorer, recording the query it encodes."""

    def __init__(self, model):
        self.model, self.queries = model, []

    def encode(self, texts, **kwargs):
        if isinstance(texts, str):
            self.queries.append(texts)
        return self.model.encode(texts, **kwargs)

    def similarity(self, a, b):
        return self.model.similarity(a, b)


def test_d3_embedding_equals_delphis(delphi, examples):
    from trustlab.llm.embeddings import load_sentence_embedder

    explanation = "numbers written as digits"
    embedder = RecordingEmbedder(load_sentence_embedder())
    theirs = delphi.EmbeddingScorer(embedder).call_sync(record(delphi, examples, explanation))
    (query,) = embedder.queries
    assert query.endswith(explanation)
    prefix = query[: -len(explanation)]
    result = embedding_score(examples, explanation, decode, query_prefix=prefix, n_bootstrap=10)
    texts = ["".join(_pieces(e)) for e in examples.test + examples.not_active]
    by_text = {o.text: o for o in theirs.score}
    assert sorted(by_text) == sorted(texts)
    similarity = np.array([by_text[t].similarity for t in texts])
    assert np.max(np.abs(result.scores - similarity)) <= 1e-5
    activating = np.array([by_text[t].distance != -1 for t in texts])
    assert (activating == result.activating).all()
    assert result.auroc == roc_auc_score(activating, similarity)


# ---- the spec's defect "scorers import vLLM at import time" --------------------------------


def test_scorer_modules_import_no_generation_backend():
    code = (
        "import sys\n"
        "import trustlab.interpret.sae.scoring, trustlab.interpret.sae.ranking\n"
        "heavy = {'torch', 'transformers', 'vllm', 'sentence_transformers', 'delphi'}\n"
        "print(sorted(heavy & {name.split('.')[0] for name in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)  # fmt: skip
    assert done.stdout.strip() == "[]"
