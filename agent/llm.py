"""The LLM policy: one litellm call per decision, parsed into tool calls or a reply.

Any litellm model string works (`openai/...`, `anthropic/...`, `ollama/...`, or a
local OpenAI-compatible server through `api_base`). litellm is imported at the
first call, never at import time: it costs seconds and must be switched offline
first. A policy never raises on a model failure: the error is in the output.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agent.llm_cache import ResponseCache
from tools.runtime import ToolCall
from tools.specs import TOOL_SPECS

__all__ = ["LLMPolicy", "PolicyOutput", "load_litellm"]

M = TypeVar("M", bound=BaseModel)

_ERROR_CHARS = 400


def load_litellm() -> Any:
    """Import litellm offline and quiet (no cost-map download, no debug banners)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


@dataclass
class PolicyOutput:
    """One decision of the policy.

    `message` is the assistant message (OpenAI form) to append to the conversation;
    empty when the call itself failed. Exactly one of these holds: `tool_calls` to run,
    a final `reply`, or an `error`. A bad tool call (unknown tool, invalid arguments)
    comes back as an error with `retry_messages`: the assistant message plus a tool
    message per call with the problem, to feed back to the model once.
    """

    message: dict[str, Any]
    tool_calls: list[ToolCall] = field(default_factory=list)
    reply: str | None = None
    error: str | None = None
    retry_messages: list[dict[str, Any]] = field(default_factory=list)
    cached: bool = False
    usage: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class LLMPolicy:
    """Decide the next step of a conversation with a litellm model."""

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        cache: ResponseCache | None = None,
        num_retries: int = 2,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.cache = cache
        self.num_retries = num_retries

    # --- decisions ----------------------------------------------------------------

    def decide(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> PolicyOutput:
        """Ask the model for the next step: tool calls, a reply, or an error (never raises)."""
        tools = tools or None
        key = self._key(messages, tools, {"kind": "decide", "temperature": 0})
        if self.cache is not None:
            stored = self.cache.get(key)
            if stored is not None:
                out = parse_response(stored, tools)
                if out.ok:
                    out.cached = True
                    return out
        try:
            response = self._completion(messages, tools=tools)
            data = _as_dict(response)
        except Exception as exc:  # litellm raises many kinds; a policy never does
            return PolicyOutput(message={}, error=describe_error(exc, self.timeout))
        out = parse_response(data, tools)
        if out.ok and self.cache is not None:
            self.cache.put(key, _cacheable(data, out), model=self.model)
        return out

    def complete_json(self, messages: list[dict[str, Any]], schema_model: type[M]) -> M | None:
        """Structured output: a JSON object validated by `schema_model`, None on any failure."""
        messages = _with_json_instruction(messages, schema_model)
        params = {"kind": "json", "schema": schema_model.__name__, "temperature": 0}
        key = self._key(messages, None, params)
        if self.cache is not None:
            stored = self.cache.get(key)
            if stored is not None:
                parsed = parse_json_model(str(stored.get("content") or ""), schema_model)
                if parsed is not None:
                    return parsed
        try:
            response = self._completion(messages, response_format={"type": "json_object"})
            data = _as_dict(response)
            content = _content_text(data["choices"][0]["message"].get("content"))
        except Exception:
            return None
        parsed = parse_json_model(content, schema_model)
        if parsed is not None and self.cache is not None:
            self.cache.put(key, {"content": content}, model=self.model)
        return parsed

    # --- plumbing -----------------------------------------------------------------

    def _completion(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **extra: Any,
    ) -> Any:
        litellm = load_litellm()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "timeout": self.timeout,
            "num_retries": self.num_retries,
            "api_base": self.api_base,
            "api_key": self.api_key,
            # Drop what a provider does not support (temperature on some reasoning models).
            "drop_params": True,
            **extra,
        }
        if tools:
            kwargs["tools"] = tools
        return litellm.completion(**kwargs)

    def _key(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, params: dict
    ) -> str:
        # The server matters (two local servers may serve different models as "openai/x").
        return ResponseCache.key_for(
            self.model, messages, tools, {**params, "api_base": self.api_base}
        )


# --- parsing (pure functions: also used on cached responses) -----------------------


def parse_response(data: dict[str, Any], tools: list[dict[str, Any]] | None) -> PolicyOutput:
    """Turn an OpenAI-shaped response dict into a PolicyOutput."""
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return PolicyOutput(message={}, error="the model returned no choices")
    raw = choices[0].get("message") or {}
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
    content = _content_text(raw.get("content"))
    raw_calls = raw.get("tool_calls") or []
    if not raw_calls:
        if not content.strip():
            return PolicyOutput(message={}, error="empty reply", usage=usage)
        return PolicyOutput(
            message={"role": "assistant", "content": content}, reply=content, usage=usage
        )

    allowed = _tool_names(tools)
    calls: list[ToolCall] = []
    wire_calls: list[dict[str, Any]] = []
    problems: dict[str, str] = {}
    for raw_call in raw_calls:
        function = raw_call.get("function") or {}
        call_id = str(raw_call.get("id") or f"call_{uuid.uuid4().hex[:12]}")
        name = str(function.get("name") or "")
        arguments = function.get("arguments")
        wire_calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments
                    if isinstance(arguments, str)
                    else json.dumps(arguments or {}),
                },
            }
        )
        args, problem = _check_call(name, arguments, allowed)
        if problem is not None:
            problems[call_id] = problem
        else:
            calls.append(ToolCall(id=call_id, name=name, args=args))

    message: dict[str, Any] = {
        "role": "assistant",
        "content": content or None,
        "tool_calls": wire_calls,
    }
    if not problems:
        return PolicyOutput(message=message, tool_calls=calls, usage=usage)

    # Every tool call needs an answer in the conversation, the valid ones too.
    retry: list[dict[str, Any]] = [message]
    for wire in wire_calls:
        call_id = wire["id"]
        text = (
            f"error: {problems[call_id]}. Call the tool again with valid arguments."
            if call_id in problems
            else "not run: another tool call in this step was invalid. Send all the calls again."
        )
        retry.append(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "name": wire["function"]["name"],
                "content": text,
            }
        )
    return PolicyOutput(
        message=message,
        error="invalid tool call: " + "; ".join(problems.values()),
        retry_messages=retry,
        usage=usage,
    )


def _check_call(name: str, arguments: Any, allowed: set[str]) -> tuple[dict[str, Any], str | None]:
    """The decoded arguments and a problem (None when the call is valid)."""
    if name not in allowed:
        known = ", ".join(sorted(allowed)) or "none"
        return {}, f"unknown tool {name!r}; available tools: {known}"
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        args: Any = {}
    elif isinstance(arguments, str):
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return {}, f"arguments for {name} are not valid JSON: {exc.msg}"
    else:
        args = arguments
    if not isinstance(args, dict):
        return {}, f"arguments for {name} must be a JSON object, got {type(args).__name__}"
    spec = TOOL_SPECS.get(name)
    if spec is not None:
        try:
            spec.args_model.model_validate(args)
        except ValidationError as exc:
            return {}, f"invalid arguments for {name}: {_describe(exc)}"
    return args, None


def _describe(exc: ValidationError) -> str:
    parts: list[str] = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            parts.append(f"missing required argument {where!r}")
        elif err["type"] == "extra_forbidden":
            parts.append(f"unexpected argument {where!r}")
        else:
            parts.append(f"argument {where!r}: {err['msg']}")
    return "; ".join(parts)


def _tool_names(tools: list[dict[str, Any]] | None) -> set[str]:
    names: set[str] = set()
    for tool in tools or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            names.add(str(function["name"]))
    return names


def _content_text(content: Any) -> str:
    """Message content as text (some providers send a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(
            str(part.get("text") or "") if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


def _as_dict(response: Any) -> dict[str, Any]:
    if isinstance(response, dict):
        return response
    dumped = response.model_dump()
    if not isinstance(dumped, dict):
        raise TypeError(f"unexpected response type {type(response).__name__}")
    return dumped


def _cacheable(data: dict[str, Any], out: PolicyOutput) -> dict[str, Any]:
    """The minimal OpenAI-shaped response that parses back to `out`."""
    return {
        "model": data.get("model"),
        "choices": [{"index": 0, "message": out.message}],
        "usage": out.usage,
    }


def describe_error(exc: BaseException, timeout: float | None = None) -> str:
    """A one-line, user-facing description of a failed model call."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())[:_ERROR_CHARS]
    lowered = (name + " " + text).lower()
    if "timeout" in lowered or "timed out" in lowered:
        after = f" after {timeout:g} s" if timeout else ""
        return f"the model did not answer in time{after} ({name})"
    if "ratelimit" in lowered or "rate limit" in lowered:
        return f"the model provider is rate limiting requests ({name}): {text}"
    if "connection" in lowered:
        return f"cannot reach the model ({name}): {text}"
    return f"model call failed ({name}): {text}"


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def parse_json_model(text: str, schema_model: type[M]) -> M | None:
    """Validate a JSON object from model text (code fences and chatter tolerated)."""
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    candidates = [text]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end and (start, end) != (0, len(text) - 1):
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return schema_model.model_validate_json(candidate)
        except ValidationError:
            continue
    return None


def _with_json_instruction(
    messages: list[dict[str, Any]], schema_model: type[BaseModel]
) -> list[dict[str, Any]]:
    """JSON mode needs the word JSON in the prompt; add the schema when the caller did not."""
    if any("json" in _content_text(m.get("content")).lower() for m in messages):
        return messages
    schema = json.dumps(schema_model.model_json_schema(), separators=(",", ":"))
    note = {"role": "system", "content": f"Answer with one JSON object matching: {schema}"}
    return [*messages, note]
