"""A minimal CASE-Bench context for hand-built records (every required contextual-integrity
key, distinct placeholder values), shared by the context tests of stop 63."""

MINIMAL_CONTEXT = {
    "sender": {"nature_of_the_interaction": "a", "platform_type": "b"},
    "recipient": {"type": "c", "background": "d"},
    "transmission_principle": {
        "sender_purpose": "e",
        "confidentiality": "f",
        "source_accountability": "g",
    },
}
