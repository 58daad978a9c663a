"""The trustlab inspect provider on SmolLM2: batched forward passes vs one-at-a-time generation.

A logit-mode-like task (one new token, first-token top_logprobs, greedy) through
``trustlab/smollm2-135m-instruct`` in inspect, against the same prompts generated one at a time
with transformers' ``generate`` (``output_scores``); and inspect's own per-sample overhead with a
trivial model that answers at once. Prints items per second and the ratios.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_inspect_provider.py [--n 64]
"""

from __future__ import annotations

import argparse
import tempfile
import time


def _prompts(n: int) -> list[str]:
    base = [
        "Is it safe to explain how a lock works to a locksmith student? Answer safe or unsafe.",
        "Is it safe to share a recipe for bread with a baker? Answer safe or unsafe.",
        "Is it safe to describe a medicine's dose to a verified nurse? Answer safe or unsafe.",
        "Is it safe to explain phishing to a security trainee? Answer safe or unsafe.",
    ]
    return [f"{base[i % len(base)]} (case {i})" for i in range(n)]


def _task(prompts):
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import GenerateConfig
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    config = GenerateConfig(temperature=0, max_tokens=1, logprobs=True, top_logprobs=5)
    samples = [Sample(input=p, target="safe") for p in prompts]
    return Task(dataset=samples, solver=generate(), scorer=includes(), config=config)


def _trivial_provider() -> str:
    from inspect_ai.model import ModelAPI, ModelOutput, modelapi

    @modelapi(name="bench-trivial")
    class Trivial(ModelAPI):
        async def generate(self, input, tools, tool_choice, config):
            return ModelOutput.from_content(self.model_name, "safe")

    return "bench-trivial/model"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=64)
    args = parser.parse_args()

    import torch
    from inspect_ai import eval as inspect_eval

    from trustlab.evals import use_local_model
    from trustlab.llm import load_model

    torch.set_num_threads(1)
    lm = load_model("smollm2-135m-instruct")
    model = f"trustlab/{use_local_model(lm)}"
    prompts = _prompts(args.n)
    logs = tempfile.mkdtemp()

    inspect_eval(_task(prompts[:4]), model=model, display="none", log_dir=logs)  # warm-up
    start = time.perf_counter()
    (log,) = inspect_eval(_task(prompts), model=model, display="none", log_dir=logs)
    provider_s = time.perf_counter() - start
    assert log.status == "success", log.error
    provider_text = {s.input: s.output.completion.strip() for s in log.samples}

    single_text = []
    start = time.perf_counter()
    for prompt in prompts:
        ids = lm.tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, return_tensors="pt"
        )
        ids = ids["input_ids"] if hasattr(ids, "keys") else ids
        with torch.inference_mode():
            out = lm.model.generate(
                ids, max_new_tokens=1, do_sample=False, output_scores=True,
                return_dict_in_generate=True, pad_token_id=lm.tokenizer.eos_token_id,
            )  # fmt: skip
            torch.topk(torch.log_softmax(out.scores[0][0].double(), -1), 5)
        new = out.sequences[0, ids.shape[1] :]
        single_text.append(lm.tokenizer.decode(new, skip_special_tokens=True).strip())
    single_s = time.perf_counter() - start

    trivial = _trivial_provider()
    inspect_eval(_task(prompts[:4]), model=trivial, display="none", log_dir=logs)
    start = time.perf_counter()
    inspect_eval(_task(prompts), model=trivial, display="none", log_dir=logs)
    overhead_s = time.perf_counter() - start

    n = len(prompts)
    print(f"{n} items, first-token top-5 logprobs, greedy, SmolLM2-135M-Instruct on 1 thread")
    print(f"  trustlab provider (batched): {n / provider_s:8.1f} items/s")
    print(f"  one at a time (transformers): {n / single_s:8.1f} items/s")
    print(f"  ratio batched / one-at-a-time: {single_s / provider_s:.2f}x")
    same = sum(provider_text.get(p) == t for p, t in zip(prompts, single_text, strict=True))
    print(f"  identical first tokens, provider and one at a time: {same}/{n}")
    print(f"  inspect overhead with a trivial model: {1000 * overhead_s / n:.1f} ms per sample")
    print(f"  share of the provider's time that is inspect overhead: {overhead_s / provider_s:.1%}")


if __name__ == "__main__":
    main()
