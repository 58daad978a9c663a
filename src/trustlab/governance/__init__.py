"""Participation assessment (the Right to AI): who takes part in deciding about an AI system.

A structured self- or external-assessment aid built on Arnstein's (1969) ladder of citizen
participation and on Mushkani et al. (2025), "Position: The Right to AI". A versioned
questionnaire (six governance dimensions x three lifecycle stages, ``questionnaire.yaml``) asks,
for each item, which rung of the ladder describes what happens and for the evidence of it; the
score of a dimension is the highest rung whose evidence is complete, mapped to a tier through a
configurable table (``tiers.yaml``, whose tier names and boundaries are still UNVERIFIED: see
``docs/governance-participation.md``). The profile is a vector of tiers, never one number.
Several assessors' files give per-dimension Krippendorff's alpha and Fleiss' kappa. Outputs: an
Markdown report (the HTML page is built by ``trustlab.audit.sections.participation``) and a
JSON participation card for model cards.

It has no empirical validation and does not measure democratic legitimacy.

Names are imported on first use; loading files needs PyYAML and jsonschema (the ``governance``
extra).

References
----------
Arnstein, S. R. (1969). A Ladder of Citizen Participation. Journal of the American Institute of
Planners 35(4), 216-224.
Mushkani, R., Berard, H., Cohen, A., Koseki, S. (2025). Position: The Right to AI. ICML 2025
(position track), arXiv:2501.17899.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".questionnaire": [
            "Questionnaire",
            "Tiers",
            "Answers",
            "load_questionnaire",
            "load_tiers",
            "load_answers",
            "validate_file",
            "blank_answers",
            "data_path",
            "EXAMPLE_ANSWERS",
            "RUNGS",
        ],
        ".assessment": [
            "ParticipationAssessment",
            "assess",
            "credited_rung",
            "ALPHA_THRESHOLD",
            "DISCLAIMER",
        ],
        ".reliability": [
            "krippendorff_alpha_ordinal",
            "fleiss_kappa",
            "ratings_table",
            "coincidence_matrix",
        ],
        ".card": ["participation_card", "validate_card", "CARD_VERSION"],
        ".report": ["markdown_report", "report_parts"],
    },
)
