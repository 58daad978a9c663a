"""Sparse autoencoders on a language model's residual stream (Paulo et al., ICML 2025, build on
them): ``model`` (TopK and ReLU + L1 SAEs in torch, unit-norm decoder rows, dead-latent
resampling, saved as sae_lens reads them) · ``corpus`` (offline training text) · ``activations``
(the model activations an SAE trains on) · ``cache`` (where each latent fires over a corpus,
sparse and checkpointed) · ``examples`` (one latent's windows by activation quantile, for its
explainer and scorers) · ``explain`` (the explainer's prompt, last-marker parsing, a template
baseline) · ``scoring`` (detection and fuzzing scores with bootstrap intervals) · ``ranking``
(embedding and surprisal scores: AUROC with bootstrap intervals) · ``intervention`` (raising one
latent, and the strength calibration of intervention scoring) · ``effects`` (what raising a
latent makes the model say, explanations of it, and the intervention score) · ``report`` (one
run's scores, controls and contexts).

Public names are imported on first use.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".model": ["SparseAutoencoder", "SAEFit", "load_sae"],
        ".corpus": [
            "pydoc_texts",
            "stdlib_texts",
            "book_texts",
            "docstring_texts",
            "offline_corpus",
            "offline_corpus_folder",
            "OFFLINE_SOURCES",
        ],
        ".activations": ["sae_activations"],
        ".cache": ["LatentCache", "cache_latents", "load_latent_cache"],
        ".examples": ["Example", "LatentExamples", "latent_examples"],
        ".explain": [
            "LatentExplanation",
            "explain_latent",
            "explanation_prompt",
            "parse_explanation",
            "template_explanation",
            "highlight",
        ],
        ".scoring": ["ClassificationScore", "detection_score", "fuzzing_score"],
        ".ranking": ["RankingScore", "embedding_score", "surprisal_score"],
        ".report": ["SAEReport", "sae_report"],
        ".intervention": [
            "Calibration",
            "calibrate_strength",
            "intervention_kl",
            "kl_curve",
            "intervention_prompts",
        ],
        ".effects": [
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
