"""Intervention scoring (the spec's section of that name): explaining a latent by what raising
it makes the model say, and scoring that explanation by how much more likely it becomes.

Prompts (:func:`intervention_prompts`): activating examples cut right after their first firing
token.

Step 2: at the SAE's block, encode ``h``, keep the reconstruction error ``e = h - dec(enc(h))``,
add ``s`` to latent ``i``, decode and add ``e`` back. The decoder is linear, so this is exactly
``h + s * W_dec[i]`` (for TopK too: the added latent is not re-selected); :func:`intervention_kl`
applies it at each prompt's last token and measures the mean KL(clean || intervened) of the
next-token distributions there; :func:`kl_curve` is the same as a function of ``s``, the clean
distributions computed once.

Step 3: :func:`calibrate_strength` searches ``s`` so that this KL is about ``target`` (0.5 nats,
relative tolerance 0.1): ``log10 s`` in ``[-3, 4]`` from 2, a decade at a time until the target
is bracketed, then a secant step on ``log KL`` against ``log s`` (regula falsi, keeping the
bracket), at most 10 evaluations. It works for any increasing ``kl(s)``.

Steps 4 to 6 (explanations of the output effects, generations, the score) are in
``effects``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    check_positive,
    check_positive_int,
    check_string_list,
    whole_number,
)
from trustlab._lazy import require
from trustlab._results import Result, new_axes
from trustlab.errors import InputError
from trustlab.interpret.sae.examples import LatentExamples
from trustlab.interpret.sae.model import SparseAutoencoder
from trustlab.llm.settings import check_steering_scale

__all__ = [
    "Calibration",
    "calibrate_strength",
    "intervention_kl",
    "kl_curve",
    "intervention_prompts",
]


@dataclass(frozen=True)
class Calibration(Result):
    """The strength found for one latent.

    Attributes
    ----------
    strength : float
        The last strength tried (the one whose KL was closest to the target when not
        converged).
    kl : float
        Its mean KL (nats).
    target, rtol : float
    converged : bool
        ``|kl - target| <= rtol * target``.
    evaluations : tuple of (float, float)
        Every (strength, KL) tried, in order.
    """

    strength: float
    kl: float
    target: float
    rtol: float
    converged: bool
    evaluations: tuple[tuple[float, float], ...]

    def summary(self) -> str:
        state = "converged" if self.converged else "not converged"
        return (
            f"strength {self.strength:.4g}: KL {self.kl:.4g} nats (target {self.target:g} +- "
            f"{100 * self.rtol:g} %), {state} after {len(self.evaluations)} evaluations"
        )

    def plot(self, ax: Any = None) -> Any:
        """KL against strength (log-log) at the points tried, the target dashed."""
        ax = new_axes(ax)
        s, kl = zip(*self.evaluations, strict=True)
        ax.loglog(s, kl, marker="o", linestyle="")
        ax.axhline(self.target, color="grey", linestyle="--")
        ax.set_xlabel("strength s")
        ax.set_ylabel("mean KL (nats)")
        return ax


def calibrate_strength(
    kl: Callable[[float], float],
    *,
    target: float = 0.5,
    rtol: float = 0.1,
    log10_bounds: tuple[float, float] = (-3.0, 4.0),
    start: float = 2.0,
    max_evaluations: int = 10,
) -> Calibration:
    """The strength ``s`` at which the increasing function ``kl(s)`` is about ``target``.

    Parameters
    ----------
    kl : callable
        ``s -> mean KL`` (for example ``lambda s: intervention_kl(model, sae, i, prompts, s)``).
    target : float, default 0.5
    rtol : float, default 0.1
    log10_bounds : (float, float), default (-3, 4)
    start : float, default 2
        ``log10`` of the first strength tried.
    max_evaluations : int, default 10

    Returns
    -------
    Calibration

    Examples
    --------
    >>> calibrate_strength(lambda s: 0.01 * s**2).strength  # KL 0.5 at s = sqrt(50)
    7.0...
    """
    if not callable(kl):
        raise InputError.bad("kl", "a callable strength -> KL", kl)
    target = check_positive(target, "target")
    rtol = check_positive(rtol, "rtol")
    max_evaluations = check_positive_int(max_evaluations, "max_evaluations")
    # a str start or bounds that are not two numbers were bare TypeError / ValueError
    try:
        low_bound, high_bound = (float(b) for b in log10_bounds)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError.bad("log10_bounds", "two numbers (low, high)", log10_bounds) from exc
    # a 0-d array or tensor is a number (float() reads it); an int past float's range was a
    # bare OverflowError
    try:
        first = None if isinstance(start, (bool, str, bytes)) else float(start)
    except (TypeError, ValueError, OverflowError):
        first = None
    if first is None or not math.isfinite(first):
        raise InputError.bad("start", "a finite number (log10 of the first strength)", start)
    start = first
    if not low_bound < high_bound or not low_bound <= start <= high_bound:
        raise InputError.bad("log10_bounds", f"(low, high) around start {start}", log10_bounds)
    tried: list[tuple[float, float]] = []
    below: tuple[float, float] | None = None  # (log10 s, log KL) under the target
    above: tuple[float, float] | None = None
    x = float(start)
    for _ in range(max_evaluations):
        value = kl(10.0**x)
        try:
            value = float(value)
        except (TypeError, ValueError) as exc:  # was a bare TypeError (a kl returning None)
            raise InputError.bad(
                "kl", "a callable returning the mean KL (a number)", value
            ) from exc
        tried.append((10.0**x, value))
        if abs(value - target) <= rtol * target:
            break
        # a NaN KL (the intervention overflowed the model) counts as too strong: the next
        # strength is smaller, and a strength of NaN is never tried
        point = (x, math.log(max(value, 1e-300)) if value == value else math.inf)
        if value < target:
            below = point if below is None or x > below[0] else below
        else:
            above = point if above is None or x < above[0] else above
        if below is not None and above is not None:  # secant on log KL vs log s
            (x0, y0), (x1, y1) = below, above
            goal = math.log(target)
            secant = math.isfinite(y1) and y1 != y0
            x = x0 + (goal - y0) * (x1 - x0) / (y1 - y0) if secant else (x0 + x1) / 2
            x = min(max(x, x0 + 1e-3 * (x1 - x0)), x1 - 1e-3 * (x1 - x0))
        elif below is not None:
            if x >= high_bound:
                break
            x = min(x + 1.0, high_bound)
        else:
            if x <= low_bound:
                break
            x = max(x - 1.0, low_bound)
    best = min(tried, key=lambda p: abs(p[1] - target) if p[1] == p[1] else math.inf)
    last = tried[-1]
    chosen = last if abs(last[1] - target) <= rtol * target else best
    return Calibration(
        strength=chosen[0],
        kl=chosen[1],
        target=target,
        rtol=rtol,
        converged=abs(chosen[1] - target) <= rtol * target,
        evaluations=tuple(tried),
    )


def intervention_kl(
    model: Any,
    sae: SparseAutoencoder,
    latent: int,
    prompts: Sequence[str],
    strength: float,
    *,
    layer: int | None = None,
) -> float:
    """Mean KL(clean || intervened) of the next-token distribution at each prompt's last token,
    with latent ``latent`` raised by ``strength`` there (``h + strength * W_dec[latent]`` at the
    SAE's block; see the module docstring).

    Parameters
    ----------
    model : trustlab.llm.LocalModel
    sae : SparseAutoencoder
        Fitted, of the model's width.
    latent : int
    prompts : sequence of str
        Plain text (no chat template), each run alone (no padding).
    strength : float
    layer : int or None
        The block; None takes ``sae.layer_``.

    A strength whose shift ``strength * W_dec[latent]`` has an L2 norm of 1.84e19 or more is
    refused (:func:`~trustlab.llm.settings.check_steering_scale`): the model's float32 norm
    layers overflow there and every token gets the same probability. :func:`kl_curve` (what
    :func:`calibrate_strength` searches) does not refuse it.
    """
    strength = _check_strength(strength)
    _check_subject(model, sae, latent, layer)
    strength = _check_shift(sae, latent, strength)
    return kl_curve(model, sae, latent, prompts, layer=layer)(strength)


def kl_curve(
    model: Any,
    sae: SparseAutoencoder,
    latent: int,
    prompts: Sequence[str],
    *,
    layer: int | None = None,
) -> Callable[[float], float]:
    """``strength -> intervention_kl(model, sae, latent, prompts, strength)``, each prompt's clean
    next-token distribution computed once: what :func:`calibrate_strength` needs, as it tries up
    to 10 strengths on the same prompts.

    Examples
    --------
    >>> found = calibrate_strength(kl_curve(lm, sae, 7, prompts))  # doctest: +SKIP
    """
    layer = _check_subject(model, sae, latent, layer)
    prompts = check_string_list(prompts, "prompts", what="prompt strings")
    torch = require("torch", "torch")
    ids = _prompt_ids(model, prompts, torch)
    with torch.inference_mode():
        clean = [torch.log_softmax(model.model(x).logits[0, -1].double(), dim=-1) for x in ids]

    def kl(strength: float) -> float:
        hook = _raise_last(sae, latent, _check_strength(strength))
        total = 0.0
        with torch.inference_mode(), model.intervene(layer, hook, argument="strength"):
            for x, before in zip(ids, clean, strict=True):
                after = torch.log_softmax(model.model(x).logits[0, -1].double(), dim=-1)
                total += float((before.exp() * (before - after)).sum())
        return total / len(ids)

    return kl


def _next_token_logprobs(
    model: Any, layer: int, hook: Callable[[Any], Any], prompts: Sequence[str]
) -> Iterator[tuple[Any, Any]]:
    """Per prompt (run alone), the next-token log-probabilities at its last token, clean and
    with ``hook`` (raising a latent by ``strength``) on block ``layer`` (float64 torch vectors)."""
    torch = require("torch", "torch")
    every = _prompt_ids(model, prompts, torch)
    with torch.inference_mode():
        for ids in every:
            clean = torch.log_softmax(model.model(ids).logits[0, -1].double(), dim=-1)
            with model.intervene(int(layer), hook, argument="strength"):
                changed = torch.log_softmax(model.model(ids).logits[0, -1].double(), dim=-1)
            yield clean, changed


def _prompt_ids(model: Any, prompts: Sequence[str], torch: Any) -> list[Any]:
    """Each prompt's token ids, a (1, T) tensor; a prompt of no tokens (the empty text, for a
    tokenizer that adds no BOS) is refused: it has no last token to read or raise."""
    out = []
    for i, prompt in enumerate(prompts):
        ids = model.tokenizer(prompt)["input_ids"]
        if not len(ids):
            raise InputError.bad(f"prompts[{i}]", "a text of at least one token", prompt)
        out.append(torch.tensor([ids]))
    return out


def intervention_prompts(examples: LatentExamples, decode: Callable[[int], str],
                         *, split: str = "test") -> list[str]:  # fmt: skip
    """The spec's intervention prompts: each activating example of ``split`` (``"train"`` or
    ``"test"``) cut right after its first token where the latent fires, as text.

    Examples whose first firing token is their first token (nothing before it to read) are
    still kept: the prompt is that one token.
    """
    if not isinstance(examples, LatentExamples):
        raise InputError.bad("examples", "LatentExamples (latent_examples)", examples)
    if not callable(decode):
        raise InputError.bad("decode", "a callable token id -> text", decode)
    if split not in ("train", "test"):
        raise InputError.bad("split", '"train" or "test"', split)
    out = []
    for example in getattr(examples, split):
        firing = np.flatnonzero(example.activations > 0)
        if len(firing):
            out.append("".join(decode(int(t)) for t in example.tokens[: firing[0] + 1]))
    return out


def _check_subject(model: Any, sae: Any, latent: Any, layer: Any) -> int:
    """The block to intervene at, after checking the model, the SAE and the latent."""
    if not hasattr(model, "intervene") or not hasattr(model, "model"):
        raise InputError.bad("model", "a trustlab.llm.LocalModel", model)
    if not isinstance(sae, SparseAutoencoder) or not hasattr(sae, "fit_"):
        raise InputError.bad("sae", "a fitted SparseAutoencoder", sae)
    if sae.d_in_ != model.hidden_size:
        raise InputError.bad("sae", f"an SAE of width {model.hidden_size}", f"width {sae.d_in_}")
    if isinstance(latent, bool) or not isinstance(latent, (int, np.integer)):
        raise InputError.bad("latent", f"a latent index in [0, {sae.n_latents_ - 1}]", latent)
    if not 0 <= latent < sae.n_latents_:
        raise InputError.bad("latent", f"a latent index in [0, {sae.n_latents_ - 1}]", latent)
    if layer is None:
        if sae.layer_ is None:
            raise InputError.bad("layer", "a decoder layer (the SAE records none)", layer)
        return int(sae.layer_)
    return _check_layer(layer, model)


def _check_layer(layer: Any, model: Any) -> int:
    """``layer`` as a block of ``model``, refused as ``layer`` as the user wrote it (review 67:
    int() read True as layer 1, 1.7 as 1 and "1" as 1). Ints, numpy integers, 0-d integer
    arrays and an integral float (2.0, read as 2 as before) pass, as in the polytope's layers.
    A 0-d array of any library (numpy's, torch's: int() read torch.tensor(1) as 1 before) is
    read as its item."""
    value = whole_number(layer)
    n_layers = getattr(model, "n_layers", None)
    top = n_layers - 1 if isinstance(n_layers, (int, np.integer)) else None
    name = getattr(model, "name", "the model")
    span = f" in [0, {top}]" if top is not None else " (>= 0)"  # as cache_latents says it
    if value is None or value < 0 or (top is not None and value > top):
        raise InputError.bad("layer", f"an integer decoder layer of {name!r}{span}", layer)
    return int(value)


def _check_strength(strength: Any) -> float:
    try:
        value = float(strength)
    except (TypeError, ValueError):
        raise InputError.bad("strength", "a finite number", strength) from None
    if isinstance(strength, bool) or not math.isfinite(value):
        raise InputError.bad("strength", "a finite number", strength)
    return value


def _check_shift(sae: SparseAutoencoder, latent: int, strength: float) -> float:
    """``strength`` (a finite float; the latent already checked), refused where the shift
    ``strength * W_dec[latent]`` would overflow the model's float32 norm layers."""
    return check_steering_scale(strength, sae.W_dec_[int(latent)], "strength")


def _raise_last(sae: SparseAutoencoder, latent: int, strength: float) -> Callable[[Any], Any]:
    """The block-output hook that adds ``strength * W_dec[latent]`` at the last position (the
    prompt's last token in a full pass, the new token in each cached generation step)."""
    torch = require("torch", "torch")
    direction = torch.as_tensor(float(strength) * sae.W_dec_[int(latent)])

    def raise_last(h: Any) -> Any:
        out = h.clone()
        out[:, -1] += direction.to(h.dtype)
        return out

    return raise_last
