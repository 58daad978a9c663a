"""Interpretability of language-model internals: ``trustlab.interpret.sae`` (sparse
autoencoders on a model's residual stream, trained and saved in a format sae_lens reads).

Public names are imported from their package on first use, so ``import trustlab.interpret``
stays cheap (torch is imported only when an SAE is trained or applied).
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# package -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".sae": [
            "SparseAutoencoder",
            "SAEFit",
            "load_sae",
            "sae_activations",
            "pydoc_texts",
            "stdlib_texts",
            "book_texts",
            "docstring_texts",
            "offline_corpus",
            "offline_corpus_folder",
            "OFFLINE_SOURCES",
            "LatentCache",
            "cache_latents",
            "load_latent_cache",
            "Example",
            "LatentExamples",
            "latent_examples",
            "LatentExplanation",
            "explain_latent",
            "explanation_prompt",
            "parse_explanation",
            "template_explanation",
            "highlight",
            "ClassificationScore",
            "detection_score",
            "fuzzing_score",
            "RankingScore",
            "embedding_score",
            "surprisal_score",
            "SAEReport",
            "sae_report",
            "Calibration",
            "calibrate_strength",
            "intervention_kl",
            "kl_curve",
            "intervention_prompts",
            "OutputEffects",
            "output_effects",
            "explain_effects",
            "effects_template",
            "intervened_generations",
            "InterventionScore",
            "intervention_score",
        ],
    },
)
