"""A local causal language model: batched generation, activation capture, hooks and scoring.

Get a :class:`LocalModel` from :func:`~trustlab.llm.load_model`. Layer convention: ``layer=L``
(0-based) is the output of decoder layer ``L``, the residual stream that transformers reports as
``output_hidden_states[L + 1]`` (for the last layer transformers reports the output after the
final norm instead; here it stays the raw layer output, the same tensor that
:meth:`LocalModel.intervene` edits). Reading (:meth:`LocalModel.activations`) and editing
(:meth:`LocalModel.intervene`, :meth:`LocalModel.steer`) go through forward hooks on the decoder
layers that are always removed when the call or the block ends.

torch and transformers are imported only when a model is used.

Why this module is long: one class holds the model with the tokenizer, padding and hook state
that generation, activation capture, interventions, scoring and saving all share; the numpydoc
docstrings and examples make up much of the length.
"""

from __future__ import annotations

import contextlib
import fnmatch
import inspect
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import (
    as_float_array,
    check_bool,
    check_choice,
    check_positive_int,
    check_same_length,
)
from trustlab._lazy import require
from trustlab._progress import check_progress
from trustlab.errors import BackendError, InputError
from trustlab.llm._cache import quiet_transformers
from trustlab.llm._decoding import (
    MIN_SHARED_PREFIX,
    CpuSampler,
    DecodeRequest,
    _eos_set,
    cache_argument,
    decode,
    row_seed,
    shared_prefix,
)
from trustlab.llm._inputs import as_prompts, as_texts, check_stop, check_top_p, samples
from trustlab.llm.completion import Completion, completion_from_steps
from trustlab.llm.settings import (
    check_seed,
    check_steering_scale,
    check_temperature,
    check_top_logprobs,
)

__all__ = ["LocalModel"]

POSITIONS = ("last", "mean", "all")
# what a nan or inf layer output is blamed on: the intervention, a steering scale or an SAE strength
_OVERFLOW = " * vector to stay finite in the layer's output (a float16 model overflows past 65504)"
_NONFINITE = {
    "fn": "a tensor of finite values back",
    "scale": "scale" + _OVERFLOW,
    "strength": "strength" + _OVERFLOW,  # an SAE latent raised by strength * decoder row
}

# Where decoder layers live in the model families transformers ships (first match wins).
_LAYER_PATHS = (("model", "layers"), ("transformer", "h"), ("gpt_neox", "layers"))


class _StopForward(Exception):
    """Raised by a capture hook once the deepest requested layer ran: later layers are not needed."""


class LocalModel:
    """A causal language model on the CPU with batched generation and residual-stream access.

    Get one from :func:`~trustlab.llm.load_model`. ``layer=L`` everywhere is the output of decoder
    layer ``L`` (0-based), i.e. ``output_hidden_states[L + 1]`` of transformers. Its ``name`` and
    :meth:`generate` make it a :class:`~trustlab.llm.LanguageModel`, as a ``RemoteModel`` is.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A causal language model; it is put in eval mode.
    tokenizer : transformers tokenizer
    name : str
        A short name for messages and results.

    Attributes
    ----------
    name : str
    n_layers : int
        Number of decoder layers.
    hidden_size : int
        Width of the residual stream.
    has_chat_template : bool
    model, tokenizer
        The transformers objects.
    """

    def __init__(self, model: Any, tokenizer: Any, *, name: str):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = str(name)
        self._backbone, self._layers = _find_layers(model)
        self.n_layers = len(self._layers)
        self.hidden_size = int(model.config.get_text_config().hidden_size)
        pad = tokenizer.pad_token_id
        if pad is None:
            eos = tokenizer.eos_token_id
            pad = eos[0] if isinstance(eos, (list, tuple)) else eos
        self._pad_id = int(pad if pad is not None else 0)
        eos = getattr(model.generation_config, "eos_token_id", None)
        self._eos_ids = eos if eos is not None else tokenizer.eos_token_id
        # not every architecture can compute logits for the last positions only
        self._keeps_logits = "logits_to_keep" in inspect.signature(model.forward).parameters
        self._token_texts: dict[int, str] = {}  # token id -> its text, for log-probabilities

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    @property
    def eos_token_ids(self) -> frozenset[int]:
        """The token ids :meth:`generate` stops at (the generation config's, else the
        tokenizer's end of sequence; empty where neither names one)."""
        return _eos_set(self._eos_ids)

    def __repr__(self) -> str:
        return (
            f"LocalModel(name={self.name!r}, n_layers={self.n_layers}, "
            f"hidden_size={self.hidden_size}, chat={self.has_chat_template})"
        )

    def save(self, directory: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write the model and its tokenizer as a Hugging Face folder (safetensors weights).

        :func:`~trustlab.llm.load_model` reads the folder back (its name becomes the model's
        name) with the same weights, tokenizer and generation settings.

        Parameters
        ----------
        directory : str or os.PathLike
            Created if needed. A folder that already holds a ``config.json`` is refused unless
            ``overwrite``.
        overwrite : bool, default False
            Replace the model files of an earlier save (weights, configs, tokenizer files, chat
            template) by this model's: a file of the earlier model that this one has no copy of
            (its chat template, say) goes too; other files stay. The new files are written
            next to them first, so a save that fails leaves the earlier model as it was.

        Returns
        -------
        pathlib.Path
            The folder.
        """
        path = Path(directory)
        if path.exists() and not path.is_dir():
            raise InputError.bad("directory", "a folder (or a path to create one)", str(path))
        earlier = (path / "config.json").exists()  # the folder holds a model to replace
        if earlier and not check_bool(overwrite, "overwrite"):
            raise InputError(
                f"directory: {path} already holds a model (config.json); pass overwrite=True to "
                "replace it",
                argument="directory",
            )
        path.mkdir(parents=True, exist_ok=True)
        # written aside first (inside the folder: the same file system for the moves)
        staging = Path(tempfile.mkdtemp(prefix=".saving-", dir=path))
        try:
            with quiet_transformers():
                self.model.save_pretrained(staging, safe_serialization=True)
                self.tokenizer.save_pretrained(staging)
            _replace_model_files(path, staging, earlier=earlier)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return path

    # ---- generation --------------------------------------------------------------------

    def generate(
        self,
        prompts: str | Sequence[str],
        max_new_tokens: int = 64,
        *,
        chat: bool = True,
        temperature: float = 0.0,
        batch_size: int = 8,
        random_state: int | np.random.Generator | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        """Continue each prompt; return only the new text, one string per prompt.

        Prompts run in batches of ``batch_size`` (similar lengths together), left-padded, with
        position ids that skip the padding, so a prompt gets the same greedy text in any batch.

        Parameters
        ----------
        prompts : str or sequence of str
        max_new_tokens : int
            At most this many new tokens; generation stops earlier at the end-of-sequence token.
        chat : bool
            Wrap each prompt as a user turn with the model's chat template (and the generation
            prompt). A model without a template (Gemma-3-270M base) raises InputError: pass
            ``chat=False`` for plain continuation.
        temperature : float
            In [0, 2]. 0 is greedy decoding (deterministic); > 0 samples from the softmax of
            logits / temperature over the whole vocabulary (no top-k or top-p). Below 1e-30
            (where float32 logits / temperature overflow) decoding is greedy, which is what
            sampling at such a temperature gives anyway, bar exactly tied logits.
        batch_size : int
        random_state : None, int or numpy.random.Generator
            Seed for sampling, drawn on the CPU from a private ``torch.Generator`` (torch's global
            random streams, CPU and GPU, are left as they were; a Generator gives one seed). The
            same seed, prompts and batch size give the same text, on any device when the logits
            agree.
        progress : callable, optional
            Called after each batch with ``(prompts done, prompts in all)``.

        Returns
        -------
        list of str

        Examples
        --------
        >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
        >>> lm.generate(["What is the capital of France?"], max_new_tokens=8)  # doctest: +SKIP
        ['The capital of France is Paris.']
        """
        texts = as_texts(prompts)
        check_positive_int(max_new_tokens, "max_new_tokens")
        check_positive_int(batch_size, "batch_size")
        temperature = check_temperature(temperature)
        seed = check_seed(random_state)
        check_progress(progress)  # it is called only after the first batch
        ids = self._encode(texts, chat)
        torch = require("torch", "llm")
        from transformers import GenerationConfig, LogitsProcessorList

        # sampling draws on the CPU in CpuSampler; transformers then decodes greedily
        config = GenerationConfig(
            max_new_tokens=int(max_new_tokens),
            do_sample=False,
            pad_token_id=self._pad_id,
            eos_token_id=self._eos_ids,
        )
        sampler = [CpuSampler(temperature, seed, torch)] if samples(temperature) else []
        out: list[str] = [""] * len(ids)
        done = 0
        with torch.inference_mode():
            for batch in _batches(ids, batch_size):
                input_ids, mask = self._pad([ids[i] for i in batch], "left", torch)
                tokens = self.model.generate(
                    input_ids=input_ids,
                    attention_mask=mask,
                    generation_config=config,
                    logits_processor=LogitsProcessorList(sampler),
                )
                for row, i in enumerate(batch):
                    new = tokens[row, input_ids.shape[1] :]
                    out[i] = self.tokenizer.decode(new, skip_special_tokens=True)
                done += len(batch)
                if progress is not None:
                    progress(done, len(ids))
        return out

    def completions(
        self,
        prompts: str | Sequence[str | Sequence[dict[str, Any]]] | Sequence[dict[str, Any]],
        max_new_tokens: int = 64,
        *,
        chat: bool = True,
        temperature: float = 0.0,
        top_logprobs: int = 0,
        stop: str | Sequence[str] | None = None,
        batch_size: int = 8,
        random_state: int | np.random.Generator | None = None,
        top_p: float = 1.0,
    ) -> list[Completion]:
        """Continue each prompt and keep the log-probability of every generated token.

        The token loop of the OpenAI-compatible server (``trustlab llm serve``), called
        directly: prompts run in batches of ``batch_size`` with a key-value cache; greedy text
        equals :meth:`generate`'s.

        Parameters
        ----------
        prompts : str, sequence of str, or conversations
            As in :meth:`generate`; with ``chat=True`` a prompt may also be a conversation, a
            list of ``{"role": ..., "content": ...}`` messages (system, user and assistant
            turns) rendered with the model's chat template and its generation prompt. A prompt
            string is the same as the conversation ``[{"role": "user", "content": prompt}]``.
            One conversation alone (a list of message dicts) is one prompt.
        max_new_tokens, chat, temperature, batch_size
            As in :meth:`generate`.
        top_logprobs : int, default 0
            How many most likely alternatives to keep per token, in [0, 20].
        stop : str or sequence of str, optional
            Generation ends before the first stop string; it is not part of the text.
        random_state : None, int or numpy.random.Generator
            Seed for sampling. Every prompt is sampled from the same stream derived from the
            seed (as the server samples each request with that ``seed``), so a prompt's text
            depends only on it and the seed, not on the other prompts or the batch size:
            identical prompts in one call get identical texts (draw several samples of a prompt
            with different seeds, or with ``random_state=None``).
        top_p : float, default 1.0
            Nucleus sampling when ``temperature > 0``: draw among the most likely tokens whose
            probabilities (after temperature) reach ``top_p`` (the one crossing included); 1
            keeps the whole vocabulary. Greedy decoding ignores it.

        Returns
        -------
        list of Completion
            One per prompt, in order: the text, the finish reason (``"stop"`` or ``"length"``)
            and each token's log-probability (the model's log-softmax, before temperature).

        Examples
        --------
        >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
        >>> best = lm.completions("Name a colour.", 4, top_logprobs=2)[0]  # doctest: +SKIP
        >>> best.tokens, best.logprobs[0], best.top_logprobs[0]  # doctest: +SKIP
        (('Blue', '.'), -0.9, (('Blue', -0.9), ('Red', -1.4)))
        """
        texts = as_prompts(prompts, chat)
        check_positive_int(max_new_tokens, "max_new_tokens")
        check_positive_int(batch_size, "batch_size")
        temperature = check_temperature(temperature)
        top_p = check_top_p(top_p)
        top_logprobs = check_top_logprobs(top_logprobs)
        stops = tuple(check_stop(stop) or ())
        seed = row_seed(check_seed(random_state), 0)
        ids = self._encode(texts, chat)
        requests = [
            DecodeRequest(
                tuple(p), int(max_new_tokens), temperature, top_p, seed, stops, top_logprobs
            )
            for p in ids
        ]
        out: list[Completion | None] = [None] * len(ids)
        for batch in _batches(ids, batch_size):
            steps: dict[int, list] = {i: [] for i in batch}
            for updates in decode(self, [requests[i] for i in batch]):
                for step in updates:
                    steps[batch[step.index]].append(step)
            for i in batch:
                out[i] = completion_from_steps(steps[i])
        return out  # type: ignore[return-value]

    # ---- activations -------------------------------------------------------------------

    def activations(
        self,
        prompts: str | Sequence[str],
        layers: int | Sequence[int],
        positions: str = "last",
        *,
        chat: bool = False,
        batch_size: int = 8,
        progress: Callable[[int, int], None] | None = None,
        autocast: str | None = None,
    ) -> np.ndarray | list[np.ndarray]:
        """Residual-stream activations (float32) at the output of the given decoder layers.

        Parameters
        ----------
        prompts : str or sequence of str
        layers : int or sequence of int
            0-based decoder layers, each in ``[0, n_layers)``.
        positions : {"last", "mean", "all"}
            ``"last"``: the last prompt token. ``"mean"``: the mean over the prompt's tokens
            without token 0 (an attention sink with a huge norm) when there is more than one.
            ``"all"``: every token.
        chat : bool
            Wrap each prompt with the chat template first (with the generation prompt).
        batch_size : int
        progress : callable, optional
            Called after each batch with ``(prompts done, prompts in all)``.
        autocast : None or "bfloat16"
            ``"bfloat16"`` runs the forward pass under ``torch.autocast`` in bfloat16: about
            2.5x faster on CPUs with bfloat16 instructions (AVX512-BF16, AMX), slower on others;
            activations move by about 1 % of their norm (returned as float32 all the same).

        Returns
        -------
        numpy.ndarray or list of numpy.ndarray
            For "last"/"mean": shape (n, hidden) for an int ``layers``, (n, len(layers), hidden)
            for a sequence. For "all": a list with one (T_i, hidden) or (T_i, len(layers),
            hidden) array per prompt; padding is never included.

        Examples
        --------
        >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
        >>> lm.activations(["I love this.", "I hate this."], layers=15).shape  # doctest: +SKIP
        (2, 576)
        """
        texts = as_texts(prompts)
        wanted, single = self._check_layers(layers)
        check_choice(positions, "positions", POSITIONS)
        check_positive_int(batch_size, "batch_size")
        if autocast not in (None, "bfloat16"):
            raise InputError.bad("autocast", 'None or "bfloat16"', autocast)
        check_progress(progress)
        ids = self._encode(texts, chat)
        torch = require("torch", "llm")
        per_prompt: list[np.ndarray] = [np.empty(0)] * len(ids)
        done = 0
        lower = (
            torch.autocast(self.model.device.type, dtype=torch.bfloat16)
            if autocast
            else contextlib.nullcontext()
        )
        with torch.inference_mode(), lower:
            for batch in _batches(ids, batch_size):
                seqs = [ids[i] for i in batch]
                stacked = self._capture(seqs, wanted, torch)  # (b, T, len(wanted), hidden)
                for row, (i, seq) in enumerate(zip(batch, seqs, strict=True)):
                    per_prompt[i] = _reduce(stacked[row, : len(seq)], positions)
                done += len(batch)
                if progress is not None:
                    progress(done, len(ids))
        if single:
            per_prompt = [a[..., 0, :] for a in per_prompt]
        if positions == "all":
            return per_prompt
        return np.stack(per_prompt)

    def _capture(self, seqs: list[list[int]], wanted: list[int], torch: Any) -> Any:
        """Run the decoder on right-padded ``seqs`` and return the wanted layers' outputs."""
        input_ids, mask = self._pad(seqs, "right", torch)
        captured: dict[int, Any] = {}
        deepest = max(wanted)

        def hook_for(layer: int) -> Callable:
            def hook(module: Any, args: Any, output: Any) -> None:
                captured[layer] = output if torch.is_tensor(output) else output[0]
                if layer == deepest:
                    raise _StopForward

            return hook

        handles = [
            self._layers[layer].register_forward_hook(hook_for(layer)) for layer in set(wanted)
        ]
        try:
            self._backbone(input_ids=input_ids, attention_mask=mask, use_cache=False)
        except _StopForward:
            pass
        finally:
            for handle in handles:
                handle.remove()
        return torch.stack([captured[layer] for layer in wanted], dim=2).float()

    # ---- interventions -----------------------------------------------------------------

    def intervene(
        self, layer: int, fn: Callable[[Any], Any], *, argument: str = "fn"
    ) -> contextlib.AbstractContextManager:
        """Context manager that replaces decoder layer ``layer``'s output ``h`` by ``fn(h)``.

        ``h`` is a torch tensor of shape (batch, T, hidden); ``fn`` must return a tensor of the
        same shape. While active, every forward pass (the prompt and each generated token, in
        :meth:`generate`, :meth:`activations` and :meth:`logprobs`) goes through ``fn``. The hook
        is removed on exit, also when the block raises. A tensor back with nan or inf values
        (where ``h`` had none) raises InputError naming ``argument`` during that forward pass:
        ``"fn"``, or ``"scale"`` where ``fn`` adds ``scale * vector`` (a steering shift of the
        caller's own, as the transfer measures add at chosen positions; check the shift's size
        first with :func:`trustlab.llm.settings.check_steering_scale`), or ``"strength"``
        where it adds ``strength * vector`` (an SAE latent raised, ``trustlab.interpret.sae``).

        Examples
        --------
        >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
        >>> with lm.intervene(10, lambda h: 0.5 * h):  # doctest: +SKIP
        ...     text = lm.generate("Tell me a story.", max_new_tokens=16)
        """
        layer = self._check_layer(layer, "layer")
        if not callable(fn):
            raise InputError.bad("fn", "a callable taking and returning a torch tensor", fn)
        argument = check_choice(argument, "argument", tuple(_NONFINITE))
        return self._hooked(layer, fn, argument)

    @contextlib.contextmanager
    def _hooked(
        self, layer: int, fn: Callable[[Any], Any], argument: str = "fn"
    ) -> Iterator[LocalModel]:
        torch = require("torch", "llm")
        expected = _NONFINITE[argument]

        def apply(h: Any) -> Any:
            new = fn(h)
            if not torch.is_tensor(new) or tuple(new.shape) != tuple(h.shape):
                raise InputError.bad("fn", f"a tensor of shape {tuple(h.shape)} back", new)
            # a nan or inf fn wrote would give nan logits: empty greedy text, a torch error when
            # sampling (a layer output non-finite on its own is the model's, not fn's, doing)
            if not bool(torch.isfinite(new).all()) and bool(torch.isfinite(h).all()):
                bad = int((~torch.isfinite(new)).sum())
                raise InputError(
                    f"{argument}: expected {expected}, got {bad} nan or inf value(s) at layer "
                    f"{layer} ({str(h.dtype).removeprefix('torch.')})",
                    argument=argument,
                )
            return new

        def hook(module: Any, args: Any, output: Any) -> Any:
            # transformers 5 decoder layers return a tensor; older ones and some models a tuple
            if torch.is_tensor(output):
                return apply(output)
            return (apply(output[0]), *output[1:])

        handle = self._layers[layer].register_forward_hook(hook)
        try:
            yield self
        finally:
            handle.remove()

    def steer(
        self, vector: Any, layer: int, scale: float = 1.0
    ) -> contextlib.AbstractContextManager:
        """Context manager that adds ``scale * vector`` to decoder layer ``layer``'s output.

        The vector is added at every position of every forward pass while the block runs; the
        hook is removed on exit, errors included.

        Parameters
        ----------
        vector : array-like of shape (hidden_size,)
        layer : int
        scale : float
            ``scale * vector`` must have an L2 norm below ``sqrt(float32 max)`` (1.84e19),
            else InputError: past it the squares in the model's float32 norm layers overflow
            and every token gets the same probability (greedy text: empty).

        Examples
        --------
        >>> import numpy as np
        >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
        >>> pos = lm.activations(["I love it.", "Wonderful day."], 15, "mean")  # doctest: +SKIP
        >>> neg = lm.activations(["I hate it.", "Awful day."], 15, "mean")  # doctest: +SKIP
        >>> with lm.steer(pos.mean(0) - neg.mean(0), layer=15, scale=2.0):  # doctest: +SKIP
        ...     text = lm.generate("Describe your weekend.", max_new_tokens=32)
        """
        layer = self._check_layer(layer, "layer")
        vec = as_float_array(vector, "vector", shape=(self.hidden_size,))
        scale = check_steering_scale(scale, vec)
        torch = require("torch", "llm")
        shift = torch.as_tensor(scale * vec, dtype=torch.float32)
        return self._hooked(layer, lambda h: h + shift.to(dtype=h.dtype, device=h.device), "scale")

    # ---- scoring -----------------------------------------------------------------------

    def logprobs(
        self,
        prompts: Sequence[str],
        continuations: Sequence[str],
        *,
        chat: bool = False,
        batch_size: int = 8,
        share_prefix: bool = False,
    ) -> np.ndarray:
        """Total log-probability of each continuation given its prompt (natural log).

        The prompt (chat-wrapped when ``chat=True``) and the continuation are tokenized
        separately and joined, so the continuation's tokens are exactly those of
        ``tokenizer(continuation, add_special_tokens=False)``.

        ``share_prefix=True`` runs the tokens a batch's rows share before their continuations
        (a few-shot prompt repeated for many continuations) once and reuses their key-value
        cache: the same numbers up to float32 rounding (about 1e-5 on a sum of 40 tokens), for
        a fraction of the work when the shared part is long; the default keeps one path for
        every batch size, so a row's value does not depend on its batch.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)

        Examples
        --------
        >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
        >>> lm.logprobs(["The capital of France is"] * 2, [" Paris", " Berlin"])  # doctest: +SKIP
        array([ -2.1, -9.8])
        """
        texts = as_texts(prompts)
        conts = as_texts(continuations, "continuations")
        check_same_length(prompts=texts, continuations=conts)
        check_positive_int(batch_size, "batch_size")
        share_prefix = check_bool(share_prefix, "share_prefix")
        prompt_ids = self._encode(texts, chat)
        cont_ids = [self.tokenizer(c, add_special_tokens=False)["input_ids"] for c in conts]
        for c, t in zip(conts, cont_ids, strict=True):
            if not t:
                raise InputError.bad("continuations", "texts of at least one token", c)
        torch = require("torch", "llm")
        totals = np.zeros(len(texts))
        for i, logits in self._continuation_logits(prompt_ids, cont_ids, batch_size, share_prefix):
            target = torch.tensor(cont_ids[i], device=logits.device)
            scores = logits[: len(target)].double()
            picked = torch.log_softmax(scores, dim=-1).gather(1, target[:, None])
            totals[i] = float(picked.sum())
        return totals

    def next_token_logprobs(
        self,
        prompts: Sequence[str],
        tokens: Sequence[str],
        *,
        chat: bool = False,
        batch_size: int = 8,
        share_prefix: bool = False,
    ) -> np.ndarray:
        """Log-probability of each of ``tokens`` (texts of one token each) as the next token
        after each prompt (natural log): one forward pass a prompt for all of them.

        Equal to ``logprobs(prompts * k, [t] * n for each t)`` up to float32 rounding (about
        1e-6; tested), for 1/k of its work: a 1-or-0 answer read as ``P("1")`` against
        ``P("0")`` (``trustlab.interpret.detection_score(answer="logprob")``) runs once.
        Options as :meth:`logprobs`.

        Returns
        -------
        numpy.ndarray of float64, shape (n_prompts, n_tokens)

        Examples
        --------
        >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
        >>> lm.next_token_logprobs(["Is 7 prime? Answer 1 or 0:"], ["1", "0"])  # doctest: +SKIP
        array([[-0.9, -1.2]])
        """
        texts = as_texts(prompts)
        words = as_texts(tokens, "tokens")
        check_positive_int(batch_size, "batch_size")
        share_prefix = check_bool(share_prefix, "share_prefix")
        ids = [self.tokenizer(w, add_special_tokens=False)["input_ids"] for w in words]
        for w, t in zip(words, ids, strict=True):
            if len(t) != 1:
                raise InputError.bad("tokens", f"texts of one token each ({w!r} has {len(t)})", w)
        prompt_ids = self._encode(texts, chat)
        torch = require("torch", "llm")
        target = torch.tensor([t[0] for t in ids])
        out = np.zeros((len(texts), len(ids)))
        # each row runs as logprobs runs it with the first token as its continuation
        one = [[ids[0][0]]] * len(texts) if ids else [[self._pad_id]] * len(texts)
        for i, logits in self._continuation_logits(prompt_ids, one, batch_size, share_prefix):
            logp = torch.log_softmax(logits[:1].double(), dim=-1)[0]
            out[i] = logp[target.to(logp.device)].cpu().numpy()
        return out

    def _continuation_logits(
        self,
        prompt_ids: list[list[int]],
        cont_ids: list[list[int]],
        batch_size: int,
        share_prefix: bool,
    ) -> Iterator[tuple[int, Any]]:
        """``(row, logits)`` of every prompt + continuation, in batches of similar length:
        the logits from the prompt's last position on (those that predict its continuation)."""
        seqs = [p + c for p, c in zip(prompt_ids, cont_ids, strict=True)]
        torch = require("torch", "llm")
        with torch.inference_mode():
            for batch in _batches(seqs, batch_size):
                rows = [seqs[i] for i in batch]
                # logits only from the first position that predicts a continuation token on
                first = min(len(prompt_ids[i]) for i in batch) - 1
                # the tokens the batch's rows share before it (a few-shot prompt, say): run
                # once, their key-value cache repeated for every row
                shared = shared_prefix(rows, first) if share_prefix and len(rows) > 1 else 0
                shared = shared if shared >= MIN_SHARED_PREFIX else 0
                input_ids, mask = self._pad([r[shared:] for r in rows], "right", torch)
                keep = input_ids.shape[1] - (first - shared)
                extra = {"logits_to_keep": keep} if self._keeps_logits else {}
                if shared:
                    _, cache = self.forward_cached(torch.tensor([rows[0][:shared]]))
                    cache.batch_repeat_interleave(len(rows))
                    extra[cache_argument(type(self.model))] = cache
                    mask = torch.cat([mask.new_ones(len(rows), shared), mask], dim=1)
                out = self.model(
                    input_ids=input_ids, attention_mask=mask, use_cache=bool(shared), **extra
                )
                logits = out.logits[:, -keep:]
                for row, i in enumerate(batch):
                    start = len(prompt_ids[i]) - 1 - first
                    yield i, logits[row, start : start + len(cont_ids[i])]

    def forward_cached(self, input_ids: Any, cache: Any = None) -> tuple[Any, Any]:
        """One forward pass of token ids (a torch tensor of shape (batch, T)) after ``cache``
        (None, or the key-value cache a previous call returned), without padding: returns the
        logits of every new position and the cache extended by them.

        For scoring many continuations of one long prefix: run the prefix once, then each
        continuation from a copy of its cache (``copy.deepcopy``; the cache is extended in
        place). The argument's name differs across transformers releases; this call hides it.
        """
        torch = require("torch", "llm")
        if not torch.is_tensor(input_ids) or input_ids.ndim != 2 or input_ids.shape[1] < 1:
            raise InputError.bad("input_ids", "a torch tensor of shape (batch, T >= 1)", input_ids)
        name = cache_argument(type(self.model))
        kwargs: dict[str, Any] = {"use_cache": True}
        if cache is not None:
            kwargs[name] = cache
        out = self.model(input_ids=input_ids.to(self.model.device), **kwargs)
        new = out.get(name) if out.get(name) is not None else out.get("past_key_values")
        return out.logits, new

    # ---- helpers -----------------------------------------------------------------------

    def _encode(self, texts: list[str] | list[str | list[dict]], chat: bool) -> list[list[int]]:
        """Token ids of prompts (strings, or with ``chat`` also conversations)."""
        if check_bool(chat, "chat"):
            if not self.has_chat_template:
                raise InputError.bad(
                    "chat",
                    f"False for {self.name!r}, which has no chat template (plain continuation)",
                    chat,
                )
            texts = [
                self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": t}] if isinstance(t, str) else t,
                    add_generation_prompt=True,
                    tokenize=False,
                )
                for t in texts
            ]
        # a chat template writes its own special tokens; plain text gets the tokenizer's (BOS)
        ids = [self.tokenizer(t, add_special_tokens=not chat)["input_ids"] for t in texts]
        for i, (text, seq) in enumerate(zip(texts, ids, strict=True)):
            if not seq:
                raise InputError.bad(f"prompts[{i}]", "a text of at least one token", text)
        return ids

    def _token_text(self, token_id: int) -> str:
        """The text of one token as the tokenizer decodes it alone (cached)."""
        text = self._token_texts.get(token_id)
        if text is None:
            text = self._token_texts[token_id] = self.tokenizer.decode([token_id])
        return text

    def _pad(self, seqs: list[list[int]], side: str, torch: Any) -> tuple[Any, Any]:
        width = max(len(s) for s in seqs)
        input_ids = torch.full((len(seqs), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, seq in enumerate(seqs):
            cols = slice(width - len(seq), width) if side == "left" else slice(0, len(seq))
            input_ids[row, cols] = torch.tensor(seq, dtype=torch.long)
            mask[row, cols] = 1
        device = self.model.device
        return input_ids.to(device), mask.to(device)

    def _check_layer(self, layer: Any, name: str) -> int:
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
            raise InputError.bad(name, f"an integer in [0, {self.n_layers - 1}]", layer)
        if not 0 <= layer < self.n_layers:
            raise InputError.bad(
                name, f"an integer in [0, {self.n_layers - 1}] ({self.n_layers} layers)", layer
            )
        return int(layer)

    def _check_layers(self, layers: Any) -> tuple[list[int], bool]:
        if isinstance(layers, np.ndarray) and layers.ndim == 0:  # len() of it: a raw TypeError
            layers = layers.item()  # one layer, as a numpy int; a bool or float is refused
        if isinstance(layers, (int, np.integer)) and not isinstance(layers, bool):
            return [self._check_layer(layers, "layers")], True
        if isinstance(layers, (str, bytes)) or not isinstance(layers, (Sequence, np.ndarray)):
            raise InputError.bad("layers", "an integer or a sequence of integers", layers)
        if len(layers) == 0:
            raise InputError.bad("layers", "at least one layer", layers)
        return [self._check_layer(layer, "layers") for layer in layers], False


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


# the files a Hugging Face save writes (save_pretrained of a model and its tokenizer), by the
# names transformers gives them: a file of one's own such as steering.safetensors, my.model or
# tokenizer_notes.txt beside a model is no model file
_MODEL_FILES = (
    "config.json", "generation_config.json", "model.safetensors", "model.safetensors.index.json",
    "model-[0-9]*-of-[0-9]*.safetensors", "pytorch_model.bin", "pytorch_model.bin.index.json",
    "pytorch_model-[0-9]*-of-[0-9]*.bin", "tokenizer.json", "tokenizer_config.json",
    "tokenizer.model", "special_tokens_map.json", "added_tokens.json", "vocab.json", "vocab.txt",
    "merges.txt", "spiece.model", "sentencepiece.bpe.model", "chat_template.jinja",
    "chat_template.json",
)  # fmt: skip
# the one folder it writes (a tokenizer's named chat templates beside its default one)
_MODEL_FOLDER = "additional_chat_templates"


def _replace_model_files(path: Path, staging: Path, *, earlier: bool) -> None:
    """Move a save's files from ``staging`` into ``path``, removing, where the folder held an
    ``earlier`` model, the model files it left there that this save did not write: a stale
    ``chat_template.jinja`` gave a model saved without a template the earlier model's template
    when loaded back. A folder that held no model loses nothing. The files replaced or removed
    are moved aside into ``staging`` first, and back if a move fails: the earlier model stays
    whole (a new config.json beside the earlier weights loaded as neither model)."""
    new = sorted(entry.name for entry in staging.iterdir())
    old = [name for name in new if os.path.lexists(path / name)]
    old += [e.name for e in (path.iterdir() if earlier else ()) if _stale(e, new)]
    aside = staging / ".earlier"  # no name a save writes
    aside.mkdir()
    moves = [(path / n, aside / n) for n in old] + [(staging / n, path / n) for n in new]
    done: list[tuple[Path, Path]] = []
    try:
        for source, target in moves:
            os.replace(source, target)
            done.append((source, target))
    except BaseException:
        for source, target in reversed(done):  # the new files out, the earlier ones back
            os.replace(target, source)
        raise


def _stale(entry: Path, new: list[str]) -> bool:
    """Whether ``entry`` is a model file of an earlier save that the new one did not write; a
    folder of one's own stays whatever its name (the ``.saving-*`` folder too)."""
    if entry.name in new:
        return False
    if entry.is_dir() and not entry.is_symlink():
        return entry.name == _MODEL_FOLDER
    return any(fnmatch.fnmatch(entry.name, p) for p in _MODEL_FILES)


def _find_layers(model: Any) -> tuple[Any, Any]:
    for owner, attr in _LAYER_PATHS:
        backbone = getattr(model, owner, None)
        layers = getattr(backbone, attr, None)
        if layers is not None:
            return backbone, layers
    raise BackendError(
        f"cannot find the decoder layers of {type(model).__name__}; expected one of "
        + ", ".join(f"model.{a}.{b}" for a, b in _LAYER_PATHS)
    )


def _batches(ids: list[list[int]], batch_size: int) -> Iterator[list[int]]:
    """Indices in batches of similar token length (less padding); results go back by index."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def _reduce(hidden: Any, positions: str) -> np.ndarray:
    """(T, k, hidden) activations of one prompt to its requested positions."""
    if positions == "last":
        hidden = hidden[-1]
    elif positions == "mean":
        hidden = hidden[1:].mean(dim=0) if hidden.shape[0] > 1 else hidden[0]
    return hidden.cpu().numpy().astype(np.float32, copy=True)
