"""The region-selection math of P2P (spec 12): pooling, correlated logits, relaxed masks, losses, tau.

Plain torch, batched over images. Every image has its own segment map (integer labels
``0 .. K_i - 1``); a batch pads to the largest ``K`` and the padded groups (size 0) are marked by a
validity mask ``valid = sizes > 0``.

Training (spec "Forward pass" and "Loss")

- :func:`group_pool` averages every feature channel over each segment (mean logit and embedding);
- :func:`correlated_logits` draws ``z ~ N(mu, E E^T + jitter I)`` by reparameterisation
  (:func:`jittered_cholesky` finds the jitter, per image); ``covariance=False`` returns ``mu``
  itself, as the authors' ``use_cov=False`` ablation does (no noise at the logit level; the relaxed
  Bernoulli is then the only randomness);
- :func:`relaxed_bernoulli` draws soft masks; :func:`temperature_schedule` and
  :func:`lambda_schedule` anneal the temperature and the sparsity weight;
- :func:`expected_kept_fraction`, :func:`kl_sparsity`, :func:`l1_sparsity` form the sparsity loss;
- :func:`pixel_mask` and :func:`apply_mask` turn group masks into classifier inputs.

Inference (spec "Inference")

- :func:`hard_selection` keeps the groups with ``sigmoid(mu) > 0.5``;
- the per-instance sparsity (dynamic tau) is in :mod:`trustlab.explain.regions.dynamic`.

>>> import torch
>>> seg = torch.tensor([[[0, 0, 1], [2, 2, 1]]])
>>> feats = torch.arange(6.0).view(1, 1, 2, 3)
>>> means, sizes = group_pool(feats, seg)
>>> means[0, :, 0].tolist(), sizes[0].tolist()
([0.5, 3.5, 3.5], [2, 2, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab._checks import check_positive, check_positive_int
from trustlab._lazy import require
from trustlab._numerics import torch_seed
from trustlab.errors import BackendError, InputError
from trustlab.explain.regions.segments import LABEL_LIMIT, check_label_range

torch = require("torch", "image")

__all__ = [
    "TAU_GRID",
    "group_pool",
    "group_covariance",
    "jittered_cholesky",
    "correlated_logits",
    "relaxed_bernoulli",
    "temperature_schedule",
    "lambda_schedule",
    "expected_kept_fraction",
    "kl_sparsity",
    "l1_sparsity",
    "pixel_mask",
    "apply_mask",
    "hard_selection",
]

#: The sparsity levels tried at inference: 0.05, 0.10, ..., 1.0, each the double nearest k/20.
TAU_GRID: tuple[float, ...] = tuple(k / 20 for k in range(1, 21))

#: Default first jitter added to the diagonal of E E^T; multiplied by 10 per failed Cholesky.
JITTER_START = 1e-6
_MAX_JITTER_TRIES = 24


# ------------------------------------------------------------------ input checks


def _tensor(value: Any, name: str, ndim: int | tuple[int, ...], kind: str) -> Any:
    """``value`` as a tensor of ``ndim`` dimensions; ``kind`` is 'float', 'int' or 'any'."""
    if not isinstance(value, torch.Tensor):
        try:
            value = torch.as_tensor(np.asarray(value))
        except (TypeError, ValueError, RuntimeError):
            raise InputError.bad(name, "a tensor or array", value) from None
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if value.ndim not in dims:
        want = " or ".join(str(d) for d in dims)
        raise InputError.bad(name, f"a {want}-D tensor", value)
    if kind == "float" and not value.is_floating_point():
        raise InputError.bad(name, "a floating-point tensor", value)
    if kind == "int" and (
        value.is_floating_point() or value.is_complex() or value.dtype == torch.bool
    ):
        raise InputError.bad(name, "an integer tensor of segment labels", value)
    return value


def _segments(segments: Any, name: str = "segments") -> Any:
    seg = _tensor(segments, name, 3, "int").long()
    if seg.numel() == 0:
        raise InputError.bad(name, "a non-empty (B, H, W) label map", segments)
    if int(seg.min()) < 0:
        raise InputError.bad(name, "labels >= 0", f"a minimum label of {int(seg.min())}")
    check_label_range(seg.max(), seg.shape[1] * seg.shape[2], name)
    return seg


def _generator(generator: Any, device: Any = None) -> Any:
    """None (torch's global stream), an int seed or a torch.Generator."""
    if generator is None or isinstance(generator, torch.Generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        g = torch.Generator(device=device or "cpu")
        g.manual_seed(torch_seed(generator))  # any int: 2**64 and more too
        return g
    raise InputError.bad("generator", "None, an int seed or a torch.Generator", generator)


def _same_leading(a: Any, b: Any, name_b: str, dims: int) -> None:
    if tuple(a.shape[:dims]) != tuple(b.shape[:dims]):
        raise InputError.bad(
            name_b, f"leading dimensions {tuple(a.shape[:dims])}", f"shape {tuple(b.shape)}"
        )


# ------------------------------------------------------------------ pooling


def group_pool(features: Any, segments: Any, n_groups: int | None = None) -> tuple[Any, Any]:
    """Mean of every channel over the pixels of every segment.

    Parameters
    ----------
    features : tensor (B, C, H, W), floating
    segments : integer tensor (B, H, W)
        Segment labels ``0 .. K_i - 1`` per image.
    n_groups : int, optional
        ``K``, the padded number of groups (default: the batch's largest label + 1).

    Returns
    -------
    means : tensor (B, K, C)
        Per-segment means; 0 for a group with no pixel (padding).
    sizes : long tensor (B, K)
        Pixels per segment (0 for padding). ``sizes.sum(1) == H * W``.

    Examples
    --------
    >>> import torch
    >>> m, s = group_pool(torch.ones(1, 2, 2, 2), torch.zeros(1, 2, 2, dtype=torch.long), 3)
    >>> m[0].tolist(), s[0].tolist()
    ([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]], [4, 0, 0])
    """
    feats = _tensor(features, "features", 4, "float")
    seg = _segments(segments)
    b, c, h, w = feats.shape
    if tuple(seg.shape) != (b, h, w):
        raise InputError.bad("segments", f"shape {(b, h, w)} to match features", seg)
    needed = int(seg.max()) + 1
    k = needed if n_groups is None else check_positive_int(n_groups, "n_groups")
    if k > max(h * w, LABEL_LIMIT):  # (B, K, C) sums: 10**12 was torch's raw allocation error
        raise InputError.bad("n_groups", f"at most {max(h * w, LABEL_LIMIT)} (the label limit)", k)
    if k < needed:
        raise InputError.bad("n_groups", f"at least {needed} (largest label + 1)", n_groups)
    idx = seg.reshape(b, h * w).to(feats.device)
    flat = feats.reshape(b, c, h * w).transpose(1, 2)  # (B, HW, C)
    sums = flat.new_zeros(b, k, c).scatter_add(1, idx.unsqueeze(-1).expand(b, h * w, c), flat)
    sizes = torch.zeros(b, k, dtype=torch.long, device=feats.device)
    sizes.scatter_add_(1, idx, torch.ones_like(idx))
    means = sums / sizes.clamp(min=1).unsqueeze(-1).to(feats.dtype)
    return means, sizes


# ------------------------------------------------------------------ correlated logits


def _valid(valid: Any, shape: tuple[int, ...], device: Any) -> Any:
    if valid is None:
        return torch.ones(shape, dtype=torch.bool, device=device)
    v = _tensor(valid, "valid", 2, "any")
    if tuple(v.shape) != tuple(shape):
        raise InputError.bad("valid", f"shape {tuple(shape)}", v)
    return v.to(device=device, dtype=torch.bool)


def group_covariance(emb: Any, valid: Any = None) -> Any:
    """``Sigma = E E^T`` per image (B, K, K), with the rows and columns of padded groups zero.

    ``emb`` is (B, K, D) (D = 3 in P2P), ``valid`` (B, K) marks the real groups (default all).
    Its mean absolute value is the spec's ``lambda_2`` penalty.

    Examples
    --------
    >>> import torch
    >>> group_covariance(torch.tensor([[[1.0, 0.0], [2.0, 1.0]]]))[0].tolist()
    [[1.0, 2.0], [2.0, 5.0]]
    """
    e = _tensor(emb, "emb", 3, "float")
    v = _valid(valid, tuple(e.shape[:2]), e.device)
    e = e * v.unsqueeze(-1).to(e.dtype)
    return e @ e.transpose(1, 2)


def jittered_cholesky(
    cov: Any, valid: Any = None, *, start: float = JITTER_START, factor: float = 10.0
) -> tuple[Any, Any]:
    """Cholesky factor of ``cov + jitter I`` with the smallest working jitter per image.

    The jitter starts at ``start`` and is multiplied by ``factor`` while
    :func:`torch.linalg.cholesky_ex` fails (spec: 1e-6, x10). Each image keeps its own jitter.
    Padded groups (``valid`` False) get an identity block, so they never make a factorisation fail.

    Returns
    -------
    L : tensor (B, K, K)
        Lower-triangular, differentiable with respect to ``cov``.
    jitter : tensor (B,)
        The jitter used for each image (no gradient).

    Examples
    --------
    >>> import torch
    >>> L, j = jittered_cholesky(torch.ones(1, 2, 2, dtype=torch.float64))
    >>> j.tolist()
    [1e-06]
    """
    s = _tensor(cov, "cov", 3, "float")
    if s.shape[1] != s.shape[2]:
        raise InputError.bad("cov", "square (B, K, K) matrices", s)
    check_positive(start, "start")
    if check_positive(factor, "factor") <= 1:
        raise InputError.bad("factor", "a number > 1", factor)
    b, k, _ = s.shape
    v = _valid(valid, (b, k), s.device)
    if not bool(torch.isfinite(s).all()):
        raise InputError.bad("cov", "finite values", "NaN or infinity")
    pad = ~v
    both = (v.unsqueeze(2) & v.unsqueeze(1)).to(s.dtype)
    eye = torch.eye(k, dtype=s.dtype, device=s.device).expand(b, k, k)
    base = s * both + eye * pad.unsqueeze(1).to(s.dtype)  # identity block on padded groups
    jitter = torch.full((b,), float(start), dtype=s.dtype, device=s.device)
    with torch.no_grad():
        for _ in range(_MAX_JITTER_TRIES):
            _, info = torch.linalg.cholesky_ex(base.detach() + eye * jitter.view(b, 1, 1))
            failed = info != 0
            if not bool(failed.any()):
                break
            jitter = torch.where(failed, jitter * factor, jitter)
        else:
            raise BackendError(
                f"Cholesky failed for images {failed.nonzero().flatten().tolist()} even with a "
                f"jitter of {float(jitter.max()):g}"
            )
    jitter = jitter.detach()
    chol, info = torch.linalg.cholesky_ex(base + eye * jitter.view(b, 1, 1))
    if bool((info != 0).any()):  # pragma: no cover - the same input factorised above
        raise BackendError("Cholesky failed on the second evaluation of the same matrix")
    return chol, jitter


def correlated_logits(
    mu: Any,
    emb: Any = None,
    valid: Any = None,
    *,
    covariance: bool = True,
    n_samples: int | None = None,
    generator: Any = None,
) -> Any:
    """Group logits ``z ~ N(mu, E E^T + jitter I)`` by reparameterisation (spec step 2).

    ``z = mu + L eps`` with ``eps ~ N(0, I)`` and ``L`` from :func:`jittered_cholesky`, so gradients
    reach ``mu`` and ``emb``. Padded groups (``valid`` False) are returned as ``mu`` (no noise); the
    real groups' distribution does not depend on them.

    Parameters
    ----------
    mu : tensor (B, K)
        Mean group logits.
    emb : tensor (B, K, D)
        Group embeddings ``E`` (D = 3 in P2P); unused when ``covariance=False``.
    valid : bool tensor (B, K), optional
        The real groups (default: all).
    covariance : bool
        False returns ``mu`` unchanged (the authors' ``use_cov=False``: no logit noise; the relaxed
        Bernoulli is the only randomness in training).
    n_samples : int, optional
        Draw this many samples: the result is (n_samples, B, K). Default: one, (B, K).
    generator : None, int or torch.Generator
        The random stream for ``eps`` (an int seeds a fresh generator).

    Examples
    --------
    >>> import torch
    >>> mu, emb = torch.zeros(2, 4), torch.randn(2, 4, 3)
    >>> correlated_logits(mu, emb, generator=0).shape
    torch.Size([2, 4])
    >>> bool((correlated_logits(mu, covariance=False) == mu).all())
    True
    """
    m = _tensor(mu, "mu", 2, "float")
    if n_samples is not None:
        n_samples = check_positive_int(n_samples, "n_samples")
    if not covariance:
        return m if n_samples is None else m.unsqueeze(0).expand(n_samples, *m.shape)
    if emb is None:
        raise InputError.bad("emb", "a (B, K, D) tensor when covariance=True", emb)
    e = _tensor(emb, "emb", 3, "float")
    if tuple(e.shape[:2]) != tuple(m.shape):
        raise InputError.bad("emb", f"shape {tuple(m.shape)} + (D,) to match mu", e)
    v = _valid(valid, tuple(m.shape), m.device)
    chol, _ = jittered_cholesky(group_covariance(e, v), v)
    gen = _generator(generator, m.device)
    shape = (n_samples or 1, *m.shape)
    eps = torch.randn(shape, generator=gen, dtype=chol.dtype, device=chol.device)
    z = m.unsqueeze(0) + torch.einsum("bij,sbj->sbi", chol, eps)
    z = torch.where(v.unsqueeze(0), z, m.unsqueeze(0))
    return z[0] if n_samples is None else z


# ------------------------------------------------------------------ relaxed selection


def relaxed_bernoulli(probs: Any, temperature: float, generator: Any = None) -> Any:
    """A reparameterised RelaxedBernoulli (binary Concrete) sample with the shape of ``probs``.

    ``sigmoid((logit(p) + log u - log(1 - u)) / T)``, ``u ~ U(0, 1)``: the sample
    :class:`torch.distributions.RelaxedBernoulli` draws, with an optional generator. Its CDF is
    ``P(m <= y) = sigmoid(T logit(y) - logit(p))``. Probabilities are clamped to
    ``[eps, 1 - eps]`` (eps of the dtype) as torch does.

    Examples
    --------
    >>> import torch
    >>> m = relaxed_bernoulli(torch.full((3,), 0.5), 0.5, generator=0)
    >>> bool(((m > 0) & (m < 1)).all())
    True
    """
    p = _tensor(probs, "probs", tuple(range(0, 9)), "float")
    t = check_positive(temperature, "temperature")
    if bool(((p < 0) | (p > 1) | torch.isnan(p)).any()):  # 1.5 would be clamped to 1 - eps
        raise InputError.bad("probs", "probabilities in [0, 1]", probs)
    tiny = torch.finfo(p.dtype).eps
    p = p.clamp(tiny, 1 - tiny)
    gen = _generator(generator, p.device)
    u = torch.rand(p.shape, generator=gen, dtype=p.dtype, device=p.device).clamp(tiny, 1 - tiny)
    logits = torch.log(p) - torch.log1p(-p)
    return torch.sigmoid((logits + torch.log(u) - torch.log1p(-u)) / t)


def _epoch(epoch: Any, max_epochs: Any) -> tuple[int, int]:
    e_max = check_positive_int(max_epochs, "max_epochs")
    e = check_positive_int(epoch, "epoch", minimum=0)
    return e, e_max


def temperature_schedule(
    epoch: int, max_epochs: int, *, start: float = 1.0, final: float = 0.5
) -> float:
    """Relaxation temperature: ``start`` at epoch 0, exponential decay to ``final`` at
    ``max_epochs / 2``, then ``final`` (spec step 3).

    Examples
    --------
    >>> temperature_schedule(0, 100), temperature_schedule(50, 100), temperature_schedule(99, 100)
    (1.0, 0.5, 0.5)
    """
    e, e_max = _epoch(epoch, max_epochs)
    start, final = check_positive(start, "start"), check_positive(final, "final")
    half = e_max / 2
    if e >= half:
        return final
    return start * (final / start) ** (e / half)


def lambda_schedule(epoch: int, max_epochs: int, lam: float = 10.0) -> float:
    """Sparsity weight ``lambda_1``: ``lam / 100`` before epoch ``max_epochs / 10``, linear up to
    ``lam`` at ``max_epochs / 2``, then ``lam``.

    Evaluated from epoch 0 (the first epoch uses ``lam / 100``): the authors' code uses the full
    ``lam`` at epoch 0 and the schedule one epoch late, a defect not repeated here.

    Examples
    --------
    >>> lambda_schedule(0, 100), lambda_schedule(30, 100), lambda_schedule(50, 100)
    (0.1, 5.05, 10.0)
    """
    e, e_max = _epoch(epoch, max_epochs)
    lam = check_positive(lam, "lam")
    low, begin, end = lam / 100, e_max / 10, e_max / 2
    if e < begin:
        return low
    if e >= end:
        return lam
    return low + (lam - low) * (e - begin) / (end - begin)


# ------------------------------------------------------------------ sparsity loss


def expected_kept_fraction(mu: Any, sizes: Any) -> Any:
    """``p_bar = sum_g sigmoid(mu_g) |g| / (H W)`` per image, from the *mean* logits (B,).

    ``sizes`` (B, K) are the pixel counts of :func:`group_pool` (padded groups count 0), so the
    denominator ``sizes.sum(1)`` is ``H W``.

    Examples
    --------
    >>> import torch
    >>> expected_kept_fraction(torch.tensor([[0.0, 100.0]]), torch.tensor([[2, 6]])).tolist()
    [0.875]
    """
    m = _tensor(mu, "mu", 2, "float")
    s = _tensor(sizes, "sizes", 2, "any")
    if tuple(s.shape) != tuple(m.shape):
        raise InputError.bad("sizes", f"shape {tuple(m.shape)} to match mu", s)
    if bool((s < 0).any()):
        raise InputError.bad("sizes", "pixel counts >= 0", s)
    s = s.to(dtype=m.dtype, device=m.device)
    total = s.sum(1)
    if bool((total <= 0).any()):
        raise InputError.bad("sizes", "at least one pixel per image", "an image of size 0")
    return (torch.sigmoid(m) * s).sum(1) / total


def _p_and_tau(p_bar: Any, tau: Any) -> tuple[Any, Any]:
    p = _tensor(p_bar, "p_bar", (0, 1), "float")
    want = f"a sparsity level in (0, 1] or levels of p_bar's shape {tuple(p.shape)}"
    if tau is None or isinstance(tau, (bool, np.bool_, str, bytes)):  # not read as 1.0 or 0.5
        raise InputError.bad("tau", want, tau)
    try:
        # torch.tensor(True), np.array([True]): not read as 1.0
        same = torch.as_tensor(tau).dtype != torch.bool
        t = torch.as_tensor(tau, dtype=p.dtype, device=p.device)
        same = same and torch.broadcast_shapes(t.shape, p.shape) == p.shape  # one per image
    except (TypeError, ValueError, RuntimeError):
        same = False
    if not same:
        raise InputError.bad("tau", want, tau)
    if bool(((p < 0) | (p > 1) | torch.isnan(p)).any()):
        raise InputError.bad("p_bar", "kept fractions in [0, 1]", p_bar)
    if bool(((t <= 0) | (t > 1) | torch.isnan(t)).any()):
        raise InputError.bad("tau", "sparsity levels in (0, 1]", tau)
    return p, t


def kl_sparsity(p_bar: Any, tau: Any, eps: float = 1e-6) -> Any:
    """The thresholded KL sparsity term per image (spec "Loss").

    ``R = -log(1 - tau + eps - max(p_bar - tau, 0)) + log(1 - tau + eps)``: zero while
    ``p_bar <= tau``, increasing beyond, ``-log(eps) + log(1 - tau + eps)`` at ``p_bar = 1``.
    ``tau`` is a number or a tensor broadcasting with ``p_bar`` (dynamic tau per image).

    Examples
    --------
    >>> import torch
    >>> kl_sparsity(torch.tensor([0.1, 0.6]), 0.2).tolist()[0]
    0.0
    """
    p, t = _p_and_tau(p_bar, tau)
    check_positive(eps, "eps")
    excess = (p - t).clamp(min=0)
    return -torch.log(1 - t + eps - excess) + torch.log(1 - t + eps)


def l1_sparsity(p_bar: Any, tau: Any) -> Any:
    """The L1 variant ``max(p_bar - tau, 0)`` per image.

    Examples
    --------
    >>> import torch
    >>> l1_sparsity(torch.tensor([0.1, 0.5]), 0.25).tolist()
    [0.0, 0.25]
    """
    p, t = _p_and_tau(p_bar, tau)
    return (p - t).clamp(min=0)


# ------------------------------------------------------------------ masks


def pixel_mask(group_mask: Any, segments: Any) -> Any:
    """Give every pixel its segment's mask value: (B, K) -> (B, 1, H, W), same dtype.

    Examples
    --------
    >>> import torch
    >>> pixel_mask(torch.tensor([[True, False]]), torch.tensor([[[0, 1]]])).tolist()
    [[[[True, False]]]]
    """
    g = _tensor(group_mask, "group_mask", 2, "any")
    seg = _segments(segments)
    b, h, w = seg.shape
    if g.shape[0] != b:
        raise InputError.bad("segments", f"{g.shape[0]} maps to match group_mask", seg)
    if int(seg.max()) >= g.shape[1]:
        raise InputError.bad(
            "group_mask", f"at least {int(seg.max()) + 1} groups (largest label + 1)", g
        )
    flat = torch.gather(g, 1, seg.reshape(b, h * w).to(g.device))
    return flat.reshape(b, 1, h, w)


def _fill_tensor(fill: Any) -> Any:
    """``fill`` as a real tensor, or None where it is not numbers (text, None, complex). A tensor
    is kept as it is (bfloat16 too, and a gradient through it)."""
    if isinstance(fill, torch.Tensor):
        return None if fill.is_complex() else fill
    try:
        arr = np.asarray(fill)
        if arr.dtype == object and all(isinstance(v, (int, float, np.number)) for v in arr.flat):
            arr = arr.astype(np.float64)
        return torch.as_tensor(arr, dtype=torch.float64) if arr.dtype.kind in "biuf" else None
    except (TypeError, ValueError, OverflowError):
        return None


def apply_mask(images: Any, mask: Any, fill: Any = 0.0) -> Any:
    """``images * mask + fill * (1 - mask)``: the classifier input (spec step 4).

    ``fill`` is a number or one value per channel (the normalised black, e.g.
    ``-mean / std``). With a hard 0/1 mask the pixels outside it are exactly ``fill``, whatever
    they held, NaN and infinity included (faithfulness by construction).

    Examples
    --------
    >>> import torch
    >>> x = torch.ones(1, 2, 1, 2)
    >>> apply_mask(x, torch.tensor([[[[1.0, 0.0]]]]), fill=[-1.0, -2.0])[0].tolist()
    [[[1.0, -1.0]], [[1.0, -2.0]]]
    """
    x = _tensor(images, "images", 4, "float")
    m = _tensor(mask, "mask", 4, "any")
    b, c, h, w = x.shape
    if m.shape[0] != b or m.shape[1] != 1 or tuple(m.shape[2:]) != (h, w):
        raise InputError.bad("mask", f"shape {(b, 1, h, w)} to match images", m)
    m = m.to(dtype=x.dtype, device=x.device)
    f = _fill_tensor(fill)
    if f is None or f.ndim > 1 or (f.ndim == 1 and f.numel() not in (1, c)):
        raise InputError.bad("fill", f"a number or {c} per-channel values", fill)
    # a NaN or infinite fill would make the kept pixels NaN too (``inf * 0``)
    if not bool(torch.isfinite(f.detach()).all()):
        raise InputError.bad("fill", "finite values", fill)
    f = f.to(dtype=x.dtype, device=x.device).reshape(1, -1, 1, 1)
    # a NaN or infinite pixel outside the mask would survive ``x * 0`` (as NaN): zero it first
    x = torch.where((m != 0) | torch.isfinite(x), x, torch.zeros((), dtype=x.dtype))
    return x * m + f * (1 - m)


def hard_selection(mu: Any, valid: Any = None) -> Any:
    """The test-time group mask ``sigmoid(mu) > 0.5`` (computed exactly as ``mu > 0``), bool.

    Padded groups (``valid`` False) are never selected.

    Examples
    --------
    >>> import torch
    >>> hard_selection(torch.tensor([[-1.0, 0.0, 2.0]])).tolist()
    [[False, False, True]]
    """
    m = _tensor(mu, "mu", 2, "float")
    sel = m > 0
    if valid is not None:
        sel = sel & _valid(valid, tuple(m.shape), m.device)
    return sel
