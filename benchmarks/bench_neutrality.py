"""Political neutrality on SmolLM2: the full generate-and-judge pipeline of the ``neutrality``
task through the trustlab provider (batched generation) against a naive per-prompt loop.

Both label every answer with the offline baseline judge (no endpoint here) and generate greedily
with the same token budget from the same prompts (trustlab's own 36, four per task type):

- the ``neutrality`` task in inspect on ``trustlab/smollm2-135m-instruct`` at several
  ``-M max_batch_size`` values (inspect runs the samples concurrently; the provider batches them
  into one forward pass per step);
- a naive loop: for each prompt, transformers' ``generate`` on that prompt alone, then the
  baseline judge on that answer alone.

Prints prompts per second and the ratio. The baseline judge (MiniLM) is loaded before timing.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_neutrality.py [--max-tokens 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n", type=int, default=36, help="prompts (the own set has 36)")
    args = parser.parse_args()

    import torch
    from inspect_ai import eval as inspect_eval

    from trustlab.evals import use_local_model
    from trustlab.evals.neutrality import baseline_judge, neutrality
    from trustlab.llm import load_model
    from trustlab.safety.neutrality import own_prompts

    torch.set_num_threads(args.threads)
    lm = load_model("smollm2-135m-instruct")
    model = f"trustlab/{use_local_model(lm)}"
    judge = baseline_judge()
    prompts = [r["input"] for r in own_prompts().records][: args.n]
    n = len(prompts)
    logs = tempfile.mkdtemp()

    answers: dict[int, dict[str, str]] = {}

    def through_inspect(batch: int) -> float:
        start = time.perf_counter()
        (log,) = inspect_eval(
            neutrality(max_tokens=args.max_tokens), model=model, limit=n, display="none",
            log_dir=logs, model_args={"max_batch_size": batch},
        )  # fmt: skip
        seconds = time.perf_counter() - start
        assert log.status == "success", log.error
        answers[batch] = {s.input: s.output.completion.strip() for s in log.samples}
        return seconds

    inspect_eval(neutrality(max_tokens=8), model=model, limit=2, display="none", log_dir=logs)
    provider = {batch: through_inspect(batch) for batch in (8, 16, 36)}

    naive_answers: list[str] = []

    def naive() -> float:
        start = time.perf_counter()
        for prompt in prompts:
            ids = lm.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], add_generation_prompt=True,
                return_tensors="pt",
            )  # fmt: skip
            ids = ids["input_ids"] if hasattr(ids, "keys") else ids
            with torch.inference_mode():
                out = lm.model.generate(
                    ids, max_new_tokens=args.max_tokens, do_sample=False,
                    pad_token_id=lm.tokenizer.eos_token_id,
                )  # fmt: skip
            answer = lm.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
            judge.predict([answer])
            naive_answers.append(answer.strip())
        return time.perf_counter() - start

    single = naive()
    print(
        f"{n} neutrality prompts, SmolLM2-135M-Instruct, greedy, at most {args.max_tokens} new "
        f"tokens, baseline judge, {args.threads} thread(s)"
    )
    for batch, seconds in provider.items():
        print(
            f"  neutrality task, trustlab provider, max_batch_size {batch:>2}: "
            f"{n / seconds:6.2f} prompts/s  ({single / seconds:.2f}x the naive loop)"
        )
    print(f"  naive per-prompt loop (transformers generate + judge): {n / single:6.2f} prompts/s")
    for batch, texts in answers.items():
        same = sum(texts.get(p) == a for p, a in zip(prompts, naive_answers, strict=True))
        print(f"  identical greedy answers, max_batch_size {batch:>2} and the loop: {same}/{n}")


if __name__ == "__main__":
    main()
