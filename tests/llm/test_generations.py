"""generate_texts and its Generations result: local names, remote endpoints, any LanguageModel."""

import json

import pytest

from trustlab._results import Result
from trustlab.errors import InputError
from trustlab.llm import Generations, RemoteModel, generate_texts, make_server
from trustlab.llm import generations as generations_module


class Reverser:
    """A deterministic LanguageModel: each prompt reversed, tagged with the settings."""

    name = "reverser"

    def generate(
        self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, batch_size=8,
        random_state=None,
    ):  # fmt: skip
        prompts = [prompts] if isinstance(prompts, str) else prompts
        tag = f"{'chat' if chat else 'text'}/{max_new_tokens}/{temperature:g}/{random_state}"
        return [f"{tag} {p[::-1]}" for p in prompts]


def test_generations_keep_prompts_texts_and_settings():
    result = generate_texts(Reverser(), ["ab", "cde"], 3, chat=False, random_state=5)
    assert isinstance(result, Generations) and isinstance(result, Result)
    assert result.to_dict() == {
        "model": "reverser",
        "endpoint": None,
        "chat": False,
        "max_new_tokens": 3,
        "temperature": 0.0,
        "random_state": 5,
        "generations": [
            {"prompt": "ab", "text": "text/3/0/5 ba"},
            {"prompt": "cde", "text": "text/3/0/5 edc"},
        ],
    }
    assert json.loads(json.dumps(result.to_dict())) == result.to_dict()


def test_summary_is_the_text_alone_for_one_prompt_and_numbered_for_several():
    assert generate_texts(Reverser(), "ab", 2).summary() == "chat/2/0/None ba"
    many = generate_texts(Reverser(), ["ab", "c"], 2).summary()
    assert many == "[1] ab\nchat/2/0/None ba\n\n[2] c\nchat/2/0/None c"


def test_a_remote_model_records_its_endpoint():
    with make_server(Reverser()) as srv, RemoteModel(srv.url, "reverser") as model:
        result = generate_texts(model, ["xy"], 4)
    assert result.endpoint == srv.url + "/v1" and result.model == "reverser"
    assert result.texts == ("chat/4/0/None yx",)


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"temperature": -1.0}, "temperature"),
        ({"temperature": 2.5}, "temperature"),
        ({"random_state": -1}, "random_state"),
        ({"chat": "yes"}, "chat"),
        ({"prompts": []}, "prompts"),
    ],
)
def test_a_model_name_is_loaded_only_after_the_arguments_are_checked(monkeypatch, kwargs, argument):
    loaded = []
    monkeypatch.setattr(generations_module, "load_model", lambda name: loaded.append(name))
    kwargs = {"prompts": ["x"], **kwargs}
    with pytest.raises(InputError, match=f"^{argument}: expected"):
        generate_texts("some-model", **kwargs)
    assert loaded == []


def test_a_model_name_is_loaded_and_a_generator_seed_drawn_once(monkeypatch):
    import numpy as np

    monkeypatch.setattr(generations_module, "load_model", lambda name: Reverser())
    result = generate_texts("some-model", "ab", 2, random_state=np.random.default_rng(0))
    seed = result.texts[0].split(" ")[0].rsplit("/", 1)[1]
    assert result.model == "reverser" and seed.isdigit()


@pytest.mark.parametrize("model", [5, object(), None])
def test_something_that_is_not_a_model_is_named(model):
    with pytest.raises(
        InputError, match=r"^model: expected a LanguageModel, a model name or a path"
    ):
        generate_texts(model, "Hi", 3)
