"""FastPD: exact partial dependence, functional decomposition and SHAP for tree ensembles.

FastPD (Liu, Steensgaard, Wright, Pfister, Hiabu, ICML 2025) evaluates the empirical
interventional partial-dependence function of a tree ensemble,

    v_U(x) = (1/n_b) sum_i m(x_U, z_i,-U)        (z_i: the background rows),

for any feature subset U, exactly and in time linear in the number of background and evaluation
rows. From the PD functions come the functional decomposition (Moebius inversion)

    m_S(x) = sum_{V subset of S} (-1)^{|S|-|V|} v_V(x),   sum_S m_S(x) = m(x),

interventional SHAP values phi_j = sum_{S containing j} m_S / |S| and SHAP interaction values.

How it is computed here. A leaf l constrains each feature on its root path to an interval; call
the k_l distinct features on the path the leaf's *slots*. A row satisfies some of those
constraints: its failure set F (a k_l-bit mask). The leaf's share of v_U(x) is
``value_l * P_l(U) * [x satisfies the slots in U]``, where P_l(U) is the fraction of background
rows that satisfy every slot outside U, i.e. whose failure set lies inside U. So each leaf needs
only the histogram h_l of the background failure sets (the augmentation step), a 2^k_l table:

- P_l is the subset sum (zeta transform) of h_l and the Moebius transform of P_l is h_l itself,
  so a leaf contributes ``value_l * (-1)^|S \\ a| * h_l(S & a)`` to m_S(x), where a is the set of
  slots x satisfies;
- the leaf's SHAP value for slot j is ``R'(a) - Q(a \\ j)`` with R', Q zeta transforms of P_l
  weighted by Shapley weights of |U| (and likewise three tables give SHAP interaction values).

Everything is vectorised over all leaves of a block of trees and all rows; the failure masks of
all rows at all leaves come from one level-by-level pass over the nodes. Cost: O(n_nodes * n)
for routing, O(sum_l 2^k_l) for the tables, O(n_leaves * k * n) for SHAP values: linear in the
number of background and evaluation rows, exponential only in the number of distinct features
on one root-to-leaf path (at most the tree depth).

The parts: ``_ensemble`` (the internal tree form), ``_sklearn_trees`` / ``_boosters`` (adapters
from scikit-learn, xgboost, LightGBM), ``_trees`` (choosing the adapter, checking it against the
model), ``_subsets`` (subset transforms and Shapley weights), ``_kernel`` (a block of trees:
routing and leaf tables), ``_engine`` (all blocks: tables, weights, sums), ``results``,
``_pipeline`` (Pipelines explained through their transform), ``explainer`` (:class:`FastPD`),
``plots`` and ``table`` (:func:`plan_table`, :func:`explain_table`).

References
----------
Liu, J., Steensgaard, T., Wright, M. N., Pfister, N., Hiabu, M. (2025). Fast estimation of
partial dependence functions using trees. ICML 2025, arXiv:2410.13448.
Hiabu, M., Meyer, J. T., Wright, M. N. (2023). Unifying local and global model explanations by
functional decomposition of low dimensional structures. AISTATS.
"""

from __future__ import annotations

from trustlab.explain.fastpd._pipeline import split_pipeline, transform_rows, transformed_names
from trustlab.explain.fastpd.explainer import FastPD
from trustlab.explain.fastpd.plots import plot_shap_summary
from trustlab.explain.fastpd.results import (
    Decomposition,
    Explanation,
    Importance,
    PartialDependence,
)
from trustlab.explain.fastpd.table import TablePlan, explain_table, plan_table

__all__ = [
    "FastPD",
    "Decomposition",
    "PartialDependence",
    "Importance",
    "Explanation",
    "explain_table",
    "plan_table",
    "TablePlan",
    "plot_shap_summary",
    "split_pipeline",
    "transform_rows",
    "transformed_names",
]
