"""The batched token loop behind ``LocalModel.completions`` and the server's scheduler.

:func:`decode` runs a batch of :class:`DecodeRequest` rows, each with its own prompt, token
budget, temperature, top-p, seed, stop strings and log-probability request, through shared
forward passes with a key-value cache, and yields what every row produced at each step (new
text, the log-probabilities of its tokens, and the finish reason when it ends). The rows are
left-padded, with position ids that skip the padding, as in ``LocalModel.generate``, so a prompt
gets the same greedy text alone or in any batch. Finished and cancelled rows leave the batch at
the next step (their cache rows are dropped), so the others do not wait for them.

When every prompt of a batch starts with the same tokens (a chat template's system message), that
prefix runs once and its cache is copied to every row before the rest of each prompt runs.

Log-probabilities are the model's own: ``log_softmax`` of the raw logits in float64, before
temperature or top-p. Sampling uses one private ``torch.Generator`` per row, seeded from the row's
seed, so a seeded row gives the same text whatever else shares its batch (greedy rows need no
generator). torch is imported only when a batch runs.
"""

from __future__ import annotations

import functools
import inspect
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trustlab._lazy import require
from trustlab._numerics import torch_seed
from trustlab.llm._inputs import samples

# below this many shared leading tokens a separate prefix pass costs more than it saves
MIN_SHARED_PREFIX = 8
_REPLACEMENT = "\ufffd"  # what decoding shows for an incomplete UTF-8 sequence


@dataclass(frozen=True)
class DecodeRequest:
    """One row: a tokenized prompt and how to continue it (all checked by the caller)."""

    prompt_ids: tuple[int, ...]
    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None  # the row's own seed (see row_seed); None: a fresh random one
    stop: tuple[str, ...] = ()
    top_logprobs: int | None = None  # None: no log-probabilities; k: the chosen token's and k best


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token's text, its log-probability and the ``top`` alternatives (best first)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass
class Step:
    """What row ``index`` produced since its last step; ``finish_reason`` is set on its last one.

    ``n_tokens`` counts the tokens generated so far (an end-of-sequence token included).
    """

    index: int
    text: str = ""
    logprobs: list[TokenLogprob] = field(default_factory=list)
    finish_reason: str | None = None
    n_tokens: int = 0


def row_seed(seed: int | None, choice: int) -> int | None:
    """The seed of choice ``choice`` of a request seeded with ``seed`` (None stays None).

    Choices of one request get different, reproducible streams; choice ``c`` of a request gets
    the same stream whatever else runs beside it.
    """
    if seed is None:
        return None
    return int(np.random.SeedSequence([seed, choice]).generate_state(1, np.uint64)[0])


class CpuSampler:
    """A transformers logits processor for ``LocalModel.generate``: it draws every row's next token
    on the CPU and leaves that token the only finite score, so greedy decoding picks it.

    The draw is what transformers' own sampling does (``softmax(scores / temperature)``, one
    ``multinomial`` over the batch) after ``torch.manual_seed(seed)``, token for token on the CPU,
    but from a private ``torch.Generator``: no global random stream (CPU or GPU) is read or
    reseeded, and a seed gives the same tokens from the same logits on any device. ``seed=None``
    draws from torch's global CPU stream, as unseeded sampling always did.
    """

    def __init__(self, temperature: float, seed: int | None, torch: Any) -> None:
        self.temperature = temperature
        self.torch = torch
        self.generator = None
        if seed is not None:  # torch takes seeds < 2**64; check_seed any int >= 0
            self.generator = torch.Generator().manual_seed(torch_seed(seed))

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch = self.torch
        probs = torch.softmax(scores.cpu() / self.temperature, dim=-1)
        drawn = torch.multinomial(probs, 1, generator=self.generator).to(scores.device)
        return torch.full_like(scores, -float("inf")).scatter_(1, drawn, 0.0)


def decode(
    lm: Any,
    requests: Sequence[DecodeRequest],
    cancelled: Callable[[int], bool] | None = None,
) -> Iterator[list[Step]]:
    """Run ``requests`` as one batch on ``lm`` (a LocalModel); yield each step's row updates.

    ``cancelled(i)`` is asked before every forward pass: a row it names leaves the batch with no
    further step. Every other row ends with one step whose ``finish_reason`` is ``"stop"``
    (end-of-sequence token or a stop string) or ``"length"`` (``max_new_tokens`` reached).
    """
    torch = require("torch", "llm")
    rows = [_Row(i, request, lm, torch) for i, request in enumerate(requests)]
    is_cancelled = cancelled or (lambda index: False)
    with torch.inference_mode():
        logits, state = _prefill(lm, [r.request.prompt_ids for r in rows], torch)
    while rows:
        with torch.inference_mode():
            steps = _advance(rows, logits, lm, torch)
        yield [step for step in steps if step is not None]
        keep = [
            k
            for k, (row, step) in enumerate(zip(rows, steps, strict=True))
            if (step is None or step.finish_reason is None) and not is_cancelled(row.index)
        ]
        if not keep:
            return
        with torch.inference_mode():
            if len(keep) < len(rows):
                state.select(keep, torch)
                rows = [rows[k] for k in keep]
            tokens = torch.tensor([[row.last] for row in rows], device=lm.model.device)
            logits = state.step(lm, tokens, torch)


# --------------------------------------------------------------------------------------------
# The model side: prefill, one step, dropping rows
# --------------------------------------------------------------------------------------------


class _State:
    """The batch's key-value cache, attention mask and next positions."""

    def __init__(self, cache: Any, mask: Any, positions: Any):
        self.cache, self.mask, self.positions = cache, mask, positions

    def select(self, keep: list[int], torch: Any) -> None:
        index = torch.tensor(keep, device=self.mask.device)
        self.cache.batch_select_indices(index)
        self.mask, self.positions = self.mask[index], self.positions[index]

    def step(self, lm: Any, tokens: Any, torch: Any) -> Any:
        self.mask = torch.cat([self.mask, self.mask.new_ones(len(tokens), 1)], dim=1)
        logits, self.cache = _forward(lm, tokens, self.mask, self.positions, self.cache)
        self.positions = self.positions + 1
        return logits


def _prefill(lm: Any, prompts: list[tuple[int, ...]], torch: Any) -> tuple[Any, _State]:
    """Run the prompts (a shared prefix once) and return the last logits and the batch state."""
    shared = shared_prefix(prompts) if len(prompts) > 1 else 0
    cache = None
    if shared >= MIN_SHARED_PREFIX:
        prefix = torch.tensor([prompts[0][:shared]], device=lm.model.device)
        ones = torch.ones_like(prefix)
        _, cache = _forward(lm, prefix, ones, torch.arange(shared)[None].to(prefix), None)
        cache.batch_repeat_interleave(len(prompts))
    else:
        shared = 0
    input_ids, mask = lm._pad([list(p[shared:]) for p in prompts], "left", torch)
    positions = shared + (mask.cumsum(-1) - 1).clamp(min=0)
    if shared:
        mask = torch.cat([mask.new_ones(len(prompts), shared), mask], dim=1)
    logits, cache = _forward(lm, input_ids, mask, positions, cache)
    return logits, _State(cache, mask, positions[:, -1:] + 1)


def shared_prefix(prompts: Sequence[Sequence[int]], limit: int | None = None) -> int:
    """Leading tokens all prompts share, at most ``limit`` (default: leaving every prompt at
    least one token of its own)."""
    limit = min(len(p) for p in prompts) - 1 if limit is None else limit
    first = prompts[0]
    n = 0
    while n < limit and all(p[n] == first[n] for p in prompts):
        n += 1
    return n


def _forward(lm: Any, input_ids: Any, mask: Any, positions: Any, cache: Any) -> tuple[Any, Any]:
    """One forward pass with the cache; the last position's float32 logits and the cache."""
    name = cache_argument(type(lm.model))
    kwargs: dict[str, Any] = {"attention_mask": mask, "position_ids": positions, "use_cache": True}
    if cache is not None:
        kwargs[name] = cache
    if lm._keeps_logits:
        kwargs["logits_to_keep"] = 1
    out = lm.model(input_ids=input_ids, **kwargs)
    cache = out.get(name) if out.get(name) is not None else out.get("past_key_values")
    return out.logits[:, -1, :].float(), cache


@functools.cache
def cache_argument(model_type: type) -> str:
    """``cache`` in newer transformers, ``past_key_values`` before."""
    parameters = inspect.signature(model_type.forward).parameters
    return "cache" if "cache" in parameters else "past_key_values"


# --------------------------------------------------------------------------------------------
# The token side: choosing tokens, text, stop strings and log-probabilities
# --------------------------------------------------------------------------------------------


def _advance(rows: list[_Row], logits: Any, lm: Any, torch: Any) -> list[Step | None]:
    """Choose each row's next token from ``logits`` (one row per line) and update the rows."""
    tokens = logits.argmax(dim=-1).tolist()
    for k, row in enumerate(rows):
        if row.generator is not None:
            tokens[k] = _sample(logits[k], row.request, row.generator, torch)
    scored = [k for k, row in enumerate(rows) if row.request.top_logprobs is not None]
    entries: dict[int, TokenLogprob] = {}
    if scored:
        logp = torch.log_softmax(logits[scored].double(), dim=-1)
        for line, k in enumerate(scored):
            entries[k] = _entry(logp[line], tokens[k], rows[k].request.top_logprobs, lm, torch)
    return [row.push(tokens[k], entries.get(k)) for k, row in enumerate(rows)]


def _sample(logits: Any, request: DecodeRequest, generator: Any, torch: Any) -> int:
    """A token drawn from softmax(logits / temperature), restricted to the top-p nucleus.

    On the CPU, whatever the model's device: the row's generator is a CPU one, so a seed draws
    the same tokens from the same logits on any device."""
    probs = torch.softmax(logits.cpu() / request.temperature, dim=-1)
    if request.top_p < 1.0:
        ordered, order = torch.sort(probs, descending=True)
        # keep the most likely tokens until their total reaches top_p (the one crossing included)
        drop = (torch.cumsum(ordered, dim=-1) - ordered) >= request.top_p
        probs = probs.clone()
        probs[order[drop]] = 0.0
    return int(torch.multinomial(probs, 1, generator=generator))


def _entry(logp: Any, token: int, k: int, lm: Any, torch: Any) -> TokenLogprob:
    top: tuple[tuple[str, float], ...] = ()
    if k:
        # a vocabulary smaller than k gives every token (as the OpenAI API does), not a torch error
        values, ids = torch.topk(logp, min(k, logp.shape[-1]))
        top = tuple(
            (lm._token_text(i), v) for i, v in zip(ids.tolist(), values.tolist(), strict=True)
        )
    return TokenLogprob(lm._token_text(token), float(logp[token]), top)


class _Row:
    """One row's tokens and text: what is final, what is held back, what is not yet sent."""

    def __init__(self, index: int, request: DecodeRequest, lm: Any, torch: Any):
        self.index, self.request = index, request
        self._decode = functools.partial(lm.tokenizer.decode, skip_special_tokens=True)
        self._eos = _eos_set(lm._eos_ids)
        self.ids: list[int] = []
        self.last = 0
        self.text = ""
        self.sent = 0  # characters of text already handed out
        # (text offset where the token starts, where it ends, its entry) not yet handed out
        self.pending: list[tuple[int, int, TokenLogprob]] = []
        self.generator = None
        if samples(request.temperature):
            seed = request.seed if request.seed is not None else secrets.randbits(63)
            self.generator = torch.Generator().manual_seed(torch_seed(seed))

    def push(self, token: int, entry: TokenLogprob | None) -> Step | None:
        """Take the next token; the step to report (None when nothing is new yet)."""
        self.last = token
        if token in self._eos:
            return self._step(len(self.text), "stop", len(self.ids) + 1)
        self.ids.append(token)
        previous, self.text = self.text, self._decode(self.ids)
        # where the new text starts: a partial character's U+FFFD placeholders are replaced once
        # its last byte arrives, so the new text can begin before the end of the previous one
        before = _common_prefix(previous, self.text)
        if entry is not None:
            self.pending.append((min(before, len(self.text)), len(self.text), entry))
        cut = _find_stop(self.text, self.request.stop, before)
        if cut is not None:
            self.text = self.text[: max(cut, self.sent)]
            return self._step(len(self.text), "stop", len(self.ids))
        if len(self.ids) >= self.request.max_new_tokens:
            return self._step(len(self.text), "length", len(self.ids))
        return self._step(_safe_end(self.text, self.request.stop), None, len(self.ids))

    def _step(self, end: int, finish: str | None, n_tokens: int) -> Step | None:
        if finish is None:
            ready = [e for start, stop, e in self.pending if stop <= end]
            self.pending = [p for p in self.pending if p[1] > end]
        else:  # the tokens that put at least one character before the end (all, without a cut)
            ready = [e for start, stop, e in self.pending if start < end or stop <= end]
            self.pending = []
        text = self.text[self.sent : end] if end > self.sent else ""
        self.sent = max(self.sent, end)
        if not text and not ready and finish is None:
            return None
        return Step(self.index, text, ready, finish, n_tokens)


def _eos_set(eos: Any) -> frozenset[int]:
    if eos is None:
        return frozenset()
    return frozenset(int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos]))


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    if b.startswith(a):  # the usual case: the text only grew
        return len(a)
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _find_stop(text: str, stops: Sequence[str], before: int) -> int | None:
    """Where the first stop string starts, looking only at occurrences that end after ``before``."""
    found = [
        i for s in stops if (i := text.find(s, max(0, before - len(s) + 1))) >= 0
    ]  # fmt: skip
    return min(found) if found else None


def _safe_end(text: str, stops: Sequence[str]) -> int:
    """How much of ``text`` can be sent: not a trailing partial character, nor a suffix that
    could still grow into a stop string."""
    end = len(text)
    while end and text[end - 1] == _REPLACEMENT:
        end -= 1
    hold = 0
    for s in stops:
        for k in range(min(len(s) - 1, end), hold, -1):
            if text.endswith(s[:k], 0, end):
                hold = k
                break
    return end - hold
