"""One generation call as a result: prompts, the model's texts, and the settings that made them."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_bool, check_positive_int
from trustlab._progress import check_progress
from trustlab._results import Result
from trustlab.errors import InputError
from trustlab.llm._inputs import as_texts
from trustlab.llm.protocol import LanguageModel
from trustlab.llm.registry import check_chat_support, load_model
from trustlab.llm.settings import check_seed, check_temperature

__all__ = ["Generations", "generate_texts"]


@dataclass(frozen=True)
class Generations(Result):
    """Prompts and the text a model generated for each.

    Attributes
    ----------
    model : str
        The model's name (a local model) or the endpoint's model id.
    endpoint : str or None
        The endpoint's base URL for a remote model, None for a local one.
    chat, max_new_tokens, temperature
        The generation settings.
    random_state : int or None
        The sampling seed the model was given (one drawn from a numpy Generator), None when
        unseeded; with the settings above (and, for a local model, the batch size) it repeats
        sampled texts.
    prompts, texts : tuple of str
        Each prompt and its new text, in order.
    """

    model: str
    endpoint: str | None
    chat: bool
    max_new_tokens: int
    temperature: float
    random_state: int | None
    prompts: tuple[str, ...]
    texts: tuple[str, ...]

    def _dict_items(self) -> dict[str, Any]:
        # one {"prompt", "text"} record per prompt, the layout readers of the JSON rely on
        items = super()._dict_items()
        prompts, texts = items.pop("prompts"), items.pop("texts")
        items["generations"] = [
            {"prompt": p, "text": t} for p, t in zip(prompts, texts, strict=True)
        ]
        return items

    def summary(self) -> str:
        """The text alone for one prompt; numbered prompts and texts for several."""
        if len(self.texts) == 1:
            return self.texts[0]
        blocks = [
            f"[{i}] {prompt}\n{text}"
            for i, (prompt, text) in enumerate(zip(self.prompts, self.texts, strict=True), 1)
        ]
        return "\n\n".join(blocks)


def generate_texts(
    model: LanguageModel | str | os.PathLike,
    prompts: str | Sequence[str],
    max_new_tokens: int = 64,
    *,
    chat: bool = True,
    temperature: float = 0.0,
    batch_size: int = 8,
    random_state: int | np.random.Generator | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Generations:
    """Generate text for each prompt and keep it with the prompts and settings.

    Parameters
    ----------
    model : LanguageModel, str or path
        A :class:`~trustlab.llm.LocalModel`, a :class:`~trustlab.llm.RemoteModel` or any
        :class:`~trustlab.llm.LanguageModel`; or a model name or path, loaded with
        :func:`~trustlab.llm.load_model` once the other arguments are checked (so a bad argument
        fails before a load that can take a minute).
    prompts : str or sequence of str
    max_new_tokens, chat, temperature, batch_size, random_state
        As in :meth:`LanguageModel.generate <trustlab.llm.LanguageModel.generate>`.
    progress : callable, optional
        Called with ``(prompts done, prompts in all)``: after each batch when the model's
        ``generate`` takes a ``progress`` argument (``LocalModel`` and ``RemoteModel`` do),
        otherwise once at the end.

    Returns
    -------
    Generations

    Examples
    --------
    >>> from trustlab.llm import generate_texts
    >>> class Shout:
    ...     name = "shout"
    ...     def generate(self, prompts, max_new_tokens=64, **settings):
    ...         return [p.upper() for p in prompts]
    >>> generate_texts(Shout(), ["hi", "yo"], 4).to_dict()["generations"]
    [{'prompt': 'hi', 'text': 'HI'}, {'prompt': 'yo', 'text': 'YO'}]
    """
    # a Generator gives its one seed now (as the models draw it), so the result can record it
    random_state = check_seed(random_state)
    check_progress(progress)  # a model without its own progress gets it called at the end
    # before any work, for any model: the result pairs each prompt with its text
    n_prompts = len(as_texts(prompts))
    # before a load, and for any model: the result records these settings (a model of one's
    # own that ignores them would otherwise have 5.7 tokens recorded as 5, temperature 5 as 5.0)
    max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
    chat = check_bool(chat, "chat")
    temperature = check_temperature(temperature)
    batch_size = check_positive_int(batch_size, "batch_size")
    if isinstance(model, (str, os.PathLike)):
        check_chat_support(model, chat)
        model = load_model(model)
    elif not callable(getattr(model, "generate", None)):
        raise InputError.bad("model", "a LanguageModel, a model name or a path", model)
    reports = progress is not None and _takes_progress(model.generate)
    texts = model.generate(
        prompts,
        max_new_tokens,
        chat=chat,
        temperature=temperature,
        batch_size=batch_size,
        random_state=random_state,
        **({"progress": progress} if reports else {}),
    )
    if isinstance(texts, np.ndarray):
        texts = texts.tolist()
    if (
        not isinstance(texts, (list, tuple))
        or len(texts) != n_prompts
        or not all(isinstance(t, str) for t in texts)
    ):  # a short list would pair texts with the wrong prompts, or fail only in to_dict()
        raise InputError.bad(
            "model", f"a generate that returns {n_prompts} text(s), one string per prompt", texts
        )
    if progress is not None and not reports:
        progress(len(texts), len(texts))
    return Generations(
        model=str(model.name),
        endpoint=getattr(model, "base_url", None),
        chat=bool(chat),
        max_new_tokens=int(max_new_tokens),
        temperature=float(temperature),
        random_state=random_state,
        prompts=tuple([prompts] if isinstance(prompts, str) else prompts),
        texts=tuple(texts),
    )


def _takes_progress(method: Callable[..., Any]) -> bool:
    try:
        return "progress" in inspect.signature(method).parameters
    except (TypeError, ValueError):  # a builtin or C method without a signature
        return False
