"""Running the server's requests on its model: a batching scheduler, or one request at a time.

Every request becomes a :class:`Ticket`: its choices' decoding steps arrive on the ticket's queue
as ``(choice, Step)`` pairs, or ``(choice, exception)`` when the model failed. The HTTP side reads
the queue (to stream or to build one response) and cancels the ticket when its client hangs up.

- :class:`LocalBackend` (a :class:`~trustlab.llm.LocalModel`): each choice is one row of the
  token loop in ``_decoding``. A :class:`BatchScheduler` thread collects the rows that wait and
  runs them as one batch: it starts a batch once no new row has arrived for ``batch_window``
  seconds (at most ``10 * batch_window`` after the first) or when ``max_batch_size`` rows wait.
  Rows that arrive while a batch runs wait for the next one. A cancelled row leaves its batch at
  the next token; the others go on. ``max_batch_size=1`` serves one row at a time.
- :class:`SerialBackend` (any other :class:`~trustlab.llm.LanguageModel`): one ``generate`` call
  per request, one request at a time, the whole text in one step. A seeded request with ``n > 1``
  makes one call per choice: choice 0 with the request's seed, choice ``c`` with ``row_seed``.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any

from trustlab.errors import BackendError, InputError, describe
from trustlab.llm._decoding import DecodeRequest, Step, decode, row_seed
from trustlab.llm._openai import Request, RequestError

log = logging.getLogger("trustlab.llm.server")


class ShuttingDown(Exception):
    """The server stopped before the request was answered."""


class Ticket:
    """One request's choices in flight; read ``queue``, call :meth:`cancel` when nobody listens."""

    def __init__(self, n_choices: int, prompt_tokens: int | None):
        self.queue: queue.SimpleQueue[tuple[int, Step | BaseException]] = queue.SimpleQueue()
        self.n_choices = n_choices
        self.prompt_tokens = prompt_tokens
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()


@dataclass
class _Row:
    ticket: Ticket
    choice: int
    request: DecodeRequest
    done: bool = False


class BatchScheduler:
    """One thread that runs waiting rows through ``decode`` in batches (see the module notes)."""

    def __init__(self, lm: Any, max_batch_size: int, batch_window: float):
        self.lm = lm
        self.max_batch_size = max_batch_size
        self.batch_window = batch_window
        self.n_batches = 0
        self.largest_batch = 0
        self.n_abandoned = 0  # rows dropped because their client hung up
        self._waiting: collections.deque[_Row] = collections.deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="llm-batcher", daemon=True)
        self._thread.start()

    def submit(self, ticket: Ticket, requests: list[DecodeRequest]) -> None:
        with self._cond:
            if self._closed:
                raise ShuttingDown("the server is shutting down")
            self._waiting.extend(_Row(ticket, i, r) for i, r in enumerate(requests))
            self._cond.notify_all()

    def close(self) -> None:
        """Stop after the current step; every waiting or running row gets ShuttingDown."""
        with self._cond:
            self._closed = True
            waiting, self._waiting = list(self._waiting), collections.deque()
            self._cond.notify_all()
        for row in waiting:
            row.ticket.queue.put((row.choice, ShuttingDown("the server is shutting down")))
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=60)

    def _next_batch(self) -> list[_Row] | None:
        with self._cond:
            while not self._live():
                if self._closed:
                    return None
                self._cond.wait()
            if self.max_batch_size > 1:
                deadline = time.monotonic() + 10 * self.batch_window
                while self._live() < self.max_batch_size and not self._closed:
                    left = deadline - time.monotonic()
                    # wait() is True when a new row arrived (notify) within the window
                    if left <= 0 or not self._cond.wait(min(self.batch_window, left)):
                        break
            if self._closed:
                return None
            size = min(self.max_batch_size, len(self._waiting))
            return [self._waiting.popleft() for _ in range(size)]

    def _live(self) -> int:
        """Drop the waiting rows whose client left; how many remain (holding the lock)."""
        live = [row for row in self._waiting if not row.ticket.cancelled]
        if len(live) < len(self._waiting):
            self.n_abandoned += len(self._waiting) - len(live)
            self._waiting = collections.deque(live)
        return len(self._waiting)

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            self.n_batches += 1
            self.largest_batch = max(self.largest_batch, len(batch))
            try:
                self._run_batch(batch)
            except Exception as exc:  # a model failure ends this batch, not the server
                log.exception("a batch of %d rows failed", len(batch))
                for row in batch:
                    if not row.done:
                        row.ticket.queue.put((row.choice, exc))
                        row.done = True
            for row in batch:
                if row.done:
                    continue
                if row.ticket.cancelled:
                    self.n_abandoned += 1
                else:  # stopped by close()
                    row.ticket.queue.put((row.choice, ShuttingDown("the server is shutting down")))

    def _run_batch(self, batch: list[_Row]) -> None:
        def cancelled(index: int) -> bool:
            return self._closed or batch[index].ticket.cancelled

        for steps in decode(self.lm, [row.request for row in batch], cancelled):
            for step in steps:
                row = batch[step.index]
                row.done = step.finish_reason is not None
                row.ticket.queue.put((row.choice, step))


class LocalBackend:
    """A LocalModel's requests as rows of the batching scheduler."""

    def __init__(self, lm: Any, max_batch_size: int, batch_window: float):
        self.lm = lm
        self.scheduler = BatchScheduler(lm, max_batch_size, batch_window)
        config = lm.model.config.get_text_config()
        self.context = getattr(config, "max_position_embeddings", None)

    def submit(self, request: Request) -> Ticket:
        if request.chat and not self.lm.has_chat_template:
            raise RequestError(
                400,
                f"messages: {self.lm.name!r} has no chat template; send the text as a prompt to "
                "/v1/completions",
                param="messages",
            )
        try:
            ids = self.lm._encode(request.prompts, request.chat)
        except InputError as exc:
            raise _in_request_words(exc, request) from None
        longest = max(len(p) for p in ids)
        if self.context is not None and longest >= self.context:
            field = _prompt_field(request, max(range(len(ids)), key=lambda i: len(ids[i])))
            raise InputError(
                f"{field}: expected at most {self.context - 1} tokens (the model's context is "
                f"{self.context}, and one new token needs room), got {longest}",
                argument=field,
            )
        if self.context is not None and longest + request.max_tokens > self.context:
            if not request.max_tokens_given:  # the default budget: what the context leaves
                request.max_tokens = self.context - longest
        if self.context is not None and longest + request.max_tokens > self.context:
            raise InputError.bad(
                request.max_tokens_field,
                f"at most {max(self.context - longest, 0)}: the prompt has {longest} tokens and "
                f"the model's context {self.context}",
                request.max_tokens,
            )
        rows = [
            DecodeRequest(
                prompt_ids=tuple(prompt),
                max_new_tokens=request.max_tokens,
                temperature=request.temperature,
                top_p=request.top_p,
                seed=row_seed(request.seed, choice),
                stop=tuple(request.stop),
                top_logprobs=request.logprobs,
            )
            for prompt in ids
            for choice in range(request.n)
        ]
        ticket = Ticket(len(rows), sum(len(p) for p in ids))
        self.scheduler.submit(ticket, rows)
        return ticket

    def close(self) -> None:
        self.scheduler.close()


class SerialBackend:
    """Any LanguageModel: one ``generate`` call per request (per choice when a seeded request
    asks for several), one request at a time."""

    def __init__(self, model: Any):
        self.model = model
        self._lock = threading.Lock()

    def submit(self, request: Request) -> Ticket:
        if request.logprobs is not None:
            raise RequestError(
                400,
                "logprobs: not supported: this server's model gives text only "
                "(no token log-probabilities)",
                param="logprobs",
            )
        if request.top_p != 1.0:
            raise RequestError(
                400, "top_p: not supported by this server's model (only 1)", param="top_p"
            )
        n, seed = request.n, request.seed
        prompts = [p for p in request.prompts for _ in range(n)]
        with self._lock:
            if seed is None or n == 1:
                texts = self._generate(prompts, request, seed)
            else:  # one call per choice: with one seed for all, a model repeats its sample
                seeds = [seed] + [row_seed(seed, c) for c in range(1, n)]
                by_choice = [self._generate(request.prompts, request, s) for s in seeds]
                texts = [by_choice[c][i] for i in range(len(request.prompts)) for c in range(n)]
        counts = [self._count(p, request.chat) for p in request.prompts]
        known = all(c is not None for c in counts)
        ticket = Ticket(len(prompts), sum(counts) if known else None)  # type: ignore[arg-type]
        for choice, text in enumerate(texts):
            ticket.queue.put((choice, self._step(choice, text, request)))
        return ticket

    def _generate(self, prompts: list[str], request: Request, seed: int | None) -> list[str]:
        """The model's texts for ``prompts``, checked to be one string per prompt."""
        texts = self.model.generate(
            prompts,
            request.max_tokens,
            chat=request.chat,
            temperature=request.temperature,
            random_state=seed,
        )
        if (
            not isinstance(texts, (list, tuple))
            or len(texts) != len(prompts)
            or not all(isinstance(t, str) for t in texts)
        ):  # a missing text would leave its choice unanswered and the request waiting forever
            raise BackendError(
                f"the model's generate returned {describe(texts)} for {len(prompts)} prompt(s) "
                "(expected one string per prompt)"
            )
        return list(texts)

    def _step(self, choice: int, text: str, request: Request) -> Step:
        """The whole answer as one step: cut at the first stop string, tokens re-counted."""
        stops = [text.find(s) for s in request.stop if s in text]
        if stops:
            text = text[: min(stops)]
        n_tokens = self._count(text, None)
        finish = "stop"
        if not stops and n_tokens is not None and n_tokens >= request.max_tokens:
            finish = "length"
        return Step(choice, text, [], finish, n_tokens)  # type: ignore[arg-type]

    def _count(self, text: str, chat: bool | None) -> int | None:
        """Tokens in a prompt (``chat``: as the template renders it) or, for None, an answer."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None or not callable(tokenizer):
            return None
        try:
            if chat and getattr(tokenizer, "chat_template", None):
                text = tokenizer.apply_chat_template(
                    [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
                )
            special = chat is False or (chat and not getattr(tokenizer, "chat_template", None))
            return len(tokenizer(text, add_special_tokens=special)["input_ids"])
        except Exception:  # usage is optional in the schema; never fail a request over it
            log.debug("token counting failed", exc_info=True)
            return None

    def close(self) -> None:
        pass


def _prompt_field(request: Request, i: int) -> str:
    """The request's field for its i-th prompt: ``prompt`` (or ``prompt[i]`` for one of several)
    on /completions, ``messages`` on chat."""
    if request.endpoint == "chat":
        return "messages"
    return "prompt" if len(request.prompts) == 1 else f"prompt[{i}]"


def _in_request_words(exc: InputError, request: Request) -> InputError:
    """A prompt the model refuses (``prompts[i]``, LocalModel's argument) named by the request's
    field (see :func:`_prompt_field`)."""
    where = exc.argument or ""
    if not where.startswith("prompts["):
        return exc
    field = _prompt_field(request, int(where[len("prompts[") : -1]))
    return InputError(field + str(exc)[len(where) :], argument=field)
