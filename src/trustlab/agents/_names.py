"""Text compared as text: NFC, Unicode's composed form.

"café" typed as "cafe" + a combining acute accent is the same text as the one-character "é", but
not the same Python string. The provenance and sensitive-value checks compare values in this form;
rule ids, predicate and action names are brought to it once, where they enter (a policy's data, an
action's name, the predicates recorded on a step, a guardrail's evidence, an evaluation case's
expected rule ids): a decomposed action name was allowed as "no rule covers this action" while its
composed spelling was blocked.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

from trustlab.errors import InputError

__all__ = ["Name", "NameKeys", "nfc", "nfc_keys"]


def nfc(text: Any) -> Any:
    """``text`` in NFC (a letter and its combining accent become the one-letter form); anything
    but a string as it is (for the caller to refuse)."""
    return unicodedata.normalize("NFC", text) if isinstance(text, str) else text


def nfc_keys(value: Any, argument: str | None = None) -> Any:
    """A mapping with its string keys in NFC (anything else as it is, for pydantic to refuse).

    Two keys that are one name in NFC are refused (one value would silently replace the other):
    a ``ValueError`` (inside a pydantic model), or an ``InputError`` naming ``argument``.
    """
    if not isinstance(value, Mapping):
        return value
    out: dict[Any, Any] = {}
    spelt: dict[Any, Any] = {}
    for key, v in value.items():
        name = nfc(key) if isinstance(key, str) else key
        if name in out:
            message = (
                f"expected each name once, got {spelt[name]!r} and {key!r}, the same name "
                f"{name!r} (composed, NFC) spelt two ways"
            )
            if argument is None:
                raise ValueError(message)
            raise InputError(f"{argument}: {message}", argument=argument)
        out[name], spelt[name] = v, key
    return out


#: A name (rule id, predicate, action, rule logic) validated into NFC.
Name = Annotated[str, AfterValidator(nfc)]
#: A mapping keyed by names, its keys validated into NFC (two spellings of one name refused).
NameKeys = BeforeValidator(lambda value: nfc_keys(value))
