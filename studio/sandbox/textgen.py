"""A deterministic local text "model" behind the sandbox's chat, responses and messages routes.

The answer is derived from the conversation (so clients and translations can be checked end to
end), streamed word by word, and it honours what real models honour: a token budget (reported
as truncation), stop sequences, and a tool call when tools are offered and the prompt names one.
Token counts add up: ``input + output == total`` and the output count equals the pieces sent.

Prompts can ask for failures so clients can test them: ``[fail-midstream]`` breaks the stream
after a few words, ``[status:NNN]`` answers with that HTTP error before anything is sent.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

FAIL_MIDSTREAM = "[fail-midstream]"
_STATUS_MARKER = re.compile(r"\[status:(\d{3})\]")
_COUNT = re.compile(r"\bcount to (\d+)\b", re.IGNORECASE)
_PLACE = re.compile(r"\b(?:in|for|of|about|at)\s+([A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
MESSAGE_OVERHEAD = 3  # tokens each message costs besides its words, as chat formats charge
FAIL_AFTER_PIECES = 3


def word_delay() -> float:
    """Pause between streamed words (0 in tests; small by default so pages show typing)."""
    return float(os.environ.get("STUDIO_SANDBOX_DELAY", "0.15")) / 5


def count_tokens(text: str) -> int:
    return len(text.split())


@dataclass(slots=True)
class Tool:
    name: str
    schema: dict[str, Any]


@dataclass(slots=True)
class Turn:
    role: str  # "user", "assistant" or "tool"
    text: str
    images: int = 0
    tool_name: str = ""


@dataclass(slots=True)
class Prompt:
    """A conversation in protocol-neutral form: each protocol module builds one."""

    system: str = ""
    turns: list[Turn] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)
    max_tokens: int | None = None
    stop: list[str] = field(default_factory=list)
    thinking: bool = False
    forced_tool: str | None = None
    tools_disabled: bool = False

    def last_user(self) -> Turn | None:
        return next((t for t in reversed(self.turns) if t.role == "user"), None)

    def input_tokens(self) -> int:
        total = count_tokens(self.system) + (MESSAGE_OVERHEAD if self.system else 0)
        for turn in self.turns:
            total += count_tokens(turn.text) + MESSAGE_OVERHEAD + 85 * turn.images
        for tool in self.tools:
            total += count_tokens(tool.name) + count_tokens(orjson.dumps(tool.schema).decode())
        return total

    def all_text(self) -> str:
        return " ".join([self.system, *(t.text for t in self.turns)])


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as both protocols carry it in the end

    def tokens(self) -> int:
        return 1 + count_tokens(self.arguments.replace(",", " ").replace(":", " "))


@dataclass(slots=True)
class Completion:
    pieces: list[str]  # the text as streamed; "".join(pieces) == text
    finish: str  # "stop", "length", "stop_sequence" or "tool_call"
    input_tokens: int
    stop_sequence: str | None = None
    tool_call: ToolCall | None = None
    thinking: str = ""
    fail_after: int | None = None

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    @property
    def output_tokens(self) -> int:
        thinking = count_tokens(self.thinking)
        return len(self.pieces) + thinking + (self.tool_call.tokens() if self.tool_call else 0)


class StatusRequested(Exception):
    """The prompt asked for an HTTP error (``[status:NNN]``)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"requested status {status}")
        self.status = status


def stable_id(prefix: str, *parts: str) -> str:
    digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:24]
    return f"{prefix}{digest}"


def _split_words(text: str) -> list[str]:
    pieces = [w if i == 0 else " " + w for i, w in enumerate(text.split(" "))]
    return [p for p in pieces if p]


def _arguments_for(tool: Tool, prompt_text: str) -> dict[str, Any]:
    """Fill the tool's parameters from the prompt: a capitalised place, a number, or a word."""
    properties = tool.schema.get("properties") if isinstance(tool.schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return {}
    place = _PLACE.search(prompt_text)
    numbers = _NUMBER.findall(prompt_text)
    words = [w.strip("?.!,") for w in prompt_text.split() if w.strip("?.!,")]
    args: dict[str, Any] = {}
    for name, spec in properties.items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind in ("integer", "number"):
            value: Any = float(numbers[0]) if numbers else 1
            args[name] = int(value) if kind == "integer" else value
        elif kind == "boolean":
            args[name] = True
        elif isinstance(spec, dict) and isinstance(spec.get("enum"), list) and spec["enum"]:
            args[name] = spec["enum"][0]
        else:
            args[name] = place.group(1) if place else (words[-1] if words else "")
    return args


def _choose_tool(prompt: Prompt, last: Turn) -> Tool | None:
    if not prompt.tools or prompt.tools_disabled or last.role != "user":
        return None
    if prompt.forced_tool:
        return next((t for t in prompt.tools if t.name == prompt.forced_tool), prompt.tools[0])
    lowered = last.text.lower()
    return next((t for t in prompt.tools if t.name.lower() in lowered), None)


def _answer_text(prompt: Prompt) -> str:
    last = prompt.turns[-1] if prompt.turns else None
    if last is not None and last.role == "tool":
        name = f" {last.tool_name}" if last.tool_name else ""
        return f"The tool{name} returned: {last.text.strip()}"
    user = prompt.last_user()
    said = " ".join((user.text if user else "").split())
    match = _COUNT.search(said)
    if match:
        return " ".join(str(i) for i in range(1, min(int(match.group(1)), 2000) + 1))
    text = f"You said: {said}" if said else "Hello! How can I help?"
    if user is not None and user.images:
        text += f" I see {user.images} image{'s' if user.images > 1 else ''}."
    return text


def generate(prompt: Prompt) -> Completion:
    """The whole answer; streaming routes send ``pieces`` one at a time."""
    everything = prompt.all_text()
    status = _STATUS_MARKER.search(everything)
    if status:
        raise StatusRequested(int(status.group(1)))
    fail_after = FAIL_AFTER_PIECES if FAIL_MIDSTREAM in everything else None
    input_tokens = prompt.input_tokens()
    last = prompt.turns[-1] if prompt.turns else Turn("user", "")
    thinking = f"The user wrote {count_tokens(last.text)} words; answer plainly." if prompt.thinking else ""

    tool = _choose_tool(prompt, last)
    if tool is not None:
        arguments = orjson.dumps(_arguments_for(tool, last.text)).decode()
        call = ToolCall(stable_id("call_", tool.name, arguments, last.text), tool.name, arguments)
        return Completion(_split_words(f"Calling {tool.name}."), "tool_call", input_tokens, tool_call=call,
                          thinking=thinking, fail_after=fail_after)

    text = _answer_text(prompt)
    finish, matched = "stop", None
    cut = min(((text.find(s), s) for s in prompt.stop if s and s in text), default=None)
    if cut is not None:
        text, matched, finish = text[: cut[0]], cut[1], "stop_sequence"
    pieces = _split_words(text) if text else []
    budget = prompt.max_tokens
    if budget is not None:
        budget -= count_tokens(thinking)
        if len(pieces) > max(budget, 0):
            pieces, finish, matched = pieces[: max(budget, 0)], "length", None
    return Completion(pieces, finish, input_tokens, stop_sequence=matched, thinking=thinking, fail_after=fail_after)
