"""Safety of language models. ``trustlab.safety.polytope``: SaP, a learned safety polytope over a
model's hidden states that detects unsafe states, explains them by facet and corrects them
during generation; ``trustlab.safety.prompts``: harmful and benign prompt sets that work offline.

Public names are imported from their module on first use, so ``import trustlab.safety`` stays
cheap (no torch, no model runtime).
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".polytope": ["SafetyPolytope", "Projection", "FacetReport"],
        ".prompts": ["load_safety_prompts", "SafetyPrompts"],
        "._polytope_llm": ["refusal_judge", "prompt_activations", "SteeredGeneration", "safe_flow"],
        "._polytope_eval": ["evaluate_polytope", "benign_perplexity", "PolytopeEvaluation"],
    },
)
