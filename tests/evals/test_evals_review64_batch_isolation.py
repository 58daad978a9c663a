"""The trustlab provider batches concurrent samples into one ``completions`` call (review 64).
A sample whose prompt ``completions`` refuses as bad input (an empty conversation, a lone
surrogate such as JSON's ``"\\ud800"``) failed every sample of its batch with its error: on
SmolLM2, ``[Hi], [], [Bye]`` generated together all ended 'messages: expected ... got list []'.
Now only that sample fails; the others get their answers. A fake model stands in for SmolLM2
(it refuses a batch holding a bad prompt, as LocalModel.completions does)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.model import ChatMessageUser, GenerateConfig  # noqa: E402

import trustlab.evals.provider as provider  # noqa: E402
from provider_fakes import WordTokenizer, context_of  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.llm import Completion  # noqa: E402

NAME = "fake-review64"


class FakeModel:
    """Answers 'echo <last message>'; a batch holding a prompt with BAD is refused whole."""

    has_chat_template = True
    tokenizer = WordTokenizer()
    model = context_of(99)  # a context no prompt here fills

    def __init__(self, fail_with=InputError):
        self.batches, self.fail_with = [], fail_with

    def completions(self, prompts, max_new_tokens, **kwargs):
        self.batches.append(len(prompts))
        if any(not p or "BAD" in p[-1]["content"] for p in prompts):
            raise self.fail_with("messages: expected a prompt without BAD")
        texts = [f"echo {p[-1]['content']}" for p in prompts]
        return [Completion(t, "stop", (t,), (-0.5,), ((),)) for t in texts]


@pytest.fixture
def fake(monkeypatch):
    def serve(model, together=1):
        monkeypatch.setitem(provider._MODELS, NAME, model)
        monkeypatch.setitem(provider._MODEL_LOCKS, NAME, provider.threading.Lock())
        _arrive_together(monkeypatch, together)
        return provider.TrustlabModelAPI(NAME, batch_window=0.02)

    return serve


def _arrive_together(monkeypatch, n):
    """Hold each sample at the batcher until ``n`` have come, so that they share one batch
    whatever the machine's load: the batch window alone is timing (each sample hops through
    two worker threads first; on 2 busy CPUs three samples reached the batcher up to 36 ms
    apart, past the 20 ms window)."""
    submit, state = provider._Batcher.submit, {"came": 0}

    async def together(self, *args):
        gate = state.setdefault("gate", asyncio.Event())
        state["came"] += 1
        if state["came"] >= n:
            gate.set()
        await gate.wait()
        return await submit(self, *args)

    monkeypatch.setattr(provider._Batcher, "submit", together)


async def _answers(api, prompts):
    async def one(messages):
        try:
            out = await api.generate(messages, [], "none", GenerateConfig(max_tokens=3))
            return out.completion
        except Exception as exc:
            return exc

    return await asyncio.gather(*(one(m) for m in prompts))


def test_one_bad_prompt_fails_its_own_sample_only(fake):
    lm = FakeModel()
    api = fake(lm, together=3)
    prompts = [[ChatMessageUser(content=t)] for t in ("Hi", "BAD", "Bye")]
    hi, bad, bye = asyncio.run(_answers(api, prompts))
    assert lm.batches[0] == 3  # the three shared a batch
    assert (hi, bye) == ("echo Hi", "echo Bye")
    assert isinstance(bad, InputError) and "without BAD" in str(bad)


def test_a_lone_surrogate_is_refused_naming_its_message(fake):
    lm = FakeModel()
    prompts = [[ChatMessageUser(content="Hi")], [ChatMessageUser(content="Say \ud800")]]
    hi, bad = asyncio.run(_answers(fake(lm), prompts))
    assert hi == "echo Hi"
    assert str(bad).startswith("input[0]: expected text UTF-8 can encode, got the lone surrogate")


def test_an_empty_conversation_is_refused_naming_input(fake):
    lm = FakeModel()
    hi, empty = asyncio.run(_answers(fake(lm), [[ChatMessageUser(content="Hi")], []]))
    assert hi == "echo Hi"
    assert isinstance(empty, InputError)
    assert str(empty).startswith("input: expected at least one chat message, got"), empty


def test_a_model_failure_fails_the_batch_once(fake):
    lm = FakeModel(fail_with=RuntimeError)  # not bad input: no second try, one sample at a time
    prompts = [[ChatMessageUser(content=t)] for t in ("Hi", "BAD", "Bye")]
    answers = asyncio.run(_answers(fake(lm, together=3), prompts))
    assert lm.batches == [3]
    assert all(isinstance(a, RuntimeError) for a in answers)
