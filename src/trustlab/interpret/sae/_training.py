"""The training loop of :class:`~trustlab.interpret.sae.SparseAutoencoder` (Adam on scaled rows,
unit-norm decoder rows, dead-latent resampling; the rules are in the model module's docstring).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from trustlab._progress import WorkCounter

# resampling stops after this share of the training steps (the last resampled latents need time)
RESAMPLE_UNTIL = 0.8


def activate(pre: Any, activation: str, k: int | None, torch: Any) -> Any:
    if activation == "relu":
        return torch.relu(pre)
    values, indices = pre.topk(k, dim=-1)
    return torch.zeros_like(pre).scatter(-1, indices, values.relu())


def train_sae(
    X: np.ndarray,
    settings: dict[str, Any],
    progress: Callable[[int, int], None] | None,
    torch: Any,
) -> tuple[dict[str, np.ndarray], list[dict[str, float]], int, int, float]:
    """Adam on the scaled rows; returns the raw-unit weights, history, steps, resampled count
    and the scale."""
    rng = settings["rng"]
    n, d = X.shape
    m, k, activation = settings["n_latents"], settings["k"], settings["activation"]
    # the mean row norm in float32 where that is exact enough (a finite mean >= 1e-12: the
    # scale, and so every fit, stays bit-identical to earlier releases); otherwise in float64
    # (a float32 square overflows from about 1e19 and sinks to subnormals below about 1e-19),
    # in blocks so that no float64 copy of all rows is made, with no floor (a floor of 1e-12
    # left rows of norm 1e-20 unscaled and trained to FVU 1e9)
    with np.errstate(over="ignore"):  # an overflow is an inf mean: the float64 path below
        mean_norm = float(np.linalg.norm(X, axis=1).mean())
    if math.isfinite(mean_norm) and mean_norm >= 1e-12:
        scale = math.sqrt(d) / mean_norm
    else:
        norms = sum(
            float(np.linalg.norm(X[s : s + 65536].astype(np.float64), axis=1).sum())
            for s in range(0, n, 65536)
        )
        scale = math.sqrt(d) * n / norms if norms > 0 else 1.0
    data = torch.from_numpy(X * np.float32(scale))
    generator = torch.Generator().manual_seed(int(rng.integers(2**62)))
    w_dec = torch.randn((m, d), generator=generator)
    w_dec /= w_dec.norm(dim=1, keepdim=True)
    params = {
        "W_enc": w_dec.T.clone().requires_grad_(True),
        "b_enc": torch.zeros(m, requires_grad=True),
        "W_dec": w_dec.requires_grad_(True),
        "b_dec": data.mean(dim=0).clone().requires_grad_(True),
    }
    optimizer = torch.optim.Adam(list(params.values()), lr=settings["learning_rate"])
    batch = settings["batch_size"]
    per_epoch = math.ceil(n / batch)
    total = settings["max_epochs"] * per_epoch
    decay_from = int(0.8 * total)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: 1.0 if step < decay_from else max(0.0, (total - step) / (total - decay_from)),
    )
    every = settings["resample_every"] or max(1, total // 5)
    counter = WorkCounter(progress, total)
    fired = torch.zeros(m, dtype=torch.bool)
    history: list[dict[str, float]] = []
    step = resampled = 0
    total_var = float(((data - data.mean(dim=0)) ** 2).sum())
    for epoch in range(1, settings["max_epochs"] + 1):
        order = torch.as_tensor(rng.permutation(n))
        loss_sum = sse = active = 0.0
        for start in range(0, n, batch):
            rows = data[order[start : start + batch]]
            z = activate(
                (rows - params["b_dec"]) @ params["W_enc"] + params["b_enc"], activation, k, torch
            )
            recon = z @ params["W_dec"] + params["b_dec"]
            error = ((recon - rows) ** 2).sum(dim=1)
            loss = error.mean()
            if activation == "relu":
                loss = loss + settings["l1_coefficient"] * z.sum(dim=1).mean()
            optimizer.zero_grad()
            loss.backward()
            with torch.no_grad():
                w, g = params["W_dec"], params["W_dec"].grad
                g -= (g * w).sum(dim=1, keepdim=True) * w  # keep the step tangent to unit rows
            optimizer.step()
            schedule.step()
            with torch.no_grad():
                params["W_dec"] /= params["W_dec"].norm(dim=1, keepdim=True).clamp_min(1e-12)
                fired |= (z > 0).any(dim=0)
            step += 1
            loss_sum += loss.item() * len(rows)
            sse += error.sum().item()
            active += (z > 0).sum().item()
            if settings["resample_dead"] and step % every == 0 and step <= RESAMPLE_UNTIL * total:
                resampled += resample(params, optimizer, data, ~fired, activation, k, rng, torch)
                fired[:] = False
            counter.advance()
        history.append(
            {
                "epoch": epoch,
                "loss": loss_sum / n,
                "fvu": sse / total_var if total_var > 0 else math.nan,
                "l0": active / n,
                "n_resampled": resampled,
            }
        )
    weights = {name: p.detach().numpy().astype(np.float32) for name, p in params.items()}
    # fold the scale: z_raw = z / scale, so b_enc and b_dec shrink by it and the W's stay
    weights["b_enc"] = (weights["b_enc"] / scale).astype(np.float32)
    weights["b_dec"] = (weights["b_dec"] / scale).astype(np.float32)
    return weights, history, step, resampled, scale


def resample(
    params: dict[str, Any],
    optimizer: Any,
    data: Any,
    dead: Any,
    activation: str,
    k: int | None,
    rng: np.random.Generator,
    torch: Any,
) -> int:
    """Re-initialise the ``dead`` latents from badly reconstructed rows; returns how many."""
    dead_idx = torch.nonzero(dead).flatten()
    if len(dead_idx) == 0:
        return 0
    with torch.no_grad():
        sample = data[torch.as_tensor(rng.choice(len(data), min(len(data), 8192), replace=False))]
        z = activate(
            (sample - params["b_dec"]) @ params["W_enc"] + params["b_enc"], activation, k, torch
        )
        error = ((z @ params["W_dec"] + params["b_dec"] - sample) ** 2).sum(dim=1).double()
        if float(error.sum()) <= 0:
            return 0
        chosen = rng.choice(
            len(sample), len(dead_idx), replace=len(dead_idx) > len(sample),
            p=(error / error.sum()).numpy(),
        )  # fmt: skip
        directions = sample[torch.as_tensor(chosen)] - params["b_dec"]
        directions /= directions.norm(dim=1, keepdim=True).clamp_min(1e-12)
        alive = ~dead
        enc_norm = params["W_enc"][:, alive].norm(dim=0).mean() if alive.any() else 1.0
        params["W_dec"][dead_idx] = directions
        params["W_enc"][:, dead_idx] = directions.T * (0.2 * enc_norm)
        params["b_enc"][dead_idx] = 0.0
        for name, where in (("W_dec", (dead_idx,)), ("W_enc", (slice(None), dead_idx)),
                            ("b_enc", (dead_idx,))):  # fmt: skip
            state = optimizer.state.get(params[name], {})
            for moment in ("exp_avg", "exp_avg_sq"):
                if moment in state:
                    state[moment][where] = 0.0
    return len(dead_idx)
