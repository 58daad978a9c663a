"""Review pass 55: a model known by name to have no chat template is refused ``chat=True``
before it loads (the packaged Gemma is a base model; its load takes 10 s to minutes)."""

from __future__ import annotations

import pytest

import trustlab.llm
import trustlab.llm.generations as generations_module
from cli_helpers import one_line
from trustlab.errors import InputError
from trustlab.llm import generate_texts


@pytest.fixture
def no_load(monkeypatch):
    def load(name, **kwargs):
        raise AssertionError(f"loaded {name}")

    monkeypatch.setattr(trustlab.llm, "load_model", load)
    monkeypatch.setattr(generations_module, "load_model", load)


def test_generate_texts_refuses_chat_for_gemma_before_the_load(no_load):
    with pytest.raises(InputError, match=r"^chat: expected False for 'gemma3-270m'"):
        generate_texts("gemma3-270m", ["hi"], 2)


def test_llm_generate_refuses_chat_for_gemma_before_the_plan_and_load(run, no_load):
    code, _, err = run("llm", "generate", "--model", "gemma3-270m", "hi")
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --chat: expected --no-chat for 'gemma3-270m'")
