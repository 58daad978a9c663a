"""The ``trustlab`` model provider of inspect_ai: local models through ``trustlab.llm``.

``inspect eval task.py --model trustlab/smollm2-135m-instruct`` (or ``model="trustlab/<name>"``
in ``inspect_ai.eval``) runs a task on :func:`trustlab.llm.load_model` ``(name)``. The provider is
registered with inspect by the ``inspect_ai`` entry point in trustlab's ``pyproject.toml`` (so the
command line finds it before any task file is read) and by importing this module.

- The model loads on the first ``generate`` or token count (inspect builds providers when an eval
  starts), once per name and process, shared by every provider instance; :func:`use_local_model`
  hands an already loaded :class:`~trustlab.llm.LocalModel` to the provider instead.
- ``generate`` never blocks inspect's event loop: concurrent samples wait a few milliseconds to be
  collected and run as one batched call of :meth:`LocalModel.completions` in a worker thread (one
  batch per model at a time). Greedy text equals one-at-a-time generation; a sample whose
  prompt is bad input fails alone, not the samples batched with it.
- Chat messages (system, user, assistant turns) go through the model's chat template, as
  ``trustlab llm serve`` renders them; a model without a template gets ``role: content`` lines
  ending in ``assistant:`` and plain continuation (also as the server does).
- ``GenerateConfig``: ``max_tokens`` (default 256), ``temperature`` (default 1.0, the OpenAI
  API's; pass 0 for greedy decoding), ``top_p`` (nucleus sampling), ``seed``, ``stop_seqs``,
  ``logprobs`` and ``top_logprobs`` (up to 20; alone it asks for log-probabilities, beside
  ``logprobs=False`` it is refused as OpenAI's API does) are used; settings that change an answer and are
  not supported (penalties, ``top_k``, several choices, tools, response schemas, reasoning
  options ...) are refused with an error naming them, never ignored.
- A request stays within the model's context (as ``trustlab llm serve`` keeps it): a prompt
  that fills it, or a ``max_tokens`` set beyond the room left, is refused; the default budget
  is cut to the room left (running out is inspect's ``model_length``).
- Token counting uses the model's own tokenizer (inspect's default would download a tiktoken file).

Model arguments (``-M key=value``): ``max_batch_size`` (default 32), ``batch_window`` (seconds a
batch waits for more samples, default 0.01) and ``device`` (where the model loads: ``cpu``, the
default, ``cuda``, ``cuda:N`` or ``auto``; a GPU torch does not see is refused when inspect builds
the provider, and a model already served with :func:`use_local_model` or loaded on another device
when it is used).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

import trustlab.llm as llm
from trustlab._checks import check_device, check_in_range, check_positive_int, resolve_device
from trustlab._lazy import require
from trustlab.errors import InputError
from trustlab.llm import (
    Completion,
    LocalModel,
    check_seed,
    check_temperature,
    check_top_logprobs,
)

_model = require("inspect_ai.model", "evals")

__all__ = ["TrustlabModelAPI", "use_local_model", "PROVIDER"]

PROVIDER = "trustlab"
DEFAULT_MAX_TOKENS = 256
DEFAULT_TEMPERATURE = 1.0
DEFAULT_MAX_BATCH_SIZE = 32
DEFAULT_BATCH_WINDOW = 0.01

# GenerateConfig fields the provider uses (the rest of _HARMLESS only steer inspect itself)
_USED = {"max_tokens", "temperature", "top_p", "seed", "stop_seqs", "logprobs", "top_logprobs"}
_HARMLESS = {
    "max_retries", "timeout", "attempt_timeout", "stream_idle_timeout", "max_connections",
    "adaptive_connections", "system_message", "max_tool_output", "internal_tools", "cache_prompt",
    "cache", "fail_on_refusal", "extra_headers", "parallel_tool_calls", "batch",
}  # fmt: skip
# fields accepted at the value that means "off"
_OFF: dict[str, tuple[Any, ...]] = {
    "best_of": (1,),
    "num_choices": (1,),
    "frequency_penalty": (0, 0.0),
    "presence_penalty": (0, 0.0),
    "logit_bias": ({},),
    "extra_body": ({},),
    "modalities": (["text"],),
    "reasoning_history": ("none", "auto"),
}

# one LocalModel per name and process, and one lock per model (one batch at a time)
_MODELS: dict[str, LocalModel] = {}
_MODEL_LOCKS: dict[str, threading.Lock] = {}
_LOADING = threading.Lock()


def use_local_model(model: LocalModel, name: str | None = None) -> str:
    """Serve an already loaded model as ``trustlab/<name>`` in this process; return the name.

    Without it the provider loads ``name`` with :func:`trustlab.llm.load_model` on first use.
    Useful for a model held in memory (a fine-tuned copy, one shared with a server or the tests).

    Examples
    --------
    >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
    >>> use_local_model(lm)  # doctest: +SKIP
    'smollm2-135m-instruct'
    """
    if not isinstance(model, LocalModel):
        raise InputError.bad("model", "a trustlab.llm.LocalModel", model)
    name = model.name if name is None else name
    if not isinstance(name, str) or not name:
        raise InputError.bad("name", "a non-empty model name", name)
    with _LOADING:
        _MODELS[name] = model
        _MODEL_LOCKS.setdefault(name, threading.Lock())
    return name


def check_model_name(name: str, argument: str = "model") -> None:
    """Refuse, before an eval starts, a ``trustlab/<name>`` that no model answers to: neither
    served with :func:`use_local_model` nor loadable by :func:`trustlab.llm.load_model` (the
    provider loads lazily, so the eval would end in an errored log)."""
    with _LOADING:
        if name in _MODELS:
            return
    from trustlab.llm.registry import resolve_source

    try:
        resolve_source(name)
    except InputError as exc:
        message = str(exc).split(": expected ", 1)[-1]
        raise InputError(
            f"{argument}: expected trustlab/<model> with the model {message}", argument=argument
        ) from None


def _shared_model(name: str, device: str | None = None) -> tuple[LocalModel, threading.Lock]:
    with _LOADING:
        if name not in _MODELS:
            _MODELS[name] = llm.load_model(name, device=device or "cpu")
        elif device is not None:
            _check_loaded_on(_MODELS[name], name, device)
        return _MODELS[name], _MODEL_LOCKS.setdefault(name, threading.Lock())


def _check_loaded_on(lm: LocalModel, name: str, device: str) -> None:
    """Refuse a ``device`` model argument that the already loaded model is not on."""
    torch = require("torch", "llm")
    want = torch.device(resolve_device(torch, device))
    have = lm.model.device
    if want.type != have.type or (want.index is not None and want.index != have.index):
        raise InputError(
            f"device: {name!r} is already loaded on {have}, not {device!r} (one copy per "
            "process: drop the device argument, or load it there first)",
            argument="device",
        )


class TrustlabModelAPI(_model.ModelAPI):
    """inspect's ``ModelAPI`` over a trustlab :class:`~trustlab.llm.LocalModel` (see the module)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: Any = None,
        max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
        batch_window: float = DEFAULT_BATCH_WINDOW,
        device: str | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key)
        if model_args:
            raise InputError.bad(
                "model_args",
                "only max_batch_size, batch_window and device for the trustlab provider",
                sorted(model_args),
            )
        self.max_batch_size = check_positive_int(max_batch_size, "max_batch_size")
        self.batch_window = check_in_range(batch_window, "batch_window", 0.0, 1.0)
        self.device = None if device is None else check_device(device)
        if self.device is not None:  # a GPU torch does not see: now, not in an errored log
            resolve_device(require("torch", "llm"), self.device)
        # a name no model answers to: now (cheap, nothing loads), not in an errored log
        check_model_name(model_name)
        # one collector of waiting samples per event loop (inspect may run evals in new loops)
        self._batchers: weakref.WeakKeyDictionary[Any, _Batcher] = weakref.WeakKeyDictionary()

    def max_connections(self) -> int:
        return self.max_batch_size

    @property
    def local_model(self) -> LocalModel:
        """The LocalModel (loaded on first use)."""
        return _shared_model(self.model_name, self.device)[0]

    async def generate(self, input: list[Any], tools: list[Any], tool_choice: Any, config: Any):
        if tools:
            raise InputError.bad(
                "tools", "no tools (the trustlab provider has no tool calls)", tools
            )
        settings = _settings(config)
        lm, lock = await asyncio.to_thread(_shared_model, self.model_name, self.device)
        prompt, chat = _prompt(input, lm)
        n_input = await asyncio.to_thread(_count_input, lm, prompt, chat)
        settings, clipped = _fit_context(settings, n_input, lm, config.max_tokens is None)
        loop = asyncio.get_running_loop()
        batcher = self._batchers.get(loop)
        if batcher is None:
            batcher = self._batchers[loop] = _Batcher(
                lm, lock, self.max_batch_size, self.batch_window
            )
        completion = await batcher.submit(prompt, chat, settings)
        return _output(completion, n_input, self.model_name, settings["top_logprobs"], clipped)

    async def count_text_tokens(self, text: str) -> int:
        lm, _ = await asyncio.to_thread(_shared_model, self.model_name, self.device)
        return len(lm.tokenizer(text, add_special_tokens=False)["input_ids"])

    async def tokenize(self, text: str) -> list[int]:
        lm, _ = await asyncio.to_thread(_shared_model, self.model_name, self.device)
        return list(lm.tokenizer(text, add_special_tokens=False)["input_ids"])


@_model.modelapi(name=PROVIDER)
def _trustlab() -> type[TrustlabModelAPI]:
    return TrustlabModelAPI


# --------------------------------------------------------------------------------------------
# Requests: settings, prompts, answers
# --------------------------------------------------------------------------------------------


def _settings(config: Any) -> dict[str, Any]:
    """The completions arguments of a GenerateConfig; anything unsupported is refused."""
    for key, value in config.model_dump(exclude_none=True).items():
        if key in _USED or key in _HARMLESS:
            continue
        if key in _OFF and any(value == off for off in _OFF[key]):
            continue
        raise InputError.bad(
            f"config.{key}",
            "a setting the trustlab provider supports (max_tokens, temperature, top_p, seed, "
            "stop_seqs, logprobs, top_logprobs), or this one unset",
            value,
        )
    if config.top_p is not None and not 0 < config.top_p <= 1:
        raise InputError.bad("config.top_p", "a probability mass in (0, 1]", config.top_p)
    # checked here to be named as set (completions would name max_new_tokens, random_state, stop)
    max_tokens = DEFAULT_MAX_TOKENS if config.max_tokens is None else config.max_tokens
    temperature = DEFAULT_TEMPERATURE if config.temperature is None else config.temperature
    top = 0 if config.top_logprobs is None else config.top_logprobs
    if config.stop_seqs and not all(isinstance(s, str) and s for s in config.stop_seqs):
        raise InputError.bad("config.stop_seqs", "non-empty stop strings", config.stop_seqs)
    if config.logprobs is False and config.top_logprobs is not None:  # as OpenAI's API refuses
        raise InputError.bad(
            "config.top_logprobs", "none with logprobs=False (set logprobs True or unset)", top
        )
    wants_logprobs = bool(config.logprobs) or config.top_logprobs is not None
    return {
        "max_new_tokens": check_positive_int(max_tokens, "config.max_tokens"),
        "temperature": check_temperature(temperature, "config.temperature"),
        "top_p": 1.0 if config.top_p is None else float(config.top_p),
        "random_state": check_seed(config.seed, "config.seed"),
        "stop": list(config.stop_seqs) if config.stop_seqs else None,
        "top_logprobs": check_top_logprobs(top, "config.top_logprobs") if wants_logprobs else None,
    }


def _prompt(messages: list[Any], lm: LocalModel) -> tuple[Any, bool]:
    """inspect's chat messages as a conversation (or, without a chat template, plain text)."""
    if not messages:
        raise InputError.bad("input", "at least one chat message", messages)
    conversation = []
    for i, message in enumerate(messages):
        if message.role not in ("system", "user", "assistant") or (
            not isinstance(message.content, str)
            and any(getattr(part, "type", "text") != "text" for part in message.content)
        ):
            raise InputError.bad(
                f"input[{i}]",
                "system, user or assistant messages with text content only",
                f"a {message.role} message",
            )
        try:  # the tokenizer fails on a lone surrogate (JSON's "\ud800") with a TypeError
            message.text.encode("utf-8")
        except UnicodeEncodeError as err:
            bad = message.text[err.start : err.end]
            raise InputError(
                f"input[{i}]: expected text UTF-8 can encode, got the lone surrogate {bad!r} at "
                f"character {err.start}",
                argument=f"input[{i}]",
            ) from None
        conversation.append({"role": message.role, "content": message.text})
    if lm.has_chat_template:
        return conversation, True
    lines = [f"{m['role']}: {m['content']}" for m in conversation]
    return "\n".join([*lines, "assistant:"]), False


def _count_input(lm: LocalModel, prompt: Any, chat: bool) -> int:
    """The tokens of a prompt as ``completions`` encodes it."""
    tokenizer = lm.tokenizer
    if chat:
        text = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])
    return len(tokenizer(prompt)["input_ids"])


def _fit_context(
    settings: dict[str, Any], n_input: int, lm: LocalModel, default_budget: bool
) -> tuple[dict[str, Any], bool]:
    """The settings within the model's context, as ``trustlab llm serve`` fits a request: a
    prompt that leaves no room is refused, and so is a ``max_tokens`` set beyond the room left;
    the default budget is cut to it (then True: running out is inspect's ``model_length``).
    Past its context a model's positions are untrained and its text garbage."""
    config = lm.model.config.get_text_config()
    context = getattr(config, "max_position_embeddings", None)
    if context is None or n_input + settings["max_new_tokens"] <= context:
        return settings, False
    if n_input >= context:
        raise InputError(
            f"input: expected at most {context - 1} tokens (the model's context is {context}, "
            f"and one new token needs room), got {n_input}",
            argument="input",
        )
    if not default_budget:
        raise InputError.bad(
            "config.max_tokens",
            f"at most {context - n_input}: the prompt has {n_input} tokens and the model's "
            f"context {context}",
            settings["max_new_tokens"],
        )
    return settings | {"max_new_tokens": context - n_input}, True


def _output(
    completion: Completion, n_input: int, name: str, top: int | None, clipped: bool = False
) -> Any:
    logprobs = None
    if top is not None:
        logprobs = _model.Logprobs(
            content=[
                _model.Logprob(
                    token=token,
                    logprob=value,
                    bytes=list(token.encode("utf-8")),
                    top_logprobs=[
                        _model.TopLogprob(token=t, logprob=v, bytes=list(t.encode("utf-8")))
                        for t, v in alternatives
                    ],
                )
                for token, value, alternatives in zip(
                    completion.tokens, completion.logprobs, completion.top_logprobs, strict=True
                )
            ]
        )
    stop_reason = "stop"
    if completion.finish_reason == "length":  # the budget, or the context's room, ran out
        stop_reason = "model_length" if clipped else "max_tokens"
    choice = _model.ChatCompletionChoice(
        message=_model.ChatMessageAssistant(content=completion.text, model=name, source="generate"),
        stop_reason=stop_reason,
        logprobs=logprobs,
    )
    n_output = len(completion.tokens)
    usage = _model.ModelUsage(
        input_tokens=n_input, output_tokens=n_output, total_tokens=n_input + n_output
    )
    return _model.ModelOutput(model=name, choices=[choice], usage=usage)


# --------------------------------------------------------------------------------------------
# Batching concurrent samples
# --------------------------------------------------------------------------------------------


class _Batcher:
    """Collects the samples that wait on one event loop and runs them in batches.

    Requests with the same settings share a batch (one ``completions`` call in a worker thread,
    holding the model's lock); the first waiting request's settings go first.
    """

    def __init__(self, lm: LocalModel, lock: threading.Lock, max_batch: int, window: float):
        self.lm, self.lock, self.max_batch, self.window = lm, lock, max_batch, window
        self.waiting: list[tuple[Any, bool, dict[str, Any], asyncio.Future]] = []
        self.task: asyncio.Task | None = None

    async def submit(self, prompt: Any, chat: bool, settings: dict[str, Any]) -> Completion:
        future = asyncio.get_running_loop().create_future()
        entry = (prompt, chat, settings, future)
        self.waiting.append(entry)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._drain())
        try:
            return await future
        except asyncio.CancelledError:
            if entry in self.waiting:
                self.waiting.remove(entry)
            raise

    async def _drain(self) -> None:
        while self.waiting:
            await asyncio.sleep(self.window)  # let the samples that start together arrive
            first = self.waiting[0]
            key = (first[1], _key(first[2]))
            batch = [e for e in self.waiting if (e[1], _key(e[2])) == key][: self.max_batch]
            for entry in batch:
                self.waiting.remove(entry)
            batch = [e for e in batch if not e[3].done()]
            if not batch:
                continue
            for entry, outcome in zip(batch, await self._outcomes(batch), strict=True):
                if entry[3].done():
                    continue
                if isinstance(outcome, BaseException):
                    entry[3].set_exception(outcome)
                else:
                    entry[3].set_result(outcome)

    async def _outcomes(
        self, batch: list[tuple[Any, bool, dict[str, Any], asyncio.Future]]
    ) -> list:
        """Each entry's result, or the exception it fails with. A failing batch fails its
        samples (the others go on), except that a batch refused as bad input runs again one
        sample at a time: one sample's bad prompt (a lone surrogate, say) fails that sample
        only, not the samples that happened to share its batch."""
        try:
            return await asyncio.to_thread(self._run, batch)
        except InputError as exc:
            if len(batch) == 1:
                return [exc]
        except Exception as exc:
            return [exc] * len(batch)
        return [(await self._outcomes([entry]))[0] for entry in batch]

    def _run(self, batch: list[tuple[Any, bool, dict[str, Any], asyncio.Future]]) -> list:
        prompts = [e[0] for e in batch]
        chat, settings = batch[0][1], batch[0][2]
        top = settings["top_logprobs"]
        with self.lock:
            completions = self.lm.completions(
                prompts,
                settings["max_new_tokens"],
                chat=chat,
                temperature=settings["temperature"],
                top_logprobs=top or 0,
                stop=settings["stop"],
                batch_size=len(prompts),
                random_state=settings["random_state"],
                top_p=settings["top_p"],
            )
        return completions


def _key(settings: dict[str, Any]) -> tuple:
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(settings.items()))
