"""What a UEFL simulation returns: one :class:`MethodRun` per method and the
:class:`UEFLSimulation` that compares them (margins, summary, the accuracy and entropy curves)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from trustlab._checks import check_choice
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.federated.protocol import ProtocolState
from trustlab.federated.uefl import UEFLConfig

__all__ = ["MethodRun", "UEFLSimulation", "METHODS", "round_counts", "rounds_text"]

METHODS = ("uefl", "fedavg", "vq")
_LABELS = {"uefl": "UEFL", "fedavg": "FedAvg (no codebook)", "vq": "VQ, one codebook"}
_STYLES = {"uefl": "-", "fedavg": "--", "vq": ":"}
_METRICS = ("accuracy", "entropy")


def round_counts(total: int, extensions: list[dict[str, Any]]) -> tuple[int, int]:
    """(rounds of the first iteration, extension rounds) of a UEFL run of ``total`` rounds whose
    extensions are ``extensions`` (each with its ``after_round``)."""
    first = min((int(e["after_round"]) for e in extensions), default=total)
    return first, total - first


def rounds_text(total: int, extensions: list[dict[str, Any]]) -> str:
    """``"8 + 6 extension rounds"`` (or ``"8 rounds, no extension"``): how a UEFL run's rounds
    split between its first iteration and the extensions."""
    first, extra = round_counts(total, extensions)
    if not extra:
        return f"{first} rounds, no extension"
    return f"{first} + {extra} extension rounds"


@dataclass(frozen=True)
class MethodRun(Result):
    """One method's run: per-round, per-silo accuracy and entropy (NaN where not measured),
    book indices, mean VQ loss of local training (codebook plus commitment term: 1 + commitment,
    by default 1.25, times the mean squared quantisation error; 0 without VQ layer), the
    threshold and extensions (UEFL), and the final shared arrays."""

    name: str
    rounds: np.ndarray
    accuracy: np.ndarray
    entropy: np.ndarray
    book_idx: np.ndarray
    vq_loss: np.ndarray
    threshold: float | None
    extensions: list[dict[str, Any]]
    weights: dict[str, np.ndarray] = internal_field()

    @property
    def final_accuracy(self) -> np.ndarray:
        """Accuracy of every silo at the last round."""
        return self.accuracy[-1]

    @property
    def final_entropy(self) -> np.ndarray:
        """Mean predictive entropy of every silo at the last round."""
        return self.entropy[-1]

    def _dict_items(self) -> dict[str, Any]:
        return {
            **super()._dict_items(),
            "final": {
                "accuracy": self.final_accuracy,
                "entropy": self.final_entropy,
                "mean_accuracy": self.final_accuracy.mean(),
                "mean_entropy": self.final_entropy.mean(),
            },
        }

    def summary(self) -> str:
        rounds = (
            rounds_text(len(self.rounds), self.extensions)
            if self.name == "uefl"
            else f"{len(self.rounds)} rounds"
        )
        return (
            f"{_LABELS.get(self.name, self.name)}: {rounds}, final mean "
            f"accuracy {self.final_accuracy.mean():.3f}, entropy {self.final_entropy.mean():.3f}"
        )

    @classmethod
    def from_protocol(
        cls, name: str, state: ProtocolState, weights: Mapping[str, np.ndarray]
    ) -> MethodRun:
        """The run recorded in a finished protocol state, with its final shared arrays."""
        history = state.history
        nan = [np.nan] * state.n_silos
        return cls(
            name=name,
            rounds=np.array([h["round"] for h in history]),
            accuracy=np.array([h["accuracy"] or nan for h in history], dtype=float),
            entropy=np.array([h["entropy"] or nan for h in history], dtype=float),
            book_idx=np.array([h["book_idx"] for h in history], dtype=int),
            vq_loss=np.array(
                [h.get("train", {}).get("vq-loss") or nan for h in history], dtype=float
            ),
            threshold=state.threshold,
            extensions=list(state.extensions),
            weights=dict(weights),
        )

    def to_protocol(self) -> ProtocolState:
        """The finished protocol state this run was recorded from (the inverse of
        :meth:`from_protocol`, arrays aside)."""
        return ProtocolState(
            n_silos=self.accuracy.shape[1], round=int(self.rounds[-1]), finished=True,
            threshold=self.threshold, extensions=self.extensions,
            history=[
                {"round": int(r), "book_idx": self.book_idx[j].tolist(),
                 "accuracy": _row(self.accuracy[j]), "entropy": _row(self.entropy[j]),
                 "train": {"vq-loss": _row(self.vq_loss[j])}}
                for j, r in enumerate(self.rounds)
            ],
        )  # fmt: skip


def _row(values: np.ndarray) -> list[float] | None:
    return None if np.isnan(values).all() else [float(v) for v in values]


@dataclass(frozen=True)
class UEFLSimulation(Result):
    """UEFL and its baselines on the same silos, seeds and number of rounds.

    ``methods`` maps "uefl", "fedavg" (the same network without VQ layer, all weights
    averaged) and optionally "vq" (one codebook, no extension) to a :class:`MethodRun`.
    Saved (``write_outputs``, the CLI's ``--out``) as ``result.json``, ``accuracy.png`` and
    ``entropy.png``. ``seconds`` is this call's wall-clock time: after a resume (``resumed``)
    only the part it ran, not the time spent before the interruption.
    """

    config: UEFLConfig
    silos: list[dict[str, Any]]
    methods: dict[str, MethodRun]
    seconds: float
    resumed: bool = False

    figure_name: ClassVar[str] = "accuracy.png"
    figure_size: ClassVar[tuple[float, float]] = (8.0, 4.5)

    def margins(self, baseline: str = "fedavg") -> dict[str, float]:
        """UEFL minus the baseline at the last round: mean accuracy (higher is better) and mean
        entropy (lower is better), also over the silos UEFL extended."""
        run = [name for name in self.methods if name != "uefl"]
        if baseline not in run:  # was a raw KeyError (e.g. margins("vq") without that baseline)
            raise InputError.bad(
                "baseline", "a baseline of this simulation: " + (", ".join(map(repr, run)) or
                "none was run"), baseline,
            )  # fmt: skip
        ours, base = self.methods["uefl"], self.methods[baseline]
        extended = sorted({i for e in ours.extensions for i in e["flagged"]})
        out = {
            "accuracy": float(ours.final_accuracy.mean() - base.final_accuracy.mean()),
            "entropy": float(ours.final_entropy.mean() - base.final_entropy.mean()),
        }
        if extended:
            out["accuracy_extended"] = float(
                ours.final_accuracy[extended].mean() - base.final_accuracy[extended].mean()
            )
            out["entropy_extended"] = float(
                ours.final_entropy[extended].mean() - base.final_entropy[extended].mean()
            )
        return out

    @property
    def uefl_rounds(self) -> dict[str, int]:
        """UEFL's rounds: ``first_iteration`` (R), ``extension`` (the rounds after it) and
        ``total``; every baseline ran ``total`` rounds."""
        run = self.methods["uefl"]
        first, extra = round_counts(len(run.rounds), run.extensions)
        return {"first_iteration": first, "extension": extra, "total": first + extra}

    def _dict_items(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "uefl_rounds": self.uefl_rounds,
            "silos": self.silos,
            "methods": self.methods,
            "margins": {k: self.margins(k) for k in self.methods if k != "uefl"},
            "seconds": self.seconds,
            "resumed": self.resumed,
        }

    def summary(self) -> str:
        uefl = self.methods["uefl"]
        n_rounds = len(uefl.rounds)
        seed = self.config.random_state
        lines = [
            f"UEFL simulation: {len(self.silos)} silos, "
            f"{rounds_text(n_rounds, uefl.extensions)}, seed {seed}"
        ]
        baselines = [_LABELS.get(name, name) for name in self.methods if name != "uefl"]
        if baselines:
            lines.append(f"  {' and '.join(baselines)}: {n_rounds} rounds (as many as UEFL)")
        for e in self.methods["uefl"].extensions:
            lines.append(
                f"  after round {e['after_round']}: silos {e['flagged']} above "
                f"threshold {e['threshold']:.4f} get codebook {e['iteration'] - 1}"
            )
        header = f"  {'silo':<28}" + "".join(f"{m:>18}" for m in self.methods)
        lines += ["final accuracy / entropy:", header]
        labels = self._silo_labels(width=28)
        for i in range(len(self.silos)):
            cells = "".join(
                f"{run.final_accuracy[i]:>9.3f}/{run.final_entropy[i]:<8.3f}"
                for run in self.methods.values()
            )
            lines.append(f"  {labels[i][:28]:<28}{cells}")
        means = "".join(
            f"{run.final_accuracy.mean():>9.3f}/{run.final_entropy.mean():<8.3f}"
            for run in self.methods.values()
        )
        lines.append(f"  {'mean':<28}{means}")
        for name in self.methods:
            if name != "uefl":
                m = self.margins(name)
                lines.append(f"UEFL - {name}: accuracy {m['accuracy']:+.3f}, "
                             f"entropy {m['entropy']:+.3f}")  # fmt: skip
        return "\n".join(lines)

    def _silo_labels(self, width: int | None = None) -> list[str]:
        """The silos' names, with their index when names repeat (user silos default to "silo";
        the extension lines name silos by index), or when their first ``width`` characters do
        (the summary's column cuts longer names)."""
        names = [str(silo["name"]) for silo in self.silos]
        shown = [name[:width] for name in names]
        if len(set(shown)) == len(shown):
            return names
        return [f"{i}: {name}" for i, name in enumerate(names)]

    def plot(self, ax=None, metric: str = "accuracy"):
        """Per-silo curves of ``metric`` ("accuracy" or "entropy") by round: one colour per
        silo, one line style per method; dotted verticals mark UEFL's extensions."""
        from matplotlib import colormaps
        from matplotlib.lines import Line2D
        from matplotlib.ticker import MaxNLocator

        check_choice(metric, "metric", _METRICS)
        ax = new_axes(ax, figsize=(7, 4))
        colours = colormaps["tab10"]
        labels = self._silo_labels()
        for name, run in self.methods.items():
            values, style = getattr(run, metric), _STYLES.get(name, "-.")
            for i in range(values.shape[1]):
                ok = ~np.isnan(values[:, i])
                label = labels[i] if name == "uefl" else None
                ax.plot(run.rounds[ok], values[ok, i], style, color=colours(i % 10), label=label)
        for e in self.methods["uefl"].extensions:
            ax.axvline(e["after_round"] + 0.5, color="grey", linestyle=":", linewidth=1)
        handles = [
            Line2D([], [], color="black", linestyle=_STYLES.get(n, "-."), label=_LABELS[n])
            for n in self.methods
        ]
        corner = "upper left" if metric == "entropy" else "lower left"
        first = ax.legend(handles=handles, loc=corner, fontsize=7)
        ax.add_artist(first)
        ax.legend(loc="center right", fontsize=6)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("round")
        ax.set_ylabel("accuracy" if metric == "accuracy" else "predictive entropy (nats)")
        ax.set_title(f"UEFL vs baselines: {metric} per silo")
        return ax

    def files(self) -> dict[str, Any]:
        """``entropy.png`` beside the accuracy curves (the main figure)."""
        return {"entropy.png": lambda ax: self.plot(ax, "entropy")}
