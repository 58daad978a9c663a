"""CASE-Bench: context-aware safety judging and the statistics of human judgments.

``data`` (the authors' record format validated against the contextual-integrity schema,
output files, context ablation) · ``synthetic`` (a shipped synthetic set in the same format;
CASE-Bench itself has no licence and never ships) · ``judging`` (the prompts and parsers of the
three modes: binary, score, logits) · ``metrics`` (``context_scores``, ``score_outputs``,
``ContextScores``) · ``human`` (``human_statistics``). Public names are imported on first use.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".data": [
            "CI_GROUPS",
            "CI_KEYS",
            "VOTES_PER_ITEM",
            "FORCED_UNSAFE",
            "CaseBench",
            "load_casebench",
            "load_casebench_outputs",
            "ablate_context",
        ],
        ".synthetic": [
            "SYNTHETIC_FILE",
            "make_synthetic_casebench",
            "synthetic_casebench",
            "make_synthetic_outputs",
        ],
        ".judging": ["MODES", "judge_prompt", "parse_judgement", "safe_probability"],
        ".metrics": ["ContextScores", "context_scores", "score_outputs"],
        ".human": ["HumanStatistics", "human_statistics"],
    },
)
