"""Fixtures of the inspect tests: SmolLM2 shared with the trustlab provider, tiny task files."""

from __future__ import annotations

import json

import pytest

MODEL = "smollm2-135m-instruct"


def _register_trivial_model() -> None:
    """``trivial/<name>``: answers "a" at once and counts nothing (inspect's mockllm counts tokens
    with tiktoken, whose file it would download)."""
    from inspect_ai.model import ModelAPI, ModelOutput, modelapi

    @modelapi(name="trivial")
    class Trivial(ModelAPI):
        async def generate(self, input, tools, tool_choice, config):
            return ModelOutput.from_content(self.model_name, "a")


_register_trivial_model()


def _register_always_safe_model() -> None:
    """``casebench-fixed/<name>``: answers every prompt with a parseable binary "safe" verdict."""
    from inspect_ai.model import ModelAPI, ModelOutput, modelapi

    @modelapi(name="casebench-fixed")
    class AlwaysSafe(ModelAPI):
        async def generate(self, input, tools, tool_choice, config):
            answer = '{"judgement": "safe", "explanation": "verified professional"}'
            return ModelOutput.from_content(self.model_name, answer)


_register_always_safe_model()


# ``casebench-scripted/<tag>`` and ``casebench-flaky/<tag>``: deterministic CASE-Bench judges.
# A prompt's mode shows in its last line of instructions; its script comes from its hash.
SCRIPTS = {  # one answer per call; None: nothing parseable
    "binary": [("safe", "unsafe", None), ("safe", "safe", "unsafe"), (None, None, None),
               ("safe", None, None), ("unsafe", "unsafe", "safe"), ("safe", "unsafe", "safe")],
    "score": [(7, 2, None), (None, None, None), (10, 9, 9), (4, None, 5), (6, 6, 6), (3, 8, 1)],
    "logits": [(0.9, 0.2, None), (None, None, None), (0.6, 0.7, 0.75), (0.1, None, 0.3)],
}  # fmt: skip
CALLS: dict[tuple[str, str], int] = {}  # (model name, prompt) -> calls so far
FAILED: set[str] = set()  # flaky models that already failed once


def casebench_mode(prompt: str) -> str:
    if "Answer with one word only" in prompt:
        return "logits"
    return "score" if "Rate how safe" in prompt else "binary"


ASSIGNED: dict[tuple[str, str], int] = {}  # (scripted model name, prompt) -> its script


def scripted_answer(prompt: str, call: int, model: str | None = None) -> tuple[str, object]:
    """(mode, the scripted value) of the ``call``-th answer (from 0) to ``prompt``.

    The scripted model ``model`` gives its prompts the scripts in turn, in the order it first
    sees them (so a dozen items meet every script); otherwise the prompt's hash chooses."""
    import hashlib

    mode = casebench_mode(prompt)
    scripts = SCRIPTS[mode]
    if model is None:
        index = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % len(scripts)
    else:
        if (model, prompt) not in ASSIGNED:
            ASSIGNED[(model, prompt)] = sum(m == model for m, _ in ASSIGNED) % len(scripts)
        index = ASSIGNED[(model, prompt)]
    script = scripts[index]
    return mode, script[call % len(script)]


def scripted_output(model: str, mode: str, value: object):
    """An inspect ModelOutput answering ``value`` in ``mode`` (None: nothing parseable)."""
    import math

    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        Logprob,
        Logprobs,
        ModelOutput,
        TopLogprob,
    )

    if mode != "logits":
        judgement = "no idea" if value is None else value
        text = json.dumps({"judgement": judgement, "explanation": "scripted"})
        return ModelOutput.from_content(model, text)
    if value is None:
        top = [("maybe", math.log(0.6)), ("perhaps", math.log(0.4))]
    else:
        top = [(" safe", math.log(value)), (" unsafe", math.log(1 - value))]
    first = Logprob(
        token=top[0][0],
        logprob=top[0][1],
        top_logprobs=[TopLogprob(token=t, logprob=lp) for t, lp in top],
    )
    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content=top[0][0], model=model),
        stop_reason="max_tokens",
        logprobs=Logprobs(content=[first]),
    )
    return ModelOutput(model=model, choices=[choice])


def _register_scripted_models() -> None:
    """``casebench-scripted/<tag>``: the n-th call with a prompt answers the n-th entry of the
    prompt's script (SCRIPTS, given in turn), so k samples of an item see k different answers.
    ``casebench-flaky/<tag>``: always the script's first answer; with a tag ``after<k>-...`` the
    call after the first k raises, once per model name (an interrupted run)."""
    from inspect_ai.model import ModelAPI, modelapi

    @modelapi(name="casebench-scripted")
    class Scripted(ModelAPI):
        async def generate(self, input, tools, tool_choice, config):
            prompt = input[-1].text
            key = (self.model_name, prompt)
            call = CALLS.get(key, 0)
            CALLS[key] = call + 1
            answer = scripted_answer(prompt, call, self.model_name)
            return scripted_output(self.model_name, *answer)

    @modelapi(name="casebench-flaky")
    class Flaky(ModelAPI):
        async def generate(self, input, tools, tool_choice, config):
            prompt = input[-1].text
            name = self.model_name
            calls = sum(n for (model, _), n in CALLS.items() if model == name)
            if name.startswith("after") and name not in FAILED:
                k = int(name[len("after") :].split("-")[0])
                if calls >= k:
                    FAILED.add(name)
                    raise RuntimeError("the model broke on purpose")
            CALLS[(name, prompt)] = CALLS.get((name, prompt), 0) + 1
            return scripted_output(name, *scripted_answer(prompt, 0))


_register_scripted_models()


@pytest.fixture
def casebench_script():
    """scripted_answer(prompt, call, model) -> (mode, value): what the scripted models answer
    (``model`` the scripted model's name without its provider; None for the flaky models)."""
    return scripted_answer


@pytest.fixture
def model_calls():
    """The calls each scripted or flaky model received: {(model name, prompt): calls}."""
    return CALLS


@pytest.fixture(scope="session")
def provider_model(smollm2):
    """The session's SmolLM2, served by the trustlab provider as ``trustlab/smollm2-...``."""
    from trustlab.evals import use_local_model

    use_local_model(smollm2)
    return f"trustlab/{MODEL}"


FLAKY_TASK = """
from pathlib import Path
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, accuracy, scorer
from inspect_ai.solver import generate

MARKER = Path(__file__).with_name("fail")


@scorer(metrics=[accuracy()])
def flaky():
    async def score(state, target):
        if MARKER.exists():
            raise RuntimeError("the scorer broke on purpose")
        return Score(value=1.0)
    return score


@task
def flaky_task(n: int = 4):
    return Task(dataset=[Sample(input=f"q{i}", target="a") for i in range(n)],
                solver=generate(), scorer=flaky())
"""


@pytest.fixture
def flaky_task(tmp_path):
    """A task file whose scorer raises while a ``fail`` file lies beside it."""
    path = tmp_path / "flaky.py"
    path.write_text(FLAKY_TASK)
    (tmp_path / "fail").write_text("")
    return path


ALL_BREAK_TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, accuracy, scorer
from inspect_ai.solver import generate


@scorer(metrics=[accuracy()])
def breaks():
    async def score(state, target):
        raise RuntimeError("the scorer broke on purpose")
    return score


@task
def all_break(n: int = 3):
    return Task(dataset=[Sample(input=f"q{i}", target="a") for i in range(n)],
                solver=generate(), scorer=breaks(), fail_on_error=False)
"""


@pytest.fixture
def all_break_task(tmp_path):
    """A tolerant task file (``fail_on_error=False``, ``n`` samples, 3 by default) whose scorer
    raises on every sample."""
    path = tmp_path / "all_break.py"
    path.write_text(ALL_BREAK_TASK)
    return path
