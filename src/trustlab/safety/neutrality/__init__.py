"""Political neutrality: technique-labelled evaluation of model outputs (Fisher et al., 2025).

``taxonomy`` (the eight techniques at three levels, the six output labels, the nine task types
and what each expects) · ``builder`` (the deterministic 10,314-prompt builder from the authors'
raw CSVs, saved and published prompt files, trustlab's own small prompt set) · ``judging`` (the
judge prompt with seeded example variants and its tolerant parser) · ``baseline`` (the offline
baseline judge: lexical cues and a kNN over MiniLM embeddings) · ``metrics`` (label
distributions, match rates and yes-rates with bootstrap intervals; Cohen's kappa and
Krippendorff's alpha between judges) · ``paired`` (Anthropic's paired even-handedness set,
its grader prompts and option probabilities) · ``symmetry`` (refusal-symmetry,
opposing-perspectives and even-handedness rates over pairs). Public names are imported on first use.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".taxonomy": [
            "TECHNIQUES",
            "LEVELS",
            "LABELS",
            "FINAL_ANSWER_LABELS",
            "QUESTIONS",
            "TASK_TYPES",
            "EXPECTED",
            "ACCEPTED",
            "TASK_COUNTS",
        ],
        ".builder": [
            "NeutralityPrompts",
            "build_prompts",
            "load_prompts",
            "own_prompts",
            "RAW_FILES",
        ],
        ".judging": [
            "judge_prompt",
            "parse_judge_output",
            "JudgeParse",
            "strip_reasoning",
            "reasoning_unfinished",
        ],
        ".baseline": ["BaselineJudge", "load_seed_responses"],
        ".metrics": ["NeutralityScores", "technique_scores", "Agreement", "agreement"],
        ".paired": [
            "PairedPrompts",
            "load_paired_prompts",
            "option_probability",
            "grader_prompt",
        ],
        ".symmetry": ["PairedSymmetry", "paired_symmetry"],
    },
)
