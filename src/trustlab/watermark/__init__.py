"""Watermarked-image understanding at CPU scale (WMarkGPT, Tan et al., ICML 2025).

The parts: ``vocabulary`` (scores, levels, cells, the structured facts), ``synth`` with ``marks``
and ``covers`` (the deterministic generator: WMarkGPT's blend recipe and real invisible marks),
``nr`` (the no-reference predictor) and ``checkpoints`` (the shipped one), ``describer`` (the
deterministic describer and its independent parser), ``metrics`` (BLEU-1, ROUGE-L, level accuracy,
SRCC/PLCC as WMarkGPT scored them, defects fixed), ``evaluation`` (the predictor's check-3
numbers with controls), ``backends`` (the template backend, the Q-Align readout, a transformers vision-language model),
``wmarkgpt`` (WMarkGPT itself, through the authors' code) and ``export`` (WMarkGPT's stage
datasets, Position-lite).

Names are imported on first use.

References
----------
Tan, S., Qiu, J., Shu, Y., Xu, Y., Xu, Z., Xu, Y., Zhuang, Z., Li, Y., Yu, Z. (2025). WMarkGPT:
Watermarked Image Understanding via Multimodal Large Language Models. ICML 2025.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".vocabulary": [
            "LEVELS",
            "LEVEL_SCORES",
            "CELLS",
            "ORIENTATIONS",
            "RELATIONS",
            "CONTENT_TYPES",
            "MAX_OPACITY",
            "level_of_score",
            "level_index",
            "score_of_opacity",
            "score_of_level_probabilities",
            "cell_of_point",
            "cell_of_box",
            "orientation_of_mask",
            "ISOTROPIC_RATIO",
            "WatermarkFacts",
            "ObjectRelation",
        ],
        ".synth": [
            "INVISIBLE_KINDS",
            "KINDS",
            "DEFAULT_STRENGTHS",
            "WatermarkDataset",
            "synthesize",
            "load_watermark_dataset",
        ],
        ".marks": [
            "VISIBLE_KINDS",
            "PAYLOAD_BITS",
            "BLIND_PASSWORDS",
            "PSNR_LEVEL_BINS",
            "blend",
            "trimmed_box",
            "principal_angle",
            "relation_of_boxes",
            "score_of_psnr",
            "embed_invisible",
            "decode_invisible",
        ],
        ".export": [
            "POSITION_QUESTIONS",
            "STAGES",
            "PositionLite",
            "StageExport",
            "position_label",
            "position_lite",
            "export_stages",
        ],
        ".nr": ["WatermarkPredictor", "WatermarkPredictions", "WatermarkTrainingHistory"],
        ".evaluation": [
            "PredictorEvaluation",
            "GlobalStatisticsBaseline",
            "evaluate_predictions",
            "BackendEvaluation",
            "evaluate_backend",
            "reference_paragraphs",
        ],
        ".backends": [
            "WatermarkBackend",
            "TemplateBackend",
            "HFVisionLanguageBackend",
            "READOUT_PROMPT",
            "expected_score",
        ],
        ".wmarkgpt": ["WMarkGPTBackend"],
        ".metrics": [
            "END_TOKENS",
            "PARSE_MODES",
            "bleu1",
            "rouge_l",
            "clean_text",
            "parse_level",
            "level_accuracy",
            "srcc_plcc",
            "DescriptionScores",
            "score_descriptions",
            "VisibilityScores",
            "score_visibility",
        ],
        ".describer": [
            "QUESTIONS",
            "QUESTIONS_SOURCE",
            "IMPACTS",
            "FINAL_SENTENCE",
            "impact_level",
            "describe",
            "ParsedDescription",
            "parse_description",
        ],
    },
)
