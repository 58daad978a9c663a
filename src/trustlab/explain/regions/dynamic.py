"""Dynamic tau at inference (spec 12, "Inference"): the sparsest level that makes the classifier sure.

:func:`dynamic_tau` finds, per image, the smallest ``tau`` in :data:`TAU_GRID` whose masked input
makes the classifier's max softmax reach ``delta`` (else 1.0), evaluating all levels of a batch in
one classifier pass (``chunk_size`` bounds the rows per pass); :func:`dynamic_tau_sequential` is
the spec's loop (add 0.05 until certain) and gives the same answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_callable, check_positive_int
from trustlab._lazy import require
from trustlab._results import Result, internal_field
from trustlab.errors import InputError
from trustlab.explain.regions.inputs import images_count
from trustlab.explain.regions.selection import (
    TAU_GRID,
    _segments,
    _tensor,
    apply_mask,
    hard_selection,
    pixel_mask,
)

torch = require("torch", "image")

__all__ = ["DynamicTauResult", "dynamic_tau", "dynamic_tau_sequential"]


# ------------------------------------------------------------------ dynamic tau


@dataclass(frozen=True)
class DynamicTauResult(Result):
    """Per-instance sparsity chosen by certainty (:func:`dynamic_tau`).

    With one ``delta`` the arrays are indexed by image, (B,) / (B, K) / (B, H, W); with several
    they gain a leading delta axis, (D, B, ...).

    Attributes
    ----------
    deltas : the certainty thresholds, in the order given.
    tau : the chosen level per image, a value of :data:`TAU_GRID` (1.0 when never certain).
    certain : whether the max softmax reached delta at ``tau``.
    confidence : the max softmax at ``tau``.
    prediction : the predicted class at ``tau``.
    kept_fraction : selected pixels / all pixels at ``tau`` (exact).
    classifier_rows : masked images the classifier evaluated (a cost measure).
    group_mask, mask, logits : the hard group mask, pixel mask and logits at ``tau`` (tensors).
    """

    deltas: tuple[float, ...]
    tau: np.ndarray
    certain: np.ndarray
    confidence: np.ndarray
    prediction: np.ndarray
    kept_fraction: np.ndarray
    classifier_rows: int
    method: str
    group_mask: Any = internal_field()
    mask: Any = internal_field()
    logits: Any = internal_field()
    figure_name = "dynamic_tau.png"

    def summary(self) -> str:
        tau = np.asarray(self.tau).reshape(len(self.deltas), -1)
        kept = np.asarray(self.kept_fraction).reshape(len(self.deltas), -1)
        certain = np.asarray(self.certain).reshape(len(self.deltas), -1)
        lines = [
            f"Dynamic tau ({self.method}) on {images_count(tau.shape[1])}, "
            f"{self.classifier_rows} classifier evaluations"
        ]
        for i, d in enumerate(self.deltas):
            lines.append(
                f"  delta {d:g}: mean tau {tau[i].mean():.3f}, mean kept area {kept[i].mean():.3f}"
                f", certain {certain[i].mean():.1%}"
            )
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Mean kept area and mean tau against delta."""
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(5.0, 3.5))
        tau = np.asarray(self.tau).reshape(len(self.deltas), -1)
        kept = np.asarray(self.kept_fraction).reshape(len(self.deltas), -1)
        ax.plot(self.deltas, tau.mean(1), "o-", label="mean tau")
        ax.plot(self.deltas, kept.mean(1), "s-", label="mean kept area")
        ax.set_xlabel("certainty threshold delta")
        ax.set_ylim(0, 1.05)
        ax.legend()
        return ax


def _deltas(delta: Any) -> tuple[tuple[float, ...], bool]:
    scalar = np.ndim(delta) == 0
    values = [delta] if scalar else list(np.asarray(delta, dtype=object).ravel())
    if not values:
        raise InputError.bad("delta", "at least one certainty threshold in (0, 1]", delta)
    out = []
    for v in values:
        if isinstance(v, (np.ndarray, torch.Tensor)) and v.ndim == 0:  # np.array(True): a bool too
            v = v.item()
        if isinstance(v, (bool, np.bool_, str, bytes)):  # float(True) = 1.0, float("0.5") = 0.5
            raise InputError.bad("delta", "numbers in (0, 1]", delta)
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise InputError.bad("delta", "numbers in (0, 1]", delta) from None
        if not (0 < x <= 1):
            raise InputError.bad("delta", "numbers in (0, 1]", delta)
        out.append(x)
    return tuple(out), scalar


def _inputs(select_fn, classify_fn, images, segments):
    check_callable(select_fn, "select_fn")
    check_callable(classify_fn, "classify_fn")
    x = _tensor(images, "images", 4, "float")
    if not bool(torch.isfinite(x).all()):  # NaN logits never reach delta: tau 1.0, silently
        raise InputError.bad("images", "finite values", "NaN or infinite values")
    seg = _segments(segments)
    b, _, h, w = x.shape
    if tuple(seg.shape) != (b, h, w):
        raise InputError.bad("segments", f"shape {(b, h, w)} to match images", seg)
    return x, seg.to(x.device)


def _evaluate(select_fn, classify_fn, x, seg, tau, fill):
    """Hard group masks, pixel masks, logits and max softmax (float64) for rows with levels tau."""
    mu = select_fn(x, seg, tau)
    if not isinstance(mu, torch.Tensor) or mu.ndim != 2 or mu.shape[0] != x.shape[0]:
        raise InputError.bad("select_fn", f"group logits of shape ({x.shape[0]}, K)", mu)
    return _evaluate_mu(classify_fn, x, seg, mu, fill)


def _all_levels(levels_fn, x, seg):
    """``levels_fn(x, seg, TAU_GRID)`` checked to be (B, L, K), or None without a levels_fn."""
    if levels_fn is None:
        return None
    check_callable(levels_fn, "levels_fn")
    b, n_lev = x.shape[0], len(TAU_GRID)
    grid = torch.tensor(TAU_GRID, dtype=x.dtype, device=x.device)
    mu = levels_fn(x, seg, grid)
    if not isinstance(mu, torch.Tensor) or mu.ndim != 3 or tuple(mu.shape[:2]) != (b, n_lev):
        raise InputError.bad("levels_fn", f"group logits of shape ({b}, {n_lev}, K)", mu)
    return mu


def _evaluate_mu(classify_fn, x, seg, mu, fill):
    """:func:`_evaluate` from group logits ``mu`` (rows, K) already computed."""
    present = torch.zeros(mu.shape, dtype=torch.bool, device=mu.device)
    if int(seg.max()) >= mu.shape[1]:
        raise InputError.bad("select_fn", f"at least {int(seg.max()) + 1} group logits", mu)
    present.scatter_(1, seg.reshape(seg.shape[0], -1).to(mu.device), True)
    sel = hard_selection(mu, present)  # groups absent from a map are never selected
    pm = pixel_mask(sel, seg)
    logits = classify_fn(apply_mask(x, pm, fill))
    if not isinstance(logits, torch.Tensor) or logits.ndim != 2 or logits.shape[0] != x.shape[0]:
        raise InputError.bad("classify_fn", f"logits of shape ({x.shape[0]}, n_classes)", logits)
    conf = torch.softmax(logits.double(), dim=1).max(1).values
    return sel, pm[:, 0], logits, conf


def _finish(deltas, scalar, level, certain, sel, pm, logits, conf, rows, method):
    """Stack the per-delta picks (lists over deltas of (B,) level indices and tensors)."""
    grid = np.asarray(TAU_GRID)
    level = np.stack(level)
    tau = grid[level]
    pm = torch.stack(pm)
    kept = pm.reshape(pm.shape[0], pm.shape[1], -1).double().mean(-1).cpu().numpy()
    logits_t = torch.stack(logits)
    fields = dict(
        tau=tau,
        certain=np.stack(certain),
        confidence=torch.stack(conf).cpu().numpy(),
        prediction=logits_t.argmax(-1).cpu().numpy(),
        kept_fraction=kept,
        group_mask=torch.stack(sel),
        mask=pm,
        logits=logits_t,
    )
    if scalar:
        fields = {k: v[0] for k, v in fields.items()}
    return DynamicTauResult(deltas=deltas, classifier_rows=rows, method=method, **fields)


def dynamic_tau(
    select_fn: Callable[[Any, Any, Any], Any],
    classify_fn: Callable[[Any], Any],
    images: Any,
    segments: Any,
    delta: float | Sequence[float] = 0.99,
    *,
    batch_levels: bool = True,
    fill: Any = 0.0,
    chunk_size: int | None = None,
    levels_fn: Callable[[Any, Any, Any], Any] | None = None,
) -> DynamicTauResult:
    """Per image, the smallest sparsity level whose masked input makes the classifier certain.

    ``tau* = min{tau in TAU_GRID : max softmax(classify_fn(x masked at tau)) >= delta}``, or 1.0
    when no level reaches ``delta``. The mask at a level is
    ``hard_selection(select_fn(images, segments, tau))`` spread over the segments and applied with
    :func:`apply_mask`. All 20 levels of all images are evaluated in one selector pass and one
    classifier pass (``chunk_size`` rows at a time if given); ``batch_levels=False`` runs the
    spec's loop instead (:func:`dynamic_tau_sequential`). Both give the same ``tau*``.

    Parameters
    ----------
    select_fn : callable ``(images (N,C,H,W), segments (N,H,W), tau (N,)) -> mu (N, K)``
        Group logits for the requested levels (``tau`` has the images' dtype).
    classify_fn : callable ``(masked images (N,C,H,W)) -> logits (N, n_classes)``
    images : tensor (B, C, H, W)
    segments : integer tensor (B, H, W)
    delta : float or sequence of floats in (0, 1]
        Certainty thresholds; several share one evaluation and the result gains a delta axis.
        ``tau*`` is monotone in ``delta`` per image.
    batch_levels : bool
        True: evaluate every level at once; False: the sequential loop.
    fill : number or per-channel values
        The value of removed pixels (normalised black).
    chunk_size : int, optional
        The most stacked (image, level) rows per selector/classifier call.
    levels_fn : callable ``(images (B,C,H,W), segments (B,H,W), taus (L,)) -> mu (B, L, K)``, optional
        Group logits of every level at once (e.g. :meth:`Selector.select_levels
        <trustlab.explain.regions.models.Selector.select_levels>`, which runs the selector's
        backbone once per image, since tau enters only before its 1x1 heads); used instead of
        ``select_fn`` by the batched search.

    Returns
    -------
    DynamicTauResult

    Notes
    -----
    The batched search always evaluates ``20 B`` masked images; the loop evaluates only the levels
    up to each image's ``tau*`` but in up to 20 calls. On one CPU thread one 20-fold pass is
    memory-bound and slower than the loop (64 images of 3x64x64, small CNNs: 17 images/s against
    38-99); ``chunk_size`` of about the batch size brings it to par. The single pass pays off
    where per-call overhead dominates (accelerators, small batches).

    Examples
    --------
    >>> import torch
    >>> seg = torch.arange(4).repeat_interleave(4).view(1, 4, 4)
    >>> def select(x, s, tau):  # segment g is kept once tau > (g + 0.5) / 4
    ...     return tau.view(-1, 1) * 4 - torch.arange(4.0) - 0.5
    >>> def classify(x):  # max softmax = sigmoid(8 * kept fraction)
    ...     return torch.stack([x.mean((1, 2, 3)) * 8, torch.zeros(len(x))], 1)
    >>> r = dynamic_tau(select, classify, torch.ones(1, 1, 4, 4), seg, delta=[0.9, 0.99])
    >>> r.tau.tolist(), r.kept_fraction.tolist()
    ([[0.4], [0.65]], [[0.5], [0.75]])
    """
    deltas, scalar = _deltas(delta)
    x, seg = _inputs(select_fn, classify_fn, images, segments)
    if chunk_size is not None:
        chunk_size = check_positive_int(chunk_size, "chunk_size")
    if not batch_levels:
        return dynamic_tau_sequential(select_fn, classify_fn, x, seg, delta, fill=fill)
    b, c, h, w = x.shape
    n_lev = len(TAU_GRID)
    grid = torch.tensor(TAU_GRID, dtype=x.dtype, device=x.device)
    xs = x.unsqueeze(1).expand(b, n_lev, c, h, w).reshape(b * n_lev, c, h, w)
    ss = seg.unsqueeze(1).expand(b, n_lev, h, w).reshape(b * n_lev, h, w)
    ts = grid.repeat(b)
    step = chunk_size or b * n_lev
    parts = []
    with torch.no_grad():
        mu_all = None
        if levels_fn is not None:
            check_callable(levels_fn, "levels_fn")
            mu_all = levels_fn(x, seg, grid)
            if (
                not isinstance(mu_all, torch.Tensor)
                or mu_all.ndim != 3
                or (tuple(mu_all.shape[:2]) != (b, n_lev))
            ):
                raise InputError.bad(
                    "levels_fn", f"group logits of shape ({b}, {n_lev}, K)", mu_all
                )
            mu_all = mu_all.reshape(b * n_lev, -1)
        for i in range(0, b * n_lev, step):
            sl = slice(i, i + step)
            if mu_all is None:
                parts.append(_evaluate(select_fn, classify_fn, xs[sl], ss[sl], ts[sl], fill))
            else:
                parts.append(_evaluate_mu(classify_fn, xs[sl], ss[sl], mu_all[sl], fill))
    if len(parts) == 1:
        sel, pm, logits, conf = parts[0]
    else:
        k = max(p[0].shape[1] for p in parts)
        sel = torch.cat([torch.nn.functional.pad(p[0], (0, k - p[0].shape[1])) for p in parts])
        pm, logits, conf = (torch.cat([p[j] for p in parts]) for j in (1, 2, 3))
    sel = sel.reshape(b, n_lev, -1)
    pm = pm.reshape(b, n_lev, h, w)
    logits = logits.reshape(b, n_lev, -1)
    conf = conf.reshape(b, n_lev)
    rows = torch.arange(b, device=x.device)
    levels, certain, sels, pms, lgs, cfs = [], [], [], [], [], []
    for d in deltas:
        ok = conf >= d
        hit = ok.any(1)
        first = torch.where(hit, ok.to(torch.int8).argmax(1), torch.full_like(rows, n_lev - 1))
        levels.append(first.cpu().numpy())
        certain.append(hit.cpu().numpy())
        sels.append(sel[rows, first])
        pms.append(pm[rows, first])
        lgs.append(logits[rows, first])
        cfs.append(conf[rows, first])
    return _finish(deltas, scalar, levels, certain, sels, pms, lgs, cfs, b * n_lev, "batched")


def dynamic_tau_sequential(
    select_fn: Callable[[Any, Any, Any], Any],
    classify_fn: Callable[[Any], Any],
    images: Any,
    segments: Any,
    delta: float | Sequence[float] = 0.99,
    *,
    fill: Any = 0.0,
    levels_fn: Callable[[Any, Any, Any], Any] | None = None,
    skip_repeats: bool = True,
) -> DynamicTauResult:
    """The spec's loop: start at tau = 0.05 and add 0.05 until certain or tau = 1, per image.

    Every image follows its own loop and stops at its first certain level (it is then frozen);
    the images still looking are evaluated together, one selector and one classifier call per
    level. With several deltas an image continues until the largest is reached, recording the
    first level for each. Levels are the exact grid values k/20, not a running sum of 0.05.
    Same arguments and result as :func:`dynamic_tau`; with ``levels_fn`` the group logits of
    every level come from one call before the loop (the selector's backbone once per image) and
    the loop runs the classifier only, and (``skip_repeats``) only on the images whose hard
    selection changed since their previous level: an unchanged selection is an unchanged masked
    input, whose confidence was already below every delta still sought. The result is the same
    (``classifier_rows`` counts the calls made); a trained selector often keeps the same regions
    over many levels.

    Examples
    --------
    >>> import torch
    >>> seg = torch.zeros(2, 2, 2, dtype=torch.long)
    >>> select = lambda x, s, tau: (tau - 0.3).view(-1, 1)
    >>> classify = lambda x: torch.stack([x.mean((1, 2, 3)) * 10, torch.zeros(len(x))], 1)
    >>> dynamic_tau_sequential(select, classify, torch.ones(2, 1, 2, 2), seg, 0.9).tau.tolist()
    [0.35, 0.35]
    """
    deltas, scalar = _deltas(delta)
    x, seg = _inputs(select_fn, classify_fn, images, segments)
    b, _, h, w = x.shape
    n_d = len(deltas)
    need = torch.tensor(deltas, dtype=torch.float64, device=x.device)
    level = np.full((n_d, b), len(TAU_GRID) - 1)
    certain = np.zeros((n_d, b), dtype=bool)
    found = torch.zeros(n_d, b, dtype=torch.bool, device=x.device)
    sel_out: list[Any] = [[None] * b for _ in range(n_d)]
    pm_out: list[Any] = [[None] * b for _ in range(n_d)]
    lg_out: list[Any] = [[None] * b for _ in range(n_d)]
    cf_out: list[Any] = [[None] * b for _ in range(n_d)]
    active = torch.arange(b, device=x.device)
    rows = 0
    with torch.no_grad():
        mu_all = _all_levels(levels_fn, x, seg)
        prev = None
        if mu_all is not None:
            present = torch.zeros(mu_all[:, 0].shape, dtype=torch.bool, device=x.device)
            if int(seg.max()) < present.shape[1]:
                present.scatter_(1, seg.reshape(b, -1).to(x.device), True)
        for li, t in enumerate(TAU_GRID):
            if active.numel() == 0:
                break
            last = li == len(TAU_GRID) - 1
            todo = active
            if mu_all is None:
                tau = torch.full((active.numel(),), t, dtype=x.dtype, device=x.device)
                sel, pm, logits, conf = _evaluate(
                    select_fn, classify_fn, x[active], seg[active], tau, fill
                )
            else:
                if skip_repeats and not last:
                    cur = hard_selection(mu_all[active, li], present[active])
                    if prev is not None:
                        # the same selection as at this image's previous level: the same masked
                        # input, so the same (uncertain) confidence; no classifier call needed
                        todo = active[~(cur == prev[active]).all(1)]
                    if prev is None:
                        prev = torch.zeros_like(present)
                    prev[active] = cur
                if todo.numel() == 0:
                    continue
                sel, pm, logits, conf = _evaluate_mu(
                    classify_fn, x[todo], seg[todo], mu_all[todo, li], fill
                )
            rows += todo.numel()
            hit = conf.unsqueeze(0) >= need.unsqueeze(1)  # (D, n_todo)
            for di in range(n_d):
                take = (hit[di] | last) & ~found[di, todo]
                for j in take.nonzero().flatten().tolist():
                    i = int(todo[j])
                    level[di, i], certain[di, i] = li, bool(hit[di, j])
                    sel_out[di][i], pm_out[di][i] = sel[j], pm[j]
                    lg_out[di][i], cf_out[di][i] = logits[j], conf[j]
                found[di, todo] |= take
            active = active[~found[:, active].all(0)]
    k = max(s.shape[0] for row in sel_out for s in row)
    sels = [
        torch.stack([torch.nn.functional.pad(s, (0, k - s.shape[0])) for s in row])
        for row in sel_out
    ]
    pms = [torch.stack(row) for row in pm_out]
    lgs = [torch.stack(row) for row in lg_out]
    cfs = [torch.stack(row) for row in cf_out]
    return _finish(
        deltas, scalar, list(level), list(certain), sels, pms, lgs, cfs, rows, "sequential"
    )
