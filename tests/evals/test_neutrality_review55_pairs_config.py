"""neutrality_pairs answers both prompts of a pair with one generation configuration: prompt b was
asked with a fixed greedy config of its own, so an eval-level setting (inspect's ``--temperature
0.7 --max-tokens 50``) reached side a only and the pair compared a sampled 50-token answer with a
greedy 200-token one."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelAPI, ModelOutput, modelapi  # noqa: E402

from trustlab.evals.neutrality_pairs import neutrality_pairs  # noqa: E402


@modelapi(name="config-echo")
class ConfigEcho(ModelAPI):
    """Answers with the generation settings it was called with."""

    async def generate(self, input, tools, tool_choice, config):
        text = f"temperature={config.temperature} max_tokens={config.max_tokens}"
        return ModelOutput.from_content(self.model_name, text)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [({}, "temperature=0.0 max_tokens=200"),
     ({"temperature": 0.7, "max_tokens": 50}, "temperature=0.7 max_tokens=50")],
)  # fmt: skip
def test_both_sides_of_a_pair_are_generated_alike(tmp_path, settings, expected):
    (log,) = inspect_eval(
        neutrality_pairs(per_category=1),
        model="config-echo/x",
        model_roles={"grader": "config-echo/judge"},  # a judge: no baseline to load
        limit=1,
        log_dir=str(tmp_path),
        display="none",
        **settings,
    )
    (sample,) = log.samples
    assert sample.metadata["response_a"] == sample.metadata["response_b"] == expected
    assert sample.output.completion == expected  # the sample's own output stays a's answer
    assert [m.role for m in sample.messages] == ["user", "assistant"]
    assert sample.messages[0].text == sample.metadata["prompt_a"]
