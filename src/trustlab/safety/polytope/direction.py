"""The model's own refusal direction: where its states move when it refuses.

:func:`refusal_direction` computes a difference of mean states at one decoder layer (its output,
the ``trustlab.llm`` convention), from training prompts only:

- ``method="answers"`` (default): each prompt is followed, teacher-forced, by short refusal
  openings ("I'm sorry, but I can't help with that.") and by short compliance openings ("Sure,
  here is a detailed guide."); the direction is the mean state over the answer tokens of the
  refusals minus that of the compliances. It is the direction in which the model's states move
  when it is refusing, whatever the request;
- ``method="prompts"``: the mean last-token state of the harmful prompts minus that of the
  benign ones (the difference in means of Arditi et al. 2024). In a model that refuses harmful
  requests this is the refusal direction; SmolLM2-135M complies with almost every request, so
  on it this direction separates harmful from benign requests without inducing refusals.

``steered_generate(..., correction="direction", direction=d, strength=s)`` adds ``s * vector`` at
``d.layer`` (every position, every step) to the generations whose prompt the polytope flags.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_bool, check_choice, check_positive_int, check_string_list
from trustlab._results import Result, internal_field
from trustlab.errors import InputError
from trustlab.safety.polytope.language_model import prompt_activations

__all__ = [
    "RefusalDirection",
    "refusal_direction",
    "DIRECTION_METHODS",
    "REFUSAL_OPENINGS",
    "COMPLIANCE_OPENINGS",
]

DIRECTION_METHODS = ("answers", "prompts")
#: Refusal openings whose states define the refusal side of ``method="answers"``.
REFUSAL_OPENINGS = (
    "I'm sorry, but I can't help with that.",
    "I cannot assist with this request.",
    "I won't provide that information.",
)
#: Compliance openings, the other side.
COMPLIANCE_OPENINGS = (
    "Sure, here is a detailed guide.",
    "Certainly! Here are the steps:",
    "Here's how you can do it:",
)


@dataclass(frozen=True)
class RefusalDirection(Result):
    """A refusal direction at one layer of one model.

    Attributes
    ----------
    model : str
    layer : int
        The decoder layer (its output) where the direction lives and is added.
    method : str
        "answers" (refusal minus compliance openings) or "prompts" (harmful minus benign
        prompts).
    n_prompts : int
        Prompts it was computed from.
    norm : float
        Euclidean length of ``vector``.
    vector : ndarray (hidden,)
        The difference of means (not in ``to_dict()``).
    """

    model: str
    layer: int
    method: str
    n_prompts: int
    norm: float
    vector: np.ndarray = internal_field()

    def summary(self) -> str:
        return (
            f"refusal direction of {self.model} at layer {self.layer} ({self.method}, "
            f"{self.n_prompts} prompts): length {self.norm:.2f}"
        )


def refusal_direction(
    model: Any,
    prompts: Any,
    layer: int,
    *,
    method: str = "answers",
    refusals: Sequence[str] = REFUSAL_OPENINGS,
    compliances: Sequence[str] = COMPLIANCE_OPENINGS,
    chat: bool = True,
) -> RefusalDirection:
    """The model's refusal direction at ``layer`` from (training) prompts.

    Parameters
    ----------
    model : trustlab.llm.LocalModel
    prompts : SafetyPrompts
        ``method="answers"`` uses its unsafe prompts; ``method="prompts"`` needs both classes.
    layer : int
    method : {"answers", "prompts"}
    refusals, compliances : sequence of str
        The answer openings of ``method="answers"``: strings, not all blank (openings that add
        no token after the prompts are refused: their mean state would be NaN).
    chat : bool, default True
        Wrap each prompt in the chat template (as generation does).

    Returns
    -------
    RefusalDirection
    """
    method = check_choice(method, "method", DIRECTION_METHODS)
    layer = check_positive_int(layer, "layer", minimum=0)
    n_layers = getattr(model, "n_layers", None)
    if isinstance(n_layers, (int, np.integer)) and not layer < n_layers:  # named as given
        raise InputError.bad(
            "layer", f"a layer of {getattr(model, 'name', 'the model')} (0..{n_layers - 1})", layer
        )
    chat = check_bool(chat, "chat")
    unsafe = np.asarray(prompts.unsafe, dtype=bool)
    texts = list(prompts.prompts)
    if method == "prompts":
        if unsafe.all() or not unsafe.any():
            raise InputError.bad("prompts", "prompts of both classes", prompts.summary())
        acts = prompt_activations(model, texts, layer, chat=chat)
        vector = acts[unsafe].mean(axis=0) - acts[~unsafe].mean(axis=0)
        n = len(texts)
    else:
        harmful = [t for t, u in zip(texts, unsafe, strict=True) if u]
        if not harmful:
            raise InputError.bad("prompts", "some unsafe prompts", prompts.summary())
        sides = {"refusals": refusals, "compliances": compliances}
        for name, openings in sides.items():
            # len, not truth: an array or Series of openings has no truth value
            if isinstance(openings, str) or (hasattr(openings, "__len__") and not len(openings)):
                raise InputError.bad(name, "a non-empty sequence of answer openings", openings)
            sides[name] = check_string_list(openings, name, what="answer openings")
            if not any(text.strip() for text in sides[name]):  # no answer token: a NaN mean
                raise InputError.bad(name, "an answer opening that is not blank", openings)
        vector = _answer_mean(
            model, harmful, sides["refusals"], "refusals", layer, chat
        ) - _answer_mean(model, harmful, sides["compliances"], "compliances", layer, chat)
        n = len(harmful)
    return RefusalDirection(
        model=model.name,
        layer=layer,
        method=method,
        n_prompts=n,
        norm=float(np.linalg.norm(vector)),
        vector=vector,
    )


def _answer_mean(
    model: Any, prompts: list[str], answers: list[str], name: str, layer: int, chat: bool
) -> np.ndarray:
    """Mean state at ``layer`` over the answer tokens of every prompt + answer pair (batched:
    right padding leaves the states of the real tokens of a causal model unchanged); openings
    ``name`` that add no token after the prompts are refused (the mean would be 0 / 0)."""
    heads = [_formatted(model, prompt, chat) for prompt in prompts]
    # ``activations(chat=False)`` encodes with the tokenizer's special tokens: count alike
    n_heads = [len(model.tokenizer(h, add_special_tokens=True)["input_ids"]) for h in heads]
    texts = [h + answer for h in heads for answer in answers]
    starts = [n for n in n_heads for _ in answers]
    states = model.activations(texts, layer, "all", chat=False, batch_size=8)
    total = sum(
        seq[n:].astype(np.float64).sum(axis=0) for seq, n in zip(states, starts, strict=True)
    )
    count = sum(len(seq) - n for seq, n in zip(states, starts, strict=True))
    if count <= 0:  # 0 / 0: the direction would be NaN
        raise InputError.bad(name, "answer openings that add tokens after the prompt", answers)
    return total / count


def _formatted(model: Any, prompt: str, chat: bool) -> str:
    """The prompt as generation feeds it (chat template with the generation prompt, or plain)."""
    if chat:
        return model.tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
        )
    return prompt
