"""The template backend: the predictor's estimates, put into words by the describer, and read
back by the independent parser; WMarkGPT's Q-Align readout."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trustlab.errors import InputError
from trustlab.watermark.backends import TemplateBackend, WatermarkBackend, expected_score
from trustlab.watermark.describer import FINAL_SENTENCE, parse_description
from trustlab.watermark.nr import WatermarkPredictor
from trustlab.watermark.synth import synthesize

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def backend():
    ds = synthesize(8, random_state=31)
    model = WatermarkPredictor(input_size=64, widths=(4, 8, 8, 8), max_epochs=1, random_state=0)
    model.fit(ds.images, scores=ds.scores, masks=ds.masks, content_types=ds.content_types)
    return TemplateBackend(model, random_state=3), ds


def test_expected_score_is_the_softmax_readout():
    rng = np.random.default_rng(0)
    for _ in range(20):
        z = rng.normal(0, 3, 5)
        p = np.exp(z) / np.exp(z).sum()
        assert expected_score(z) == pytest.approx(float(p @ [5, 4, 3, 2, 1]), abs=1e-12)
    with pytest.raises(InputError, match="logits"):
        expected_score([1.0, 2.0])


def test_answers_say_what_the_predictor_estimated(backend):
    b, ds = backend
    assert isinstance(b, WatermarkBackend)
    pred = b.predict(list(ds.images))
    answers = b.answer_batch(list(ds.images), ["Describe the watermark."] * len(ds))
    for i, text in enumerate(answers):
        parsed = parse_description(text)
        facts = pred.facts(i)
        assert text.endswith(FINAL_SENTENCE.format(facts.level))
        assert parsed.level == facts.level
        if facts.present:
            assert (parsed.cell, parsed.orientation) == (facts.cell, facts.orientation)


def test_same_question_same_answer_and_batch_equals_single(backend):
    b, ds = backend
    q = ["Where is the watermark?", "How visible is it?"]
    batch = b.answer_batch(list(ds.images[:2]), q)
    assert batch == [b.answer(ds.images[0], q[0]), b.answer(ds.images[1], q[1])]
    assert b.answer(ds.images[0], q[0]) == batch[0]


def test_level_logits_give_the_predictors_level_probabilities(backend):
    b, ds = backend
    logits = b.level_logits(ds.images[0])
    p = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(p, b.predict([ds.images[0]]).level_probabilities[0], atol=1e-9)


def test_bad_questions(backend):
    b, ds = backend
    with pytest.raises(InputError, match="question"):
        b.answer(ds.images[0], "  ")
    with pytest.raises(InputError, match="questions"):
        b.answer_batch(list(ds.images[:2]), ["one question"])
