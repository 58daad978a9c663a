"""Review 65: GenerateConfig(logprobs=False, top_logprobs=3) returned 3 alternatives per token;
OpenAI's API (and ``trustlab llm serve``) refuse top_logprobs without logprobs: true. Now an
InputError naming config.top_logprobs; top_logprobs alone still asks for them (casebench)."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.model import GenerateConfig  # noqa: E402

from trustlab.errors import InputError  # noqa: E402
from trustlab.evals.provider import _settings  # noqa: E402


def test_top_logprobs_beside_logprobs_false_is_refused():
    with pytest.raises(InputError) as info:
        _settings(GenerateConfig(logprobs=False, top_logprobs=3))
    assert str(info.value).startswith("config.top_logprobs: expected none with logprobs=False")
    assert str(info.value).endswith("got 3")


@pytest.mark.parametrize(
    ("logprobs", "top", "expected"),
    [(None, 3, 3), (True, 3, 3), (True, None, 0), (False, None, None)],
)
def test_other_combinations_are_unchanged(logprobs, top, expected):
    assert (
        _settings(GenerateConfig(logprobs=logprobs, top_logprobs=top))["top_logprobs"] == expected
    )
