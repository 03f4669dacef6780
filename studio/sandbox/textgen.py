"""A deterministic local text "model" behind the sandbox's chat, responses and messages routes.

The answer is derived from the conversation (so clients and translations can be checked end to
end), streamed word by word, and it honours what real models honour: a token budget (reported
as truncation), stop sequences, a JSON answer in the requested shape, and tools. A tool is called
when the conversation asks for what it does: its name, description and parameters are matched
against the user's words (with the words people use for common tool kinds: weather, arithmetic,
lookups, time), or when the tool choice requires one (``required``/``any``, or a named tool);
``none`` never calls. Token counts add up: ``input + output == total`` and the output count equals
the pieces sent.

Prompts can ask for failures so clients can test them: ``[fail-midstream]`` breaks the stream
after a few words, ``[status:NNN]`` answers with that HTTP error before anything is sent.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
from django.conf import settings

FAIL_MIDSTREAM = "[fail-midstream]"
_STATUS_MARKER = re.compile(r"\[status:(\d{3})\]")
_COUNT = re.compile(r"\bcount to (\d+)\b", re.IGNORECASE)
_PLACE = re.compile(r"\b(?:in|for|of|about|at)\s+([A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
MESSAGE_OVERHEAD = 3  # tokens each message costs besides its words, as chat formats charge
FAIL_AFTER_PIECES = 3
JSON_PIECE = 6  # characters of a JSON answer per streamed piece (one token each)
# ``response_format: json_object`` answers with this shape.
JSON_OBJECT_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "description": "query"}}}


def word_delay() -> float:
    """Pause between streamed words (0 in tests; small by default so pages show typing)."""
    return settings.STUDIO_SANDBOX_DELAY / 5


def count_tokens(text: str) -> int:
    return len(text.split())


@dataclass(slots=True)
class Tool:
    name: str
    schema: dict[str, Any]
    description: str = ""


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
    forced_tool: str | None = None  # a tool the choice names
    tool_required: bool = False  # some tool must be called
    tools_disabled: bool = False
    json_schema: dict[str, Any] | None = None  # answer with JSON of this shape
    # A tool call the model chose is announced in a sentence first, as Claude models do; OpenAI's
    # models answer with the call alone (``content`` null).
    announces_calls: bool = False

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


def for_answer(result: Completion, answer_id: str) -> Completion:
    """``result`` as the answer ``answer_id`` sends it: its tool call's id is the answer's own, as
    the vendors' ids are. ``generate`` names a call after what it calls, so a conversation that
    asked for the same call twice would otherwise hold one id twice, which a client matching
    results to calls by id cannot tell apart (and Anthropic's API refuses in a history)."""
    call = result.tool_call
    if call is None:
        return result
    return replace(result, tool_call=replace(call, id=stable_id("call_", call.id, answer_id)))


def _split_words(text: str) -> list[str]:
    pieces = [w if i == 0 else " " + w for i, w in enumerate(text.split(" "))]
    return [p for p in pieces if p]


_WORD = re.compile(r"[a-z]+|\d+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_ARITHMETIC = re.compile(r"\d\s*(?:[-+*/x×^%]|times|plus|minus|divided by|multiplied by)\s*-?\d", re.IGNORECASE)
_EXPRESSION = re.compile(r"[-+*/().\d\s^%]*\d[-+*/().\d\s^%]*")
_WORD_OPERATORS = (("multiplied by", "*"), ("divided by", "/"), ("times", "*"), ("plus", "+"), ("minus", "-"),
                   ("×", "*"))
_STOPWORDS = frozenset(
    ["a", "an", "the", "is", "are", "was", "be", "it", "its", "of", "to", "for", "and", "or", "in", "on", "at", "by", "with", "from", "about", "as", "this", "that", "these", "those", "what", "whats", "how", "me", "my", "i", "you", "your", "we", "our", "please", "can", "could", "would", "will", "tell", "give", "show", "do", "does", "did", "now", "today", "current", "currently", "like", "get", "gets", "use", "using", "some", "any", "there", "here", "which", "who"])
# Words people use when they want what a kind of tool does; a tool whose own words meet a set gets all of it.
_KINDS = (
    frozenset(["weather", "forecast", "temperature", "rain", "raining", "rainy", "sunny", "snow", "snowing", "wind", "windy", "cold", "hot", "warm", "humid", "humidity", "umbrella", "celsius", "fahrenheit", "degrees", "outside", "storm", "cloudy"]),
    frozenset(["calculate", "calculator", "calculation", "compute", "arithmetic", "math", "sum", "add", "plus", "minus", "subtract", "times", "multiply", "multiplied", "divide", "divided", "product", "total", "equals", "sqrt", "square", "percent", "evaluate", "expression"]),
    frozenset(["search", "lookup", "look", "find", "information", "info", "wikipedia", "fact", "facts", "news", "latest", "define", "definition", "knowledge", "query"]),
    frozenset(["time", "clock", "hour", "date", "timezone"]),
    frozenset(["stock", "price", "share", "ticker", "market", "quote"]),
)
_QUERY_NAMES = frozenset({"query", "q", "search", "term", "question", "topic", "text", "prompt", "keywords"})
_EXPRESSION_NAMES = frozenset({"expression", "expr", "formula", "equation", "calculation"})


def _stem(word: str) -> str:
    return word[:5] if len(word) > 5 else word


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(_CAMEL.sub(" ", text).replace("_", " ").lower()) if w not in _STOPWORDS]


def _vocabulary(tool: Tool) -> dict[str, float]:
    """The stems a tool answers to, weighted: its name and description, its kind, its parameters."""
    weights: dict[str, float] = {}

    def add(words: list[str], weight: float) -> None:
        for word in words:
            weights[_stem(word)] = max(weights.get(_stem(word), 0.0), weight)

    properties = tool.schema.get("properties") if isinstance(tool.schema, dict) else None
    for name, spec in (properties or {}).items() if isinstance(properties, dict) else ():
        add(_words(name), 0.5)
        if isinstance(spec, dict):
            add(_words(str(spec.get("description") or "")), 0.5)
    # Description words naming a parameter ("for a location") say what it takes, not what it does.
    params = set(weights)
    own = _words(tool.name) + [w for w in _words(tool.description) if _stem(w) not in params]
    add(own, 1.0)
    stems = {_stem(w) for w in own}
    for kind in _KINDS:
        if stems & {_stem(w) for w in kind}:
            add(list(kind), 1.0)
    add(_words(tool.name), 2.0)
    return weights


def _asked(text: str) -> set[str]:
    asked = {_stem(w) for w in _words(text)}
    if _ARITHMETIC.search(text):
        asked.add(_stem("calculate"))
    return asked


def _best_tool(tools: list[Tool], text: str) -> Tool | None:
    """The tool the user's words ask for most (a score of at least 1: a parameter name alone is not
    enough), ties to the first offered; the tool's name spelled out always wins."""
    lowered = text.lower()
    named = next((t for t in tools if t.name.lower() in lowered), None)
    if named is not None:
        return named
    asked = _asked(text)
    scored = [(sum(w for stem, w in _vocabulary(t).items() if stem in asked), -i, t) for i, t in enumerate(tools)]
    score, _, tool = max(scored, key=lambda entry: entry[:2])
    return tool if score >= 1 else None


def _expression(text: str) -> str:
    for word, symbol in _WORD_OPERATORS:
        text = re.sub(rf"\b{word}\b" if word[0].isalpha() else re.escape(word), f" {symbol} ", text,
                      flags=re.IGNORECASE)
    candidates = [m.group(0).strip() for m in _EXPRESSION.finditer(text)]
    with_operator = [c for c in candidates if re.search(r"\d\s*[-+*/^%]\s*[-(\d]", c)]
    return " ".join(max(with_operator or candidates or [""], key=len).split())


def _string_for(name: str, spec: dict[str, Any], text: str) -> str:
    hints = set(_words(name)) | set(_words(str(spec.get("description") or "")))
    if hints & _EXPRESSION_NAMES or (hints & {"arithmetic", "math"}):
        return _expression(text)
    place = _PLACE.search(text)
    if place and not hints & _QUERY_NAMES:
        return place.group(1)
    words = [w.strip("?.!,") for w in text.split() if w.strip("?.!,")]
    if hints & _QUERY_NAMES:
        return " ".join(w for w in words if w.lower() not in _STOPWORDS) or text.strip()
    return place.group(1) if place else (words[-1] if words else "")


def instance(schema: Any, text: str, name: str = "") -> Any:
    """A value of ``schema`` filled from ``text``: numbers, places, the user's words."""
    spec = schema if isinstance(schema, dict) else {}
    kind = spec.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if isinstance(spec.get("enum"), list) and spec["enum"]:
        lowered = text.lower()
        return next((v for v in spec["enum"] if str(v).lower() in lowered), spec["enum"][0])
    if kind == "object" or isinstance(spec.get("properties"), dict):
        properties = spec.get("properties") if isinstance(spec.get("properties"), dict) else {}
        return {key: instance(value, text, key) for key, value in properties.items()}
    if kind == "array":
        return [instance(spec.get("items") or {}, text, name)]
    if kind in ("integer", "number"):
        numbers = _NUMBER.findall(text)
        value: Any = float(numbers[0]) if numbers else 1
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    return _string_for(name, spec, text)


def _arguments_for(tool: Tool, prompt_text: str) -> dict[str, Any]:
    """Fill the tool's parameters from the prompt, less the words that only name the tool."""
    properties = tool.schema.get("properties") if isinstance(tool.schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return {}
    for word in {tool.name, *_CAMEL.sub(" ", tool.name).replace("_", " ").split()}:
        if len(word) > 2:
            prompt_text = re.sub(rf"\b{re.escape(word)}\b", " ", prompt_text, flags=re.IGNORECASE)
    prompt_text = " ".join(prompt_text.split())
    return {name: instance(spec, prompt_text, name) for name, spec in properties.items()}


def _choose_tool(prompt: Prompt, last: Turn) -> Tool | None:
    if not prompt.tools or prompt.tools_disabled or last.role != "user":
        return None
    if prompt.forced_tool:
        return next((t for t in prompt.tools if t.name == prompt.forced_tool), prompt.tools[0])
    best = _best_tool(prompt.tools, last.text)
    return best or (prompt.tools[0] if prompt.tool_required else None)


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
        # A forced call starts at once, as the vendors prefill it; a chosen one is announced first
        # where the model does that.
        forced = prompt.forced_tool is not None or prompt.tool_required
        preamble = _split_words(f"Calling {tool.name}.") if prompt.announces_calls and not forced else []
        return Completion(preamble, "tool_call", input_tokens, tool_call=call,
                          thinking=thinking, fail_after=fail_after)

    if prompt.json_schema is not None:
        user = prompt.last_user()
        value = instance(prompt.json_schema, user.text if user else "", "answer")
        text = orjson.dumps(value).decode()
        pieces = [text[i:i + JSON_PIECE] for i in range(0, len(text), JSON_PIECE)]
        return _within_budget(prompt, pieces, thinking, "stop", None, input_tokens, fail_after)
    text = _answer_text(prompt)
    finish, matched = "stop", None
    cut = min(((text.find(s), s) for s in prompt.stop if s and s in text), default=None)
    if cut is not None:
        text, matched, finish = text[: cut[0]], cut[1], "stop_sequence"
    pieces = _split_words(text) if text else []
    return _within_budget(prompt, pieces, thinking, finish, matched, input_tokens, fail_after)


def _within_budget(prompt: Prompt, pieces: list[str], thinking: str, finish: str, matched: str | None,
                   input_tokens: int, fail_after: int | None) -> Completion:
    """The answer cut to the token budget (``length``), as a model stops when it runs out."""
    budget = prompt.max_tokens
    if budget is not None:
        budget -= count_tokens(thinking)
        if len(pieces) > max(budget, 0):
            pieces, finish, matched = pieces[: max(budget, 0)], "length", None
    return Completion(pieces, finish, input_tokens, stop_sequence=matched, thinking=thinking, fail_after=fail_after)
