"""Fixtures of the inspect tests: SmolLM2 shared with the trustlab provider, tiny task files."""

from __future__ import annotations

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
def flaky_task():
    return Task(dataset=[Sample(input=f"q{i}", target="a") for i in range(4)],
                solver=generate(), scorer=flaky())
"""


@pytest.fixture
def flaky_task(tmp_path):
    """A task file whose scorer raises while a ``fail`` file lies beside it."""
    path = tmp_path / "flaky.py"
    path.write_text(FLAKY_TASK)
    (tmp_path / "fail").write_text("")
    return path
