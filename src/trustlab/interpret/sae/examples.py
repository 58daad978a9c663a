"""Example windows of one latent, for its explainer and its scorers (the spec's sampling).

From a :class:`~trustlab.interpret.sae.cache.LatentCache`:

- **activating examples**: each context is cut into consecutive blocks of ``ctx_len`` tokens;
  every block where the latent fires gives one example, a window of ``ctx_len`` tokens placed so
  that the block's most activating token sits at index ``ctx_len - ctx_len // 4`` (24 of 32),
  moved inwards when the context ends sooner (a context shorter than ``ctx_len`` is one whole
  window; two blocks moved onto the same window give one example);
- **quantiles**: the activating examples sorted by their largest activation and split into
  ``n_quantiles`` bins of equal count (sizes differ by at most one); bin 0 holds the weakest;
- **test examples** (scorers): ``n_test // n_quantiles`` drawn at random from each bin (at
  most half of the bin, so that a rare latent keeps examples to explain), each remembering its
  bin;
- **train examples** (explainer), from the others: ``"quantiles"`` (``n_train // n_quantiles``
  per bin), ``"top"`` (the strongest), ``"random"``, or ``"mix"`` (a fifth the strongest, the
  rest by quantiles); bins too small and the division's remainder are filled at random;
- **non-activating examples**: ``n_not_active`` random windows where the latent is zero at every
  token;
- a display activation per token, ``ceil(10 a / max_a)`` clipped to 0..10, ``max_a`` the
  latent's largest activation over the cache.

A latent with fewer than ``min_examples`` activating examples is marked not explainable
(``explainable=False``); its examples are still drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_positive_int, check_random_state
from trustlab._results import Result, internal_field
from trustlab.errors import InputError
from trustlab.interpret.sae.cache import LatentCache

__all__ = ["Example", "LatentExamples", "latent_examples", "TRAIN_STRATEGIES"]

#: How the explainer's examples are chosen.
TRAIN_STRATEGIES = ("quantiles", "top", "random", "mix")


@dataclass(frozen=True)
class Example:
    """A window of tokens and the latent's activation at each.

    Attributes
    ----------
    context : int
        The cache context it comes from.
    start : int
        Index of its first token in that context.
    tokens : ndarray of int64
    activations : ndarray of float32
        The latent at each token (0 where it does not fire).
    quantile : int or None
        The activation bin of an activating example (0 = weakest); None for a non-activating
        one.
    """

    context: int
    start: int
    tokens: np.ndarray
    activations: np.ndarray
    quantile: int | None

    @property
    def max_activation(self) -> float:
        return float(self.activations.max()) if len(self.activations) else 0.0

    def normalized(self, max_activation: float) -> np.ndarray:
        """``ceil(10 a / max_activation)`` per token, clipped to 0..10 (ints)."""
        if max_activation <= 0:
            return np.zeros(len(self.activations), dtype=np.int64)
        scaled = np.ceil(10.0 * self.activations.astype(np.float64) / max_activation)
        return np.clip(scaled, 0, 10).astype(np.int64)


@dataclass(frozen=True)
class LatentExamples(Result):
    """One latent's train, test and non-activating examples.

    Attributes
    ----------
    latent : int
    n_activating : int
        Activating examples found (blocks where it fires).
    max_activation : float
        Its largest activation over the cache.
    explainable : bool
        ``n_activating >= min_examples``.
    quantile_edges : tuple of float
        The smallest max-activation of each bin (increasing).
    train, test, not_active : tuple of Example (not in ``to_dict()``)
    """

    latent: int
    n_activating: int
    max_activation: float
    explainable: bool
    quantile_edges: tuple[float, ...]
    train: tuple = internal_field(default=())
    test: tuple = internal_field(default=())
    not_active: tuple = internal_field(default=())

    _dict_extras = ("n_train", "n_test", "n_not_active")

    @property
    def n_train(self) -> int:
        return len(self.train)

    @property
    def n_test(self) -> int:
        return len(self.test)

    @property
    def n_not_active(self) -> int:
        return len(self.not_active)

    def summary(self) -> str:
        flag = "" if self.explainable else " (too few to explain)"
        return (
            f"latent {self.latent}: {self.n_activating} activating examples{flag}, max "
            f"activation {self.max_activation:.4g}; {self.n_train} train, {self.n_test} test, "
            f"{self.n_not_active} non-activating"
        )


def latent_examples(
    cache: LatentCache,
    latent: int,
    *,
    ctx_len: int = 32,
    n_train: int = 40,
    n_test: int = 50,
    n_quantiles: int = 10,
    n_not_active: int = 50,
    train_strategy: str = "quantiles",
    min_examples: int = 200,
    random_state: Any = 0,
) -> LatentExamples:
    """Sample the examples of ``latent`` from ``cache`` (see the module docstring).

    Parameters
    ----------
    cache : LatentCache
    latent : int
    ctx_len : int, default 32
        Tokens per window (at least 4).
    n_train, n_test : int, default 40 and 50
        ``n_test`` is 0 or at least ``n_quantiles`` (each bin gives ``n_test // n_quantiles``).
    n_quantiles : int, default 10
    n_not_active : int, default 50
    train_strategy : {"quantiles", "top", "random", "mix"}, default "quantiles"
    min_examples : int, default 200
    random_state : None, int or numpy Generator, default 0

    Returns
    -------
    LatentExamples
    """
    if not isinstance(cache, LatentCache):
        raise InputError.bad("cache", "a LatentCache (cache_latents)", cache)
    if (
        isinstance(latent, bool)
        or not isinstance(latent, (int, np.integer))
        or not (0 <= latent < cache.n_latents)
    ):  # named as this function calls it (LatentCache.latent says "index")
        raise InputError.bad("latent", f"a latent index in [0, {cache.n_latents - 1}]", latent)
    contexts, positions, values = cache.latent(latent)
    ctx_len = check_positive_int(ctx_len, "ctx_len", minimum=4)
    n_train = check_positive_int(n_train, "n_train", minimum=0)
    n_test = check_positive_int(n_test, "n_test", minimum=0)
    n_quantiles = check_positive_int(n_quantiles, "n_quantiles")
    if 0 < n_test < n_quantiles:  # n_test // n_quantiles a bin: none at all
        raise InputError.bad(
            "n_test", f"0 or at least n_quantiles={n_quantiles} (n_test // n_quantiles are drawn "
            "from each bin)", n_test,
        )  # fmt: skip
    n_not_active = check_positive_int(n_not_active, "n_not_active", minimum=0)
    strategy = check_choice(train_strategy, "train_strategy", TRAIN_STRATEGIES)
    min_examples = check_positive_int(min_examples, "min_examples", minimum=0)
    rng = check_random_state(random_state)

    activating = _activating(cache, contexts, positions, values, ctx_len)
    activating.sort(key=lambda e: (e.max_activation, e.context, e.start))
    bins = [list(b) for b in np.array_split(np.arange(len(activating)), n_quantiles)]
    labelled = [
        Example(e.context, e.start, e.tokens, e.activations, q)
        for q, members in enumerate(bins)
        for e in (activating[i] for i in members)
    ]
    bins_of = [[i for i, e in enumerate(labelled) if e.quantile == q] for q in range(n_quantiles)]
    test_idx = [
        int(i)
        for members in bins_of
        if members
        for i in rng.choice(members, min(len(members) // 2, n_test // n_quantiles), replace=False)
    ]
    rest = sorted(set(range(len(labelled))) - set(test_idx))
    train_idx = _train_indices(labelled, rest, bins_of, n_train, n_quantiles, strategy, rng)
    edges = tuple(float(labelled[members[0]].max_activation) for members in bins_of if members)
    return LatentExamples(
        latent=int(latent),
        n_activating=len(labelled),
        max_activation=float(values.max()) if len(values) else 0.0,
        explainable=len(labelled) >= min_examples,
        quantile_edges=edges,
        train=tuple(labelled[i] for i in train_idx),
        test=tuple(labelled[i] for i in test_idx),
        not_active=tuple(_not_active(cache, contexts, positions, ctx_len, n_not_active, rng)),
    )


def _window(cache: LatentCache, context: int, centre: int, ctx_len: int) -> tuple[int, int]:
    """``[start, stop)`` of the window around ``centre`` (index ctx_len - ctx_len // 4)."""
    length = int(cache.token_offsets[context + 1] - cache.token_offsets[context])
    if length <= ctx_len:
        return 0, length
    start = min(max(centre - (ctx_len - ctx_len // 4), 0), length - ctx_len)
    return start, start + ctx_len


def _dense(
    positions: np.ndarray, values: np.ndarray, start: int, stop: int
) -> np.ndarray:  # fmt: skip
    out = np.zeros(stop - start, dtype=np.float32)
    inside = (positions >= start) & (positions < stop)
    out[positions[inside] - start] = values[inside]
    return out


def _activating(
    cache: LatentCache,
    contexts: np.ndarray,
    positions: np.ndarray,
    values: np.ndarray,
    ctx_len: int,
) -> list[Example]:
    examples = []
    for context in np.unique(contexts):
        rows = contexts == context
        pos, val = positions[rows], values[rows]
        starts: set[int] = set()
        for block in np.unique(pos // ctx_len):
            in_block = (pos // ctx_len) == block
            centre = int(pos[in_block][np.argmax(val[in_block])])
            start, stop = _window(cache, int(context), centre, ctx_len)
            if start in starts:  # two blocks moved to the same window by a context end
                continue
            starts.add(start)
            tokens = cache.context_tokens(int(context))[start:stop]
            examples.append(Example(int(context), start, tokens, _dense(pos, val, start, stop), 0))
    return examples


def _train_indices(
    labelled: list[Example],
    rest: list[int],
    bins_of: list[list[int]],
    n_train: int,
    n_quantiles: int,
    strategy: str,
    rng: np.random.Generator,
) -> list[int]:
    if not rest or n_train == 0:
        return []
    available = set(rest)
    by_strength = sorted(rest, key=lambda i: labelled[i].max_activation, reverse=True)
    if strategy == "top":
        return by_strength[:n_train]
    if strategy == "random":
        return [int(i) for i in rng.choice(rest, min(n_train, len(rest)), replace=False)]
    chosen: list[int] = []
    if strategy == "mix":
        chosen = by_strength[: math.ceil(0.2 * n_train)]
        available -= set(chosen)
    per_bin = (n_train - len(chosen)) // n_quantiles
    for members in bins_of:
        pool = [i for i in members if i in available]
        if pool:
            picked = [int(i) for i in rng.choice(pool, min(per_bin, len(pool)), replace=False)]
            chosen += picked
            available -= set(picked)
    short = min(n_train - len(chosen), len(available))
    if short > 0:  # the division's remainder, or bins too small: random others fill up
        chosen += [int(i) for i in rng.choice(sorted(available), short, replace=False)]
    return chosen


def _not_active(
    cache: LatentCache,
    contexts: np.ndarray,
    positions: np.ndarray,
    ctx_len: int,
    n: int,
    rng: np.random.Generator,
) -> list[Example]:
    """Random windows where the latent is zero at every token (at most 20 n draws)."""
    lengths = np.diff(cache.token_offsets)
    out: list[Example] = []
    seen: set[tuple[int, int]] = set()
    for _ in range(20 * n):
        if len(out) == n:
            break
        context = int(rng.integers(cache.n_contexts))
        length = int(lengths[context])
        start = int(rng.integers(0, max(length - ctx_len, 0) + 1))
        stop = min(start + ctx_len, length)
        fires = (contexts == context) & (positions >= start) & (positions < stop)
        if fires.any() or (context, start) in seen or stop <= start:
            continue
        seen.add((context, start))
        tokens = cache.context_tokens(context)[start:stop]
        out.append(Example(context, start, tokens, np.zeros(stop - start, np.float32), None))
    return out
