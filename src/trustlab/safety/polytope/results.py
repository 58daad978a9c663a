"""Which facets fire for which category: :class:`FacetReport`, the polytope's explanation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trustlab._checks import check_choice
from trustlab._results import Result, new_axes, saved_mapping

__all__ = ["FacetReport"]

VALUES = ("firing_rate", "mutual_information")


@dataclass(frozen=True)
class FacetReport(Result):
    """Which facets fire for which category.

    Attributes
    ----------
    categories : tuple of str
        The categories (rows of the tables), sorted.
    n_samples : tuple of int
        Rows per category.
    firing_rate : ndarray (n_categories, n_facets)
        Fraction of a category's rows that violate each facet.
    mutual_information : ndarray (n_categories, n_facets)
        Mutual information, in bits, between the binary "row is in this category" and "facet
        fires" indicators over all rows.
    matched_facet : tuple of int
        The facet matched to each category by maximum total mutual information (Hungarian
        matching) over the facets that fire more often on the category than on the other rows
        (mutual information alone would also match a facet that fires on every other category
        and never on this one); -1 for a category no such facet is left for (e.g. the benign
        category, or more categories than facets).
    detection_rate : tuple of float
        Fraction of each category's rows flagged unsafe (any facet fires).

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.safety import FacetReport
    >>> fired = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 0], [0, 0]], dtype=bool)
    >>> report = FacetReport.from_violations(fired, np.array(["a", "a", "b", "b", "c", "c"]))
    >>> report.matched_facet, report.detection_rate
    ((0, 1, -1), (1.0, 1.0, 0.0))
    """

    categories: tuple[str, ...]
    n_samples: tuple[int, ...]
    firing_rate: np.ndarray
    mutual_information: np.ndarray
    matched_facet: tuple[int, ...]
    detection_rate: tuple[float, ...]

    figure_name = "facets.png"

    @classmethod
    def from_violations(cls, fired: np.ndarray, categories: np.ndarray) -> FacetReport:
        """The report from a (n, K) boolean "facet fires" matrix and one category per row."""
        from scipy.optimize import linear_sum_assignment

        names = np.unique(categories)
        member = categories[:, None] == names[None, :]  # (n, C)
        counts = member.sum(axis=0)
        firing = (member.T.astype(np.float64) @ fired.astype(np.float64)) / counts[:, None]
        mi = np.array(
            [
                [
                    _binary_mutual_information(member[:, c], fired[:, k])
                    for k in range(fired.shape[1])
                ]
                for c in range(len(names))
            ]
        )
        # MI is symmetric: a facet that fires everywhere except on a category (benign, say) has
        # high MI with it too; only facets firing more often on a category than on the other
        # rows are matched to it
        n = len(categories)
        outside = np.divide(
            fired.sum(axis=0)[None, :] - firing * counts[:, None],
            (n - counts)[:, None],
            out=np.zeros_like(firing),
            where=(n - counts)[:, None] > 0,
        )
        weight = np.where(firing > outside, mi, 0.0)
        rows, cols = linear_sum_assignment(-weight)
        keep = weight[rows, cols] > 0.0
        matched = np.full(len(names), -1, dtype=np.int64)
        matched[rows[keep]] = cols[keep]
        detected = (member & fired.any(axis=1)[:, None]).sum(axis=0) / counts
        return cls(
            categories=tuple(str(c) for c in names),
            n_samples=tuple(int(c) for c in counts),
            firing_rate=firing,
            mutual_information=mi,
            matched_facet=tuple(int(k) for k in matched),
            detection_rate=tuple(float(v) for v in detected),
        )

    @classmethod
    def from_dict(cls, data: dict) -> FacetReport:
        """The report back from its :meth:`to_dict` (how a saved polytope stores it)."""
        data = saved_mapping(data, "data", "FacetReport")
        return cls(
            categories=tuple(data["categories"]),
            n_samples=tuple(int(v) for v in data["n_samples"]),
            firing_rate=np.asarray(data["firing_rate"], dtype=np.float64),
            mutual_information=np.asarray(data["mutual_information"], dtype=np.float64),
            matched_facet=tuple(int(v) for v in data["matched_facet"]),
            detection_rate=tuple(float(v) for v in data["detection_rate"]),
        )

    def summary(self) -> str:
        lines = [
            f"facet report: {len(self.categories)} categories x {self.firing_rate.shape[1]} facets"
        ]
        for c, name in enumerate(self.categories):
            k = self.matched_facet[c]
            facet = (
                "no facet matched"
                if k < 0
                else f"facet {k} (fires on {self.firing_rate[c, k]:.0%}, "
                f"MI {self.mutual_information[c, k]:.3f} bits)"
            )
            lines.append(
                f"  {name} (n={self.n_samples[c]}): flagged {self.detection_rate[c]:.0%}; {facet}"
            )
        return "\n".join(lines)

    def facet_order(self) -> list[int]:
        """Facets in the order of their matched categories, then the unmatched ones."""
        matched = [k for k in self.matched_facet if k >= 0]
        return matched + [k for k in range(self.firing_rate.shape[1]) if k not in matched]

    def plot(self, ax=None, *, value: str = "firing_rate"):
        """Heat map of categories x facets (``value``: "firing_rate" or "mutual_information"),
        facets ordered by the matching. Returns the Axes."""
        check_choice(value, "value", VALUES)
        size = (1.0 + 0.35 * self.firing_rate.shape[1], 1.0 + 0.4 * len(self.categories))
        ax = new_axes(ax, figsize=size)
        order = self.facet_order()
        table = getattr(self, value)[:, order]
        image = ax.imshow(table, aspect="auto", cmap="viridis", vmin=0.0)
        ax.set_xticks(range(len(order)), [str(k) for k in order])
        ax.set_yticks(range(len(self.categories)), list(self.categories))
        ax.set_xlabel("facet")
        ax.set_title("facet firing rate" if value == "firing_rate" else "mutual information (bits)")
        ax.figure.colorbar(image, ax=ax)
        return ax


def _binary_mutual_information(a: np.ndarray, b: np.ndarray) -> float:
    """Mutual information (bits) between two boolean vectors."""
    n = len(a)
    joint = (
        np.array(
            [[np.sum(~a & ~b), np.sum(~a & b)], [np.sum(a & ~b), np.sum(a & b)]], dtype=np.float64
        )
        / n
    )
    pa = joint.sum(axis=1, keepdims=True)
    pb = joint.sum(axis=0, keepdims=True)
    nz = joint > 0
    return float(np.sum(joint[nz] * np.log2(joint[nz] / (pa @ pb)[nz])))
