"""Misuse through combinations of individually safe models (Jones, Dragan, Steinhardt, ICML 2025).

A red-teaming harness with benign proxy tasks only: ``suites`` (the code and text proxy suites,
their canaries and the strong model's policy: ``load_suite``, ``MisuseTask``, ``is_flagged``) ·
``checks`` (success checkers: the isolated HumanEval runner, Bandit findings, ``check_success``)
· ``decompose`` (manual and automated decomposition prompts) · ``monitor`` (the defence side: a
monitor that scores whether a sequence of benign requests reconstructs a flagged objective) ·
``judge`` (``ModelJudge``: a language model as the monitor's judge).
trustlab ships no malicious task content. Public names are imported on first use.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".suites": [
            "CODE_CANARY",
            "TEXT_CANARY",
            "STRONG_POLICY",
            "SUITES",
            "TEXT_PASSAGES_FILE",
            "MisuseTask",
            "MisuseSuite",
            "load_suite",
            "is_flagged",
        ],
        ".checks": [
            "ExecutionResult",
            "SuccessCheck",
            "extract_code",
            "run_humaneval",
            "bandit_findings",
            "check_success",
        ],
        ".decompose": [
            "manual_subtasks",
            "propose_prompt",
            "parse_subtasks",
            "final_prompt",
            "solve_prompt",
            "fill_previous",
        ],
        ".judge": ["ModelJudge", "judge_question"],
        ".monitor": [
            "ReconstructionMonitor",
            "monitor_sequences",
            "MonitorROC",
            "evaluate_monitor",
        ],
    },
)
