"""The OpenAI chat and completions schema over a language model (no HTTP here).

:class:`OpenAIResponder` turns a decoded request body into one ``model.generate`` call and the
answer into an OpenAI response object; :mod:`trustlab.llm.server` carries both over HTTP. A
request the schema refuses raises :class:`RequestError` (HTTP status, OpenAI error type, message)
or an :class:`~trustlab.errors.InputError` from the shared input rules (a 400).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any

from trustlab._checks import check_positive_int
from trustlab.llm._inputs import as_texts, check_messages, check_seed, check_stop, check_temperature

log = logging.getLogger("trustlab.llm.server")

DEFAULT_MAX_TOKENS = 256
# the OpenAI API's default temperature (the client's, RemoteModel's, is 0: greedy)
DEFAULT_TEMPERATURE = 1.0


class RequestError(Exception):
    """A request the server refuses: HTTP status, OpenAI error type and message."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status = status
        self.kind = kind


class OpenAIResponder:
    """Answers ``/models``, ``/chat/completions`` and ``/completions`` bodies with ``model``.

    The model runs one request at a time (a lock), whatever thread the request comes on.
    """

    def __init__(self, model: Any, model_name: str):
        self.model = model
        self.model_name = model_name
        self._lock = threading.Lock()

    def models(self) -> dict[str, Any]:
        entry = {"id": self.model_name, "object": "model", "created": 0, "owned_by": "trustlab"}
        return {"object": "list", "data": [entry]}

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        params = self._params(body)
        messages = check_messages(body.get("messages"))
        if len(messages) == 1 and messages[0]["role"] == "user":
            prompt, chat = messages[0]["content"], True
        else:
            prompt, chat = self._render_conversation(messages), False
        text = self._generate([prompt], chat, params)[0]
        text, finish, usage = self._finish(prompt, chat, text, params)
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish,
            "logprobs": None,
        }
        return self._envelope("chatcmpl", "chat.completion", [choice], [usage])

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        params = self._params(body)
        if body.get("echo"):
            raise RequestError(400, "echo: not supported by this server")
        prompts = as_texts(body.get("prompt"), "prompt")
        texts = self._generate(prompts, False, params)
        choices, usages = [], []
        for index, (prompt, text) in enumerate(zip(prompts, texts, strict=True)):
            text, finish, usage = self._finish(prompt, False, text, params)
            choices.append(
                {"index": index, "text": text, "finish_reason": finish, "logprobs": None}
            )
            usages.append(usage)
        return self._envelope("cmpl", "text_completion", choices, usages)

    def _params(self, body: dict[str, Any]) -> dict[str, Any]:
        """The request fields every endpoint shares, checked by the rules the clients use."""
        requested = body.get("model")
        if requested is not None and requested != self.model_name:
            raise RequestError(
                404,
                f"model {requested!r} not found; this server serves {self.model_name!r}",
                "model_not_found",
            )
        if body.get("stream"):
            raise RequestError(400, "stream: streaming is not supported by this server")
        if body.get("n", 1) != 1:
            raise RequestError(400, f"n: only n=1 is supported, got {body.get('n')!r}")
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        max_tokens = DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens
        return {
            "max_tokens": check_positive_int(max_tokens, "max_tokens"),
            "temperature": check_temperature(body.get("temperature", DEFAULT_TEMPERATURE)),
            "seed": check_seed(body.get("seed"), "seed"),
            "stop": check_stop(body.get("stop")) or [],
        }

    def _generate(self, prompts: list[str], chat: bool, params: dict[str, Any]) -> list[str]:
        with self._lock:
            texts = self.model.generate(
                prompts,
                params["max_tokens"],
                chat=chat,
                temperature=params["temperature"],
                random_state=params["seed"],
            )
        return [str(text) for text in texts]

    def _render_conversation(self, messages: list[dict[str, str]]) -> str:
        """A multi-message conversation as one prompt string (the model's chat template)."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if getattr(tokenizer, "chat_template", None):
            try:
                text = tokenizer.apply_chat_template(
                    messages, tokenize=False, add_generation_prompt=True
                )
            except Exception as exc:  # templates raise on conversations they do not allow
                raise RequestError(
                    400, f"messages: the model's chat template refused them: {exc}"
                ) from None
            # the plain-prompt path tokenizes with special tokens: drop a BOS the template added
            bos = getattr(tokenizer, "bos_token", None)
            if bos and text.startswith(bos) and _adds_bos(tokenizer):
                text = text[len(bos) :]
            return text
        lines = [f"{m['role']}: {m['content']}" for m in messages]
        return "\n".join([*lines, "assistant:"])

    def _finish(
        self, prompt: str, chat: bool, text: str, params: dict[str, Any]
    ) -> tuple[str, str, dict[str, int] | None]:
        """Cut ``text`` at the first stop string; the finish reason and the token usage."""
        stops = [text.find(s) for s in params["stop"] if s in text]
        if stops:
            return text[: min(stops)], "stop", self._usage(prompt, chat, text[: min(stops)])
        usage = self._usage(prompt, chat, text)
        finish = "stop"
        if usage is not None and usage["completion_tokens"] >= params["max_tokens"]:
            finish = "length"
        return text, finish, usage

    def _usage(self, prompt: str, chat: bool, text: str) -> dict[str, int] | None:
        """Token counts by re-tokenizing (None when the model exposes no tokenizer)."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None or not callable(tokenizer):
            return None
        try:
            if chat and getattr(tokenizer, "chat_template", None):
                rendered = tokenizer.apply_chat_template(
                    [{"role": "user", "content": prompt}],
                    tokenize=False,
                    add_generation_prompt=True,
                )
                n_prompt = len(tokenizer(rendered, add_special_tokens=False)["input_ids"])
            else:
                n_prompt = len(tokenizer(prompt)["input_ids"])
            n_text = len(tokenizer(text, add_special_tokens=False)["input_ids"])
        except Exception:  # usage is optional in the schema; never fail a request over it
            log.debug("token counting failed", exc_info=True)
            return None
        total = n_prompt + n_text
        return {"prompt_tokens": n_prompt, "completion_tokens": n_text, "total_tokens": total}

    def _envelope(
        self, prefix: str, kind: str, choices: list[dict], usages: list[dict | None]
    ) -> dict[str, Any]:
        response = {
            "id": f"{prefix}-{uuid.uuid4().hex[:24]}",
            "object": kind,
            "created": int(time.time()),
            "model": self.model_name,
            "choices": choices,
        }
        if all(u is not None for u in usages):
            response["usage"] = {
                key: sum(u[key] for u in usages)
                for key in ("prompt_tokens", "completion_tokens", "total_tokens")
            }
        return response


def _adds_bos(tokenizer: Any) -> bool:
    """Whether encoding a plain string prepends the BOS token."""
    try:
        ids = tokenizer("a")["input_ids"]
    except Exception:
        return False
    return bool(ids) and ids[0] == getattr(tokenizer, "bos_token_id", None)
