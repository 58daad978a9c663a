"""What every language model in trustlab offers: a name and one ``generate`` call.

:class:`~trustlab.llm.LocalModel` (a model in this process, with activation access) and
:class:`~trustlab.llm.RemoteModel` (a model behind an OpenAI-compatible endpoint) both satisfy
:class:`LanguageModel`, so an evaluation, the server and ``generate_texts`` take either. A test
double needs only these two members.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["LanguageModel"]


@runtime_checkable
class LanguageModel(Protocol):
    """A text generator with a name: the call shared by local and remote models.

    ``isinstance(obj, LanguageModel)`` checks that ``obj`` has a ``name`` and a ``generate``
    method (not their signatures).

    Examples
    --------
    >>> from trustlab.llm import LanguageModel
    >>> class Echo:
    ...     name = "echo"
    ...     def generate(self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0,
    ...                  batch_size=8, random_state=None):
    ...         return [prompts] if isinstance(prompts, str) else list(prompts)
    >>> isinstance(Echo(), LanguageModel)
    True
    """

    @property
    def name(self) -> str:
        """A short name: the model name, or the endpoint's model id."""
        ...

    def generate(
        self,
        prompts: str | Sequence[str],
        max_new_tokens: int = 64,
        *,
        chat: bool = True,
        temperature: float = 0.0,
        batch_size: int = 8,
        random_state: int | np.random.Generator | None = None,
    ) -> list[str]:
        """The new text for each prompt, one string per prompt, in the order of ``prompts``.

        Parameters
        ----------
        prompts : str or sequence of str
        max_new_tokens : int, default 64
            At most this many new tokens per prompt.
        chat : bool, default True
            Send each prompt as a user turn of the model's chat template.
        temperature : float, default 0.0
            In [0, 2]; 0 is greedy decoding.
        batch_size : int, default 8
            Prompts run together (a local model; a remote one sends one request per prompt).
        random_state : None, int or numpy.random.Generator
            Seed for sampling (``temperature > 0``).

        Returns
        -------
        list of str
        """
        ...
