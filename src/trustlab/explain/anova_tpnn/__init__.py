"""ANOVA-TPNN: an interpretable network with a unique functional ANOVA decomposition.

The model (Park, Kong, Choi, Park, Kim, ICML 2025) is a functional ANOVA model

    f(x) = beta_0 + sum_j g_j(x_j) + sum_{j<l} g_jl(x_j, x_l) (+ higher orders, if asked)

whose components are tensor products of sigmoid basis neurons,

    g_S(x_S) = sum_k beta_{S,k} prod_{j in S} phi(x_j | b_{S,k,j}, gamma_{S,k,j}),
    phi(x | b, gamma) = sigma(-(x - b)/gamma) + c sigma((x - b)/gamma),
    c = -sum_i sigma(-(x_ij - b)/gamma) / sum_i sigma((x_ij - b)/gamma),

so that every neuron sums to zero over the training values of its feature. A product of such
neurons then sums to zero over the training values of each of its variables whatever the other
variables are: the components satisfy the sum-to-zero conditions of the functional ANOVA under
the product of the empirical marginals, which makes the decomposition unique. The plots of the
components that carry signal therefore agree across seeds (measured; across resamples of the data
it is the paper's claim, not measured here), unlike those of neural additive models, whose pairs
can absorb parts of the main effects. Weak components, and small tables, still vary by seed.

What trustlab does beyond the authors' code:

- the constants c are recomputed on the full training data after training (the authors keep the
  last minibatch's values), in float64, so the conditions hold to rounding error;
- an explicit intercept beta_0; multiclass classification (one output per class, softmax; the
  components are also centred across classes, which leaves the probabilities unchanged);
- categorical features get a categorical neuron ``phi(x) = w[x] - mean_i w[x_i]`` (a learned
  value per level, centred over the data), which satisfies the same condition; a level unseen in
  training contributes 0;
- pairs can be chosen automatically (``interactions="auto"``) by a FAST-like screen.

Training follows the authors: inputs mapped by a uniform quantile transform to [-1, 1]
(categorical features are left to their neuron), data-aware initialisation, the constants taken
on each minibatch during training and differentiated through, Adam with betas (0.95, 0.998),
the best checkpoint on a validation split (early stopping; below 61 rows nothing is held out
and the training loss decides). Torch is needed for ``fit`` only; predictions and components
are computed in numpy float64.

The parts: ``_encoding`` (features to network inputs), ``_target`` (task, encoding, validation
split), ``_terms`` (which components: named terms or the pair screen), ``_components`` (a fitted
group of components in numpy), ``_torch`` (the network and its training loop), ``_saving``
(model files), ``results``, ``estimator`` (:class:`ANOVATPNN`) and ``stability``
(:func:`component_stability`).

References
----------
Park, S., Kong, I., Choi, Y., Park, C., Kim, Y. (2025). Tensor Product Neural Networks for
Functional ANOVA Model. ICML 2025, arXiv:2502.15215.
Lengerich, B., Tan, S., Chang, C.-H., Hooker, G., Caruana, R. (2020). Purifying Interaction
Effects with the Functional ANOVA. AISTATS.
"""

from __future__ import annotations

from trustlab.explain.anova_tpnn.estimator import ANOVATPNN
from trustlab.explain.anova_tpnn.results import (
    ANOVATPNNSummary,
    ComponentFigures,
    ComponentGrid,
    ComponentImportance,
    ComponentValues,
    PredictionTable,
)
from trustlab.explain.anova_tpnn.stability import ComponentStability, component_stability

__all__ = [
    "ANOVATPNN",
    "ANOVATPNNSummary",
    "ComponentValues",
    "ComponentImportance",
    "ComponentGrid",
    "ComponentFigures",
    "PredictionTable",
    "ComponentStability",
    "component_stability",
]
