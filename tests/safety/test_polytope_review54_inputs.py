"""Review 54: prompt inputs of the polytope's language-model helpers."""

import numpy as np
import pytest
from test_polytope_review_inputs import _box
from test_polytope_review_inputs import _NoModel as _ShapedModel

from trustlab.errors import InputError
from trustlab.safety import prompt_activations


class _RecordingModel:
    """Stands in for a LocalModel: one zero state per prompt it is given."""

    def __init__(self):
        self.seen = None

    def activations(self, prompts, layers, positions, **kwargs):
        self.seen = prompts
        return np.zeros((len(prompts), 4), dtype=np.float32)


def test_prompt_activations_reads_a_string_as_one_prompt_not_one_per_character():
    model = _RecordingModel()
    acts = prompt_activations(model, "How do I pick a lock?", 3)
    assert model.seen == ["How do I pick a lock?"]
    assert acts.shape == (1, 4)


@pytest.mark.parametrize("prompts", [None, [], ["ok", 3]])
def test_prompt_activations_refuses_what_is_not_prompts_naming_them(prompts):
    with pytest.raises(InputError, match="prompts: expected a string or a non-empty sequence"):
        prompt_activations(_RecordingModel(), prompts, 3)


@pytest.mark.parametrize("correction", ["project", "gate"])
@pytest.mark.parametrize(
    ("given", "argument"), [({"strength": 3.0}, "strength"), ({"direction": "d"}, "direction")]
)
def test_a_direction_or_strength_with_another_correction_is_refused(correction, given, argument):
    # they were ignored without a word: strength=3 printed the plain Safe Flow answers
    from trustlab.safety import evaluate_polytope, steered_generate

    with pytest.raises(InputError, match=f"^{argument}: expected .*correction='{correction}'"):
        steered_generate(None, None, ["hi"], correction=correction, **given)
    with pytest.raises(InputError, match=f"^{argument}: expected .*correction='{correction}'"):
        evaluate_polytope(None, None, None, correction=correction, **given)


def test_the_default_strength_in_any_number_type_passes_the_check():
    import numpy as np

    from trustlab.safety import steered_generate

    # the check passes it on; the next one (no polytope given) is what fails here
    for one in (1, 1.0, np.float32(1.0), np.int64(1)):
        with pytest.raises(InputError, match="^polytope: expected a fitted SafetyPolytope"):
            steered_generate(None, None, ["hi"], correction="project", strength=one)


def _calls():
    from trustlab.safety import (
        benign_perplexity,
        compare_steering,
        evaluate_polytope,
        load_safety_prompts,
        steered_generate,
    )

    prompts = load_safety_prompts("test", sources=["benign"])
    return [
        lambda p, m: steered_generate(p, m, ["hi"]),
        lambda p, m: steered_generate(p, m, ["hi"], correction="gate"),
        lambda p, m: steered_generate(p, m, ["hi"], correction="direction", direction="d"),
        lambda p, m: compare_steering(p, m, ["hi"]),
        lambda p, m: evaluate_polytope(p, m, prompts),
        lambda p, m: benign_perplexity(p, m, ["hi"], ["there"], correct_first=1),
    ]


@pytest.mark.parametrize("polytope", [None, "polytope.npz", object()])
def test_what_is_not_a_polytope_is_refused_naming_it(polytope):
    # scikit-learn's TypeError "None is not an estimator instance" came out (CLI: exit 1)
    for call in _calls():
        with pytest.raises(InputError, match="^polytope: expected a fitted SafetyPolytope"):
            call(polytope, _ShapedModel())


@pytest.mark.parametrize("model", [None, "HuggingFaceTB/SmolLM2-135M-Instruct", object()])
def test_what_is_not_a_language_model_is_refused_naming_it(model):
    # None: AttributeError "'NoneType' object has no attribute 'hidden_size'"
    for call in _calls():
        with pytest.raises(InputError, match="^model: expected a language model"):
            call(_box(), model)
