"""Safety of language models. ``trustlab.safety.polytope``: SaP, a learned safety polytope over a
model's hidden states that detects unsafe states, explains them by facet and corrects them
during generation; ``trustlab.safety.prompts``: harmful and benign prompt sets that work offline;
``trustlab.safety.refusal``: the keyword judge of refusals.

Public names are imported from their module on first use, so ``import trustlab.safety`` stays
cheap (no torch, no model runtime).
"""

from __future__ import annotations

from trustlab._lazy import lazy_names
from trustlab.safety.polytope import __all__ as _POLYTOPE_NAMES  # cheap: that package is lazy

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".polytope": _POLYTOPE_NAMES,
        ".prompts": ["load_safety_prompts", "SafetyPrompts"],
        ".refusal": ["refusal_judge"],
    },
)
