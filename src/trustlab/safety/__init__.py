"""Safety of language models. ``trustlab.safety.polytope``: SaP, a learned safety polytope over a
model's hidden states that detects unsafe states and explains them by facet, with three
corrections during generation (Safe Flow's exact projection, a refusal gate, steering along the
model's own refusal direction) and honest detection numbers (cross-validated selection, bootstrap
intervals); ``trustlab.safety.prompts``: harmful and benign prompt sets that work offline;
``trustlab.safety.refusal``: the keyword judge of refusals; ``trustlab.safety.context``:
CASE-Bench, context-aware safety judging and human-agreement statistics;
``trustlab.safety.neutrality``: political neutrality, technique-labelled evaluation;
``trustlab.safety.misuse``: misuse through model combinations (benign proxy suites, checkers,
decomposition, the defence-side monitor). The last two are imported from their packages.

Public names are imported from their module on first use, so ``import trustlab.safety`` stays
cheap (no torch, no model runtime).
"""

from __future__ import annotations

from trustlab._lazy import lazy_names
from trustlab.safety.context import __all__ as _CONTEXT_NAMES  # cheap: that package is lazy
from trustlab.safety.polytope import __all__ as _POLYTOPE_NAMES  # cheap: that package is lazy

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".polytope": _POLYTOPE_NAMES,
        ".context": _CONTEXT_NAMES,
        ".prompts": ["load_safety_prompts", "SafetyPrompts"],
        ".refusal": ["refusal_judge"],
    },
)
