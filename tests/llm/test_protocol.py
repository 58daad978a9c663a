"""LanguageModel: LocalModel and RemoteModel both satisfy it, with one generate signature."""

import inspect

import pytest

from trustlab.llm import LanguageModel, LocalModel, RemoteModel


def shape(fn) -> list[tuple]:
    """What a caller relies on: each parameter's name, kind and default (not annotations)."""
    params = list(inspect.signature(fn).parameters.values())[1:]  # without self
    return [(p.name, p.kind, p.default) for p in params]


@pytest.mark.parametrize("cls", [LocalModel, RemoteModel])
def test_generate_has_the_protocol_signature(cls):
    # the protocol's parameters, in order, with their kinds and defaults; an implementation may
    # add optional keyword-only ones after them (LocalModel and RemoteModel take `progress`)
    protocol, ours = shape(LanguageModel.generate), shape(cls.generate)
    assert ours[: len(protocol)] == protocol
    for name, kind, default in ours[len(protocol) :]:
        assert kind is inspect.Parameter.KEYWORD_ONLY and default is None, name


def test_a_remote_model_is_a_language_model():
    with RemoteModel("http://127.0.0.1:1", "m") as model:
        assert isinstance(model, LanguageModel)


def test_a_local_model_is_a_language_model(smollm2):
    assert isinstance(smollm2, LanguageModel)


def test_an_object_without_generate_or_name_is_not():
    class NoName:
        def generate(self, prompts, max_new_tokens=64):
            return list(prompts)

    assert not isinstance(NoName(), LanguageModel)
    assert not isinstance(object(), LanguageModel)
