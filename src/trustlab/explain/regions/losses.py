"""One training step's loss of P2P (spec 12, "Forward pass" and "Loss"), and the pretraining loss.

``training_loss``: group pooling, correlated logit-normal logits, a relaxed Bernoulli mask, the
classifier on the masked images, cross-entropy + lambda_1 R(p_bar, tau) + lambda_2 mean |Sigma|.
"""

from __future__ import annotations

from typing import Any

from trustlab._lazy import require
from trustlab.explain.regions.selection import (
    apply_mask,
    correlated_logits,
    expected_kept_fraction,
    group_covariance,
    group_pool,
    kl_sparsity,
    l1_sparsity,
    pixel_mask,
    relaxed_bernoulli,
)

torch = require("torch", "image")

__all__ = ["colour_jitter", "pretraining_loss", "training_loss"]


def colour_jitter(x: Any, amount: float, gen: Any) -> Any:
    """Random brightness and contrast of up to ``amount`` per image, clipped to [0, 1]."""
    b = x.shape[0]
    bright = 1 + amount * (2 * torch.rand(b, 1, 1, 1, generator=gen) - 1)
    contrast = 1 + amount * (2 * torch.rand(b, 1, 1, 1, generator=gen) - 1)
    mean = x.mean((1, 2, 3), keepdim=True)
    return ((x - mean) * contrast + mean * bright).clamp(0, 1)


def pretraining_loss(classifier, x, y):
    """Cross-entropy of the classifier on whole images (the stand-in for a pretrained one)."""
    logits = classifier(x)
    ce = torch.nn.functional.cross_entropy(logits, y)
    zero = torch.zeros(())
    acc = (logits.argmax(1) == y).float().mean()
    return {"loss": ce, "ce": ce.detach(), "sparsity": zero, "acc": acc, "kept": torch.ones(())}


def training_loss(selector, classifier, x, seg, y, tau, n_groups, p, temp, lam, fill, gen):
    """The spec's loss on one batch, with the parts for the record."""
    logit, emb = selector(x, tau)
    means, sizes = group_pool(torch.cat([logit, emb], 1), seg, n_groups)
    mu, e = means[..., 0], means[..., 1:]
    valid = sizes > 0
    z = correlated_logits(
        mu, e, valid, covariance=p["covariance"], n_samples=p["n_samples"], generator=gen
    )  # (S, B, K)
    m = relaxed_bernoulli(torch.sigmoid(z), temp, generator=gen)
    s, b = m.shape[:2]
    pm = pixel_mask(m.reshape(s * b, -1), seg.repeat(s, 1, 1))
    logits = classifier(apply_mask(x.repeat(s, 1, 1, 1), pm, fill)).view(s, b, -1)
    if s == 1:
        log_p = torch.log_softmax(logits[0], 1)
    else:
        log_p = torch.log(torch.softmax(logits, 2).mean(0) + 1e-6)
    ce = torch.nn.functional.nll_loss(log_p, y)
    mu_valid = torch.where(valid, mu, torch.zeros_like(mu))
    p_bar = expected_kept_fraction(mu_valid, sizes)
    reg = (kl_sparsity if p["sparsity"] == "kl" else l1_sparsity)(p_bar, tau).mean()
    loss = ce + lam * reg
    if p["covariance"] and p["lambda_covariance"] > 0:
        loss = loss + p["lambda_covariance"] * group_covariance(e, valid).abs().mean()
    acc = (log_p.argmax(1) == y).float().mean()
    return {
        "loss": loss,
        "ce": ce.detach(),
        "sparsity": reg.detach(),
        "acc": acc,
        "kept": p_bar.detach().mean(),
    }
