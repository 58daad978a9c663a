"""The participation card: a JSON summary of an assessment to attach to a model card.

Field layout (``card.schema.json``, ``card_version`` 1.1.0; a 1.0.0 card, without ``evidence``
and the assessors' ``note``, stays valid):

- ``kind`` ``"participation-card"``, ``card_version``, ``system``, ``questionnaire_version``,
  ``generated_by`` (trustlab and its version);
- ``assessment``: ``kind`` (``self``, ``external`` or ``mixed``) and the ``assessors`` (name,
  role, perspective, date, ``fictitious``, ``note``: the answers file's top-level note);
- ``disclaimer``: what the card is and is not;
- ``tiers``: the rung->tier table used, its ``source`` and whether it was ``verified``;
- ``profile``: one entry per governance dimension: credited ``rung``, ``rung_name`` and
  ``arnstein_group`` (Arnstein 1969), ``tier``/``tier_label``/``tier_verified``, each assessor's
  rung, the ``missing_evidence``, the ``evidence`` given (per answered item and assessor: the
  claimed and credited rung, the references kind by kind as written in the answers file, and the
  note: what each credited rung rests on), the ``next_step`` (rung, evidence and the
  recommendation with its citation), and ``disagreement``;
- ``agreement``: None for one assessor, else overall and per-dimension Krippendorff's alpha
  (ordinal) and Fleiss' kappa, and the flagged dimensions.

>>> from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path
>>> card = participation_card(assess(data_path(EXAMPLE_ANSWERS[0])))
>>> card["kind"], card["assessment"]["kind"], len(card["profile"])
('participation-card', 'self', 6)
"""

from __future__ import annotations

from typing import Any

from trustlab._results import to_jsonable
from trustlab.errors import InputError

__all__ = ["participation_card", "validate_card", "CARD_VERSION"]

CARD_VERSION = "1.1.0"


def participation_card(assessment: Any) -> dict[str, Any]:
    """The participation card of an assessment (a JSON-safe dict valid against
    ``card.schema.json``).

    Parameters
    ----------
    assessment : ParticipationAssessment

    Examples
    --------
    >>> try:
    ...     participation_card({})
    ... except InputError as exc:
    ...     print(str(exc)[:48])
    assessment: expected a ParticipationAssessment (
    """
    from trustlab import __version__
    from trustlab.governance.assessment import ParticipationAssessment

    if not isinstance(assessment, ParticipationAssessment):
        raise InputError.bad("assessment", "a ParticipationAssessment (assess())", assessment)
    perspectives = {a["perspective"] for a in assessment.assessors}
    kind = perspectives.pop() if len(perspectives) == 1 else "mixed"
    profile = []
    for dim in assessment.dimensions:
        profile.append(
            {
                "dimension": dim["id"],
                "title": dim["title"],
                "rung": dim["rung"],
                "rung_name": dim["rung_name"],
                "arnstein_group": dim["arnstein_group"],
                "tier": dim["tier"],
                "tier_label": dim["tier_label"],
                "tier_verified": dim["tier_verified"],
                "assessor_rungs": dim["assessor_rungs"],
                "missing_evidence": dim["missing_evidence"],
                "evidence": [  # what each credited rung rests on (a card without it cannot say)
                    {
                        "item": it["id"],
                        "assessor": name,
                        "claimed": rung,
                        "credited": it["credited"][name],
                        "evidence": it["evidence"][name],
                        "note": it["notes"].get(name),
                    }
                    for it in dim["items"]
                    for name, rung in it["claimed"].items()
                ],
                "next_step": dim["next_step"],
                "disagreement": dim["disagreement"],
            }
        )
    agreement = None
    if assessment.agreement is not None:
        ag = assessment.agreement
        agreement = {
            "alpha": ag["overall"]["alpha"],
            "kappa": ag["overall"]["kappa"],
            "threshold_alpha": ag["threshold_alpha"],
            "per_dimension": {
                k: {"alpha": v["alpha"], "kappa": v["kappa"]}
                for k, v in ag["per_dimension"].items()
            },
            "flagged_dimensions": ag["flagged_dimensions"],
        }
    card = {
        "kind": "participation-card",
        "card_version": CARD_VERSION,
        "system": assessment.system,
        "questionnaire_version": assessment.questionnaire_version,
        "generated_by": f"trustlab {__version__}",
        "assessment": {
            "kind": kind,
            "assessors": [
                {k: a.get(k) for k in ("name", "role", "perspective", "date", "fictitious", "note")}
                for a in assessment.assessors
            ],
        },
        "disclaimer": assessment.disclaimer,
        "tiers": {
            "source": assessment.tiers["source"],
            "verified": assessment.tiers["verified"],
            "boundaries": assessment.tiers["boundaries"],
            "table": assessment.tiers["tiers"],
        },
        "profile": profile,
        "agreement": agreement,
    }
    return to_jsonable(card, "card")


def validate_card(card: Any) -> None:
    """Raise InputError unless ``card`` is valid against ``card.schema.json``.

    >>> validate_card({"kind": "participation-card"})
    Traceback (most recent call last):
    ...
    trustlab.errors.InputError: card: expected a file valid against card.schema.json, got at (top level): 'card_version' is a required property
    """
    from trustlab.governance.questionnaire import _check_schema

    if not isinstance(card, dict):
        raise InputError.bad("card", "a dict (participation_card())", card)
    _check_schema(card, "card.schema.json", "card")
