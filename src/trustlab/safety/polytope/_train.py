"""Training loop of the safety polytope (torch, imported when ``SafetyPolytope.fit`` runs).

Loss per minibatch of B standardised activations z with encoder features f = f(z) and facet
values ``c_k = phi_k' f - xi_k``:

    [ sum_safe sum_k relu(M + c_k)  +  w_u sum_unsafe relu(M - c_a(i)) ] / B
    + lambda_f mean_i ||f_i||_1   (concept encoder only)
    + lambda_phi mean_k ||phi_k||_1

where ``a(i)`` is the facet assigned to unsafe sample i: the most violated one, then moved by
the entropy heuristic (below). The paper's ``- lambda_H H`` term is left out of the loss on
purpose: H is the entropy of the *integer* assignment histogram, so its gradient is zero and
only the reassignment acts on it.

Entropy-driven reassignment: while the base-2 entropy H of the assignments of the batch's
unsafe samples is below half its maximum (``log2 K / 2``), up to 100 times pick a random unsafe
sample, move it to a random other facet it violates (or to its second most violated facet when
it violates at most one) and keep the move only if H increases. This spreads the unsafe
samples over facets so that they specialise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trustlab._adam import Adam
from trustlab._lazy import require
from trustlab._numerics import seeded_torch
from trustlab.errors import BackendError

__all__ = ["TrainingSettings", "train_polytope", "assign_facets"]

_REASSIGN_TRIES = 100


@dataclass(frozen=True)
class TrainingSettings:
    """The checked parameters of :class:`SafetyPolytope` that training reads."""

    n_facets: int
    encoder: str
    n_concepts: int
    margin: float
    unsafe_weight: float
    concept_l1: float
    facet_l1: float
    facet_l2: float
    max_epochs: int
    batch_size: int
    learning_rate: float
    reassign: bool
    violation_threshold: float
    init: str


def train_polytope(
    z: np.ndarray, unsafe: np.ndarray, settings: TrainingSettings, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], list[float]]:
    """Fit the facets (and the concept encoder) on standardised activations ``z``.

    Returns the parameters as float64 arrays and the mean loss of each epoch. ``rng`` seeds torch
    too (the caller's torch stream is left as it was), then the initialisation, the minibatch
    order and the reassignment.
    """
    torch = require("torch", "torch")
    with seeded_torch(int(rng.integers(2**31 - 1))):  # the caller's torch stream is restored
        params = _initial_parameters(z.shape[1], settings, rng)
        if settings.init == "data":
            _data_driven_facets(params, z, unsafe, settings, rng)
        tensors = {
            k: torch.tensor(v, dtype=torch.float32, requires_grad=True) for k, v in params.items()
        }
        # Adam written out (trustlab._adam): torch.optim.Adam's arithmetic to the bit, without
        # its per-step bookkeeping, which costs more than the update on these small tensors
        optimiser = Adam(list(tensors.values()), learning_rate=settings.learning_rate)
        data = torch.tensor(z, dtype=torch.float32)
        labels = np.asarray(unsafe, dtype=bool)
        history = []
        for _ in range(settings.max_epochs):
            order = rng.permutation(len(z))
            total = 0.0
            for start in range(0, len(z), settings.batch_size):
                batch = order[start : start + settings.batch_size]
                rows = data.index_select(0, torch.from_numpy(batch))  # data[batch]
                loss = _batch_loss(torch, tensors, rows, labels[batch], settings, rng)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                total += float(loss.detach()) * len(batch)
            history.append(total / len(z))
    fitted = {k: v.detach().numpy().astype(np.float64) for k, v in tensors.items()}
    bad = [name for name, value in fitted.items() if not np.isfinite(value).all()]
    if bad:  # NaN facets flag nothing: every state would be called safe
        raise BackendError(
            f"safety polytope training diverged: its {', '.join(bad)} hold NaN or inf after "
            f"{settings.max_epochs} epoch(s) (mean loss per epoch {history[-3:]}); lower "
            "learning_rate or margin, or standardize the activations"
        )
    return fitted, history


def _initial_parameters(
    d: int, settings: TrainingSettings, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Facets N(0, 1/m) (m the feature width) and offsets N(0, 1); the authors draw the
    normals from N(0, 1), which on standardised inputs puts every facet value at scale sqrt(m),
    far beyond a unit margin. Concept encoder: Xavier-uniform weights, zero bias."""
    width = d if settings.encoder == "linear" else settings.n_concepts
    params = {
        "normals": rng.normal(0.0, 1.0 / math.sqrt(width), size=(settings.n_facets, width)),
        "offsets": rng.normal(0.0, 1.0, size=settings.n_facets),
    }
    if settings.encoder == "concept":
        bound = math.sqrt(6.0 / (d + settings.n_concepts))
        params["encoder_weight"] = rng.uniform(-bound, bound, size=(settings.n_concepts, d))
        params["encoder_bias"] = np.zeros(settings.n_concepts)
    return params


def _data_driven_facets(params, z, unsafe, settings: TrainingSettings, rng) -> None:
    """Start each facet between the safe mean and one k-means cluster of the unsafe samples
    (in encoder-feature space): normal along the difference of the means, scaled so that the
    facet value is -margin at the safe mean and +margin at the cluster mean.

    With random normals some facets start where no unsafe sample ever picks them and two true
    constraints end up shared by one facet; clusters of the unsafe samples give each facet its
    own group to separate from the start.
    """
    from sklearn.cluster import KMeans

    features = _numpy_features(params, z)
    safe_mean = features[~unsafe].mean(axis=0)
    harmful = features[unsafe]
    # distinct rows: k-means leaves clusters empty (their mean NaN) when unsafe rows repeat
    n_clusters = min(settings.n_facets, len(np.unique(harmful, axis=0)))
    seed = int(rng.integers(2**31 - 1))
    labels = KMeans(n_clusters, n_init=1, random_state=seed).fit_predict(harmful)
    for k in range(settings.n_facets):
        # with fewer clusters than facets the spare facets start as copies of the clustered
        # ones: a random start would flag most safe rows until training moves it away
        members = labels == k % n_clusters
        if not members.any():
            continue
        gap = harmful[members].mean(axis=0) - safe_mean
        length = float(np.linalg.norm(gap))
        if length <= 1e-12:
            continue
        normal = 2.0 * settings.margin * gap / length**2
        params["normals"][k] = normal
        params["offsets"][k] = float(normal @ (safe_mean + 0.5 * gap))


def _numpy_features(params, z: np.ndarray) -> np.ndarray:
    if "encoder_weight" not in params:
        return z
    return np.maximum(z @ params["encoder_weight"].T + params["encoder_bias"], 0.0)


def _batch_loss(torch, tensors, z, unsafe: np.ndarray, settings: TrainingSettings, rng):
    if "encoder_weight" in tensors:
        features = torch.relu(z @ tensors["encoder_weight"].T + tensors["encoder_bias"])
    else:
        features = z
    values = features @ tensors["normals"].T - tensors["offsets"]
    # the rows of each class by index_select: values[mask]'s rows, whose backward (index_add)
    # costs a fraction of the boolean index's (index_put with accumulation) on the CPU
    safe_rows = torch.from_numpy(np.flatnonzero(~unsafe))
    loss = torch.relu(settings.margin + values.index_select(0, safe_rows)).sum()
    if unsafe.any():
        unsafe_values = values.index_select(0, torch.from_numpy(np.flatnonzero(unsafe)))
        assigned = assign_facets(
            unsafe_values.detach().numpy(),
            reassign=settings.reassign,
            threshold=settings.violation_threshold,
            rng=rng,
        )
        # unsafe_values[i, assigned[i]] for every row i
        chosen = unsafe_values.gather(1, torch.from_numpy(assigned)[:, None])[:, 0]
        loss = loss + settings.unsafe_weight * torch.relu(settings.margin - chosen).sum()
    loss = loss / len(z)
    if "encoder_weight" in tensors and settings.concept_l1 > 0:
        loss = loss + settings.concept_l1 * features.abs().sum(dim=1).mean()
    if settings.facet_l1 > 0:
        loss = loss + settings.facet_l1 * tensors["normals"].abs().sum(dim=1).mean()
    if settings.facet_l2 > 0:
        loss = loss + settings.facet_l2 * tensors["normals"].pow(2).sum(dim=1).mean()
    return loss


def assign_facets(
    values: np.ndarray, *, reassign: bool, threshold: float, rng: np.random.Generator
) -> np.ndarray:
    """The facet each unsafe sample must violate: argmax, then the entropy heuristic.

    The trials keep the facet counts up to date instead of counting a copy of the assignments
    each time, and reuse each row's facet order and each histogram's entropy once computed:
    the same entropies (the same function of the same counts) and the same draws from ``rng``,
    so the same assignments, for a fraction of the work (this runs at every minibatch).
    """
    assigned = np.argmax(values, axis=1)
    n_facets = values.shape[1]
    if not reassign or n_facets < 2:
        return assigned
    target = 0.5 * math.log2(n_facets)
    counts = np.bincount(assigned, minlength=n_facets)
    entropy = _counts_entropy(counts)
    if entropy >= target:
        return assigned
    counts = counts.tolist()
    seen = {tuple(counts): entropy}  # histogram -> its entropy
    candidates: dict[int, tuple[list[int], list[int]]] = {}  # row -> (order, violated)
    for _ in range(_REASSIGN_TRIES):
        i = int(rng.integers(len(assigned)))
        if i not in candidates:
            order = np.argsort(-values[i], kind="stable")
            candidates[i] = order.tolist(), order[values[i, order] > threshold].tolist()
        order, violated = candidates[i]
        current = int(assigned[i])
        others = [k for k in violated if k != current] if len(violated) > 1 else order[1:2]
        if not others:
            continue
        # others[rng.integers(len(others))]: rng.choice(others)'s draw and value, without its
        # checks, which cost more than the rest of a trial
        chosen = others[int(rng.integers(len(others)))]
        counts[current] -= 1
        counts[chosen] += 1
        key = tuple(counts)
        trial_entropy = seen.get(key)
        if trial_entropy is None:
            trial_entropy = seen[key] = _counts_entropy(np.array(key, dtype=np.int64))
        if trial_entropy > entropy:
            assigned[i], entropy = chosen, trial_entropy
        else:  # the move is not kept
            counts[chosen] -= 1
            counts[current] += 1
    return assigned


def _assignment_entropy(assigned: np.ndarray, n_facets: int) -> float:
    """Base-2 Shannon entropy of the histogram of assigned facets."""
    return _counts_entropy(np.bincount(assigned, minlength=n_facets))


def _counts_entropy(counts: np.ndarray) -> float:
    """Base-2 Shannon entropy of a histogram of facet counts."""
    counts = counts.astype(np.float64)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum())
