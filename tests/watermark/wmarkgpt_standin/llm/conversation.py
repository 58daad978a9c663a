"""A two-role conversation: ``ROLE: message`` turns ending in ``sep`` (user) or ``sep2``
(assistant); an empty message leaves ``ROLE:`` open for the answer."""

from __future__ import annotations


class Conversation:
    def __init__(self, roles, sep, sep2, messages=None):
        self.roles = tuple(roles)
        self.sep = sep
        self.sep2 = sep2
        self.messages = [list(m) for m in messages or []]

    def copy(self):
        return Conversation(self.roles, self.sep, self.sep2, self.messages)

    def append_message(self, role, message):
        self.messages.append([role, message])

    def get_prompt(self):
        text = ""
        for i, (role, message) in enumerate(self.messages):
            end = self.sep if i % 2 == 0 else self.sep2
            text += f"{role}: {message}{end}" if message else f"{role}:"
        return text


conv_templates = {"mplug_owl2": Conversation(("USER", "ASSISTANT"), " ", "</s>")}
