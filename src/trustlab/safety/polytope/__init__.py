"""SaP, the safety polytope: detect and correct unsafe states in a language model's representation.

A convex polytope is learned in (an encoding of) a model's hidden states: a state is *safe* iff
it satisfies every facet constraint ``c_k(h) = phi_k' f(h) - xi_k <= 0``, and each facet tends to
specialise to one kind of harm (Chen, As, Krause, ICML 2025). ``f`` is the identity on the
standardised activations (``encoder="linear"``) or a one-layer ReLU concept encoder
(``encoder="concept"``). Detection needs only the facet values; correction moves a flagged state
to the nearest point of the polytope (``SafetyPolytope.project``).

Conventions of this implementation:

- **unsafe is the positive class**: ``is_unsafe`` is True iff some ``c_k > 0``;
  ``decision_function`` = ``max_k c_k`` is the score for AUROC (the authors' metrics treat *safe*
  as positive and their probability output is all zeros);
- activations are standardised with the training mean and standard deviation
  (``standardize=True``) so that one margin works across models; the facets can be read back in
  the raw activation space (``coef_``, ``intercept_`` for the linear encoder);
- the entropy term of the paper's loss has zero gradient (it is computed from integer facet
  assignments); it is not put in the loss, only the reassignment heuristic acts on it;
- the projection is exact for the linear encoder (a certified quadratic program; L1 as a
  linear program) and iterates to feasibility for the concept encoder, reporting whether it got
  there (the authors take one gradient step per token);
- a polytope carries the model ``layer`` it was fitted at, and generation corrects the output
  of that same decoder layer (``trustlab.llm`` layer L = ``hidden_states[L + 1]``): the authors
  read block 19 and steer after block 20.

The parts, one idea each:

- :mod:`.estimator`: :class:`SafetyPolytope` (fit, detection, projection, facet report, storage);
- :mod:`._train`: the training loop (torch);
- :mod:`._inputs`: the checks of activations, labels and categories (scikit-learn's words);
- :mod:`.projection`: the :class:`Projection` result and the exact L2/L1 and concept solvers;
- :mod:`.results`: :class:`FacetReport`, which facets fire for which category;
- :mod:`.language_model`: reading a model's states (of prompts, and of each generated token:
  :func:`generation_states`), :func:`fit_on_prompts`;
- :mod:`.steering`: Safe Flow, the refusal gate and refusal-direction steering during
  generation;
- :mod:`.direction`: the model's own refusal direction (:func:`refusal_direction`);
- :mod:`.evaluation`: :func:`evaluate_polytope` and :func:`benign_perplexity`;
- :mod:`.selection`: settings chosen by cross-validation on training data only
  (:func:`select_detector`), the nested comparison with a logistic probe
  (:func:`compare_detectors`) and bootstrap intervals of AUROC (:func:`bootstrap_auroc`).

References
----------
Chen, X., As, Y., Krause, A. (2025). Learning Safety Constraints for Large Language Models.
ICML 2025, arXiv:2505.24445.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines (imported on first use: no torch, no model runtime)
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".estimator": ["SafetyPolytope"],
        ".projection": ["Projection"],
        ".results": ["FacetReport"],
        ".language_model": [
            "PolytopeFit",
            "fit_on_prompts",
            "prompt_activations",
            "generation_states",
            "GenerationStates",
        ],
        ".direction": ["refusal_direction", "RefusalDirection"],
        ".steering": [
            "safe_flow",
            "SafeFlowStats",
            "steered_generate",
            "SteeredGeneration",
            "compare_steering",
            "SteeringComparison",
        ],
        ".options": ["check_correction"],
        ".evaluation": ["evaluate_polytope", "benign_perplexity", "PolytopeEvaluation"],
        ".selection": [
            "select_detector",
            "DetectorSelection",
            "compare_detectors",
            "DetectorComparison",
            "bootstrap_auroc",
            "BootstrapInterval",
        ],
    },
)
