"""An OpenAI-compatible `/chat/completions` endpoint over real loopback HTTP that answers from a rule.

The answer names the first method or type declared in the user message ("Describes <name>."), so
a test can tell which chunk a description belongs to; it can fail, stall or answer garbage.
"""

from __future__ import annotations

import re
import time
from typing import Any

from testkit.loopback import JsonEndpoint

_SYMBOL = re.compile(r"^symbol: (\S+)$", re.MULTILINE)


class FakeChat(JsonEndpoint):
    """Start with `with FakeChat() as chat:`; point settings at `chat.base_url` (it ends in /v1)."""

    route = "/v1/chat/completions"

    def __init__(self, answer: str = "Describes {name}, an invoice step.") -> None:
        super().__init__()
        self.template = answer
        self.status = 200
        self.delay_s = 0.0

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def answer(self, body: dict[str, Any]) -> tuple[int, object]:
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.status != 200:
            return self.status, {"error": {"message": "unavailable"}}
        match = _SYMBOL.search(body["messages"][-1]["content"])
        name = match.group(1).rsplit(".", 1)[-1] if match else "?"
        message = {"role": "assistant", "content": self.template.format(name=name)}
        return 200, {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}
