"""LLM evaluations on inspect_ai: trustlab as an inspect extension.

trustlab's evaluations are inspect ``Task`` objects; trustlab adds what inspect lacks for them:

- ``provider``: the ``trustlab`` model provider (``--model trustlab/smollm2-135m-instruct``), local
  models through :mod:`trustlab.llm` with batched forward passes, and :func:`use_local_model`;
- ``registry``: the registry of trustlab's tasks (:func:`tasks`, :func:`register_task`) and a small
  demo task;
- ``run``: :func:`run_eval`, ``inspect_ai.eval`` with resumption of interrupted runs and errored
  evals reported as errors (:class:`EvalRun`);
- ``logs``: :func:`read_logs`, eval logs as a trustlab result (:class:`EvalLogs`), and the report
  hooks through which a task adds its own tables (:func:`register_report_hook`).

inspect_ai (the ``evals`` extra) is imported only when one of these is used.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".provider": ["TrustlabModelAPI", "use_local_model"],
        ".registry": ["tasks", "register_task", "TaskList"],
        ".run": ["run_eval", "EvalRun"],
        ".logs": [
            "read_logs",
            "EvalLogs",
            "register_report_hook",
            "ReportTable",
            "ReportText",
            "ReportFigure",
        ],
    },
)
