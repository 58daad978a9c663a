"""Safety of language models. ``trustlab.safety.polytope``: SaP, a learned safety polytope over a
model's hidden states that detects unsafe states, explains them by facet and corrects them
during generation; ``trustlab.safety.prompts``: harmful and benign prompt sets that work offline.

Public names are imported from their module on first use, so ``import trustlab.safety`` stays
cheap (no torch, no model runtime).
"""

from __future__ import annotations

from trustlab._lazy import lazy_getattr

# public name -> the module that defines it
_LAZY = {
    "SafetyPolytope": "trustlab.safety.polytope",
    "Projection": "trustlab.safety.polytope",
    "FacetReport": "trustlab.safety.polytope",
    "load_safety_prompts": "trustlab.safety.prompts",
    "SafetyPrompts": "trustlab.safety.prompts",
    "refusal_judge": "trustlab.safety._polytope_llm",
    "prompt_activations": "trustlab.safety._polytope_llm",
    "evaluate_polytope": "trustlab.safety._polytope_eval",
    "benign_perplexity": "trustlab.safety._polytope_eval",
    "PolytopeEvaluation": "trustlab.safety._polytope_eval",
    "SteeredGeneration": "trustlab.safety._polytope_llm",
    "safe_flow": "trustlab.safety._polytope_llm",
}

__all__ = list(_LAZY)

__getattr__ = lazy_getattr("trustlab.safety", _LAZY)
