"""The misuse harness: tasks per second with the deterministic stubs (the harness's own cost per
task: three arms, their model calls, the checks and the log) and with SmolLM2 (model calls per
task).

- stubs, text suite (12 tasks; cheap checks): the harness overhead per task, manual and auto;
- stubs, code suite (a sample of 40 HumanEval tasks): adds the HumanEval runs in subprocesses
  and Bandit;
- SmolLM2-135M-Instruct as both S (under its policy) and W, 4 text tasks, 48 new tokens.

There is no peer that runs this protocol (PyRIT, garak and promptfoo attack one target model),
so the figure is absolute: milliseconds per task against the 50 ms target for the stubs.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_misuse.py
"""

from __future__ import annotations

import tempfile
import time


def main() -> None:
    from inspect_ai import eval as inspect_eval

    import trustlab.evals.misuse_stubs  # noqa: F401  (registers trustlab-stub/...)
    from trustlab.evals import use_local_model
    from trustlab.evals.misuse import misuse
    from trustlab.llm import load_model

    stubs = {"strong": "trustlab-stub/strong", "weak": "trustlab-stub/weak"}
    logs = tempfile.mkdtemp()

    def run(roles, **task_args):
        start = time.perf_counter()
        (log,) = inspect_eval(
            misuse(**task_args), model=roles["weak"], model_roles=roles, display="none",
            log_dir=logs,
        )  # fmt: skip
        assert log.status == "success", log.error
        seconds = time.perf_counter() - start
        calls = sum(sum(e.event == "model" for e in s.events) for s in log.samples) / len(
            log.samples
        )
        return len(log.samples), seconds, calls

    run(stubs, suite="text", n=2)  # warm-up: imports, the stubs' index
    print("misuse harness (inspect_ai), per task: three arms, their calls, checks, the log")
    for label, args in (
        ("stubs, text suite, manual", {"suite": "text"}),
        ("stubs, text suite, auto k=3", {"suite": "text", "decomposer": "auto"}),
        ("stubs, code suite (40), manual", {"suite": "code", "n": 40}),
        ("stubs, code suite (40), auto k=3", {"suite": "code", "n": 40, "decomposer": "auto"}),
    ):
        n, seconds, calls = run(stubs, **args)
        print(f"  {label:34s} {n / seconds:7.1f} tasks/s  {1000 * seconds / n:6.1f} ms/task  "
              f"{calls:.0f} calls/task")  # fmt: skip

    lm = load_model("smollm2-135m-instruct")
    name = f"trustlab/{use_local_model(lm)}"
    smol = {"strong": name, "weak": name}
    for decomposer in ("manual", "auto"):
        n, seconds, calls = run(smol, suite="text", n=4, decomposer=decomposer, max_tokens=48)
        print(f"  SmolLM2 as S and W, 4 text tasks, {decomposer:6s}: {n / seconds:5.2f} tasks/s  "
              f"{seconds / n:5.1f} s/task  {calls:.0f} calls/task")  # fmt: skip


if __name__ == "__main__":
    main()
