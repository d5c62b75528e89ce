"""What the client's calls answer: plain, immutable Python objects over the service's messages.

Each keeps the message it was made from as ``raw`` for fields this layer does not surface.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from google.protobuf.descriptor import EnumDescriptor

from .gen.skillengine.v1 import execution_pb2, learning_pb2, registration_pb2, routing_pb2


def enum_label(enum: EnumDescriptor, number: int) -> str:
    """``SKILL_STATUS_ACTIVE`` of enum SkillStatus as ``"active"``; the number itself when unknown."""
    value = enum.values_by_number.get(number)
    if value is None:
        return str(number)
    prefix = _enum_prefix(enum)
    name = str(value.name)
    return (name[len(prefix) :] if name.startswith(prefix) else name).lower()


def enum_number(enum: EnumDescriptor, label: str) -> int:
    """The number of ``"active"``, ``"ACTIVE"`` or ``"SKILL_STATUS_ACTIVE"`` in an enum; ValueError otherwise."""
    wanted = label.strip().upper()
    prefix = _enum_prefix(enum)
    for value in enum.values:
        if value.name in (wanted, prefix + wanted):
            return int(value.number)
    choices = ", ".join(
        repr(value.name[len(prefix) :].lower()) for value in enum.values if not value.name.endswith("_UNSPECIFIED")
    )
    raise ValueError(f"{label!r} is not a {enum.name}: use one of {choices}")


def _enum_prefix(enum: EnumDescriptor) -> str:
    # Protobuf style prefixes every value with the enum's name: the zero value shows it.
    zero = enum.values_by_number.get(0)
    return zero.name[: -len("UNSPECIFIED")] if zero is not None and zero.name.endswith("_UNSPECIFIED") else ""


def _parse_json(text: str) -> Tuple[bool, Any]:
    if text.strip() == "":
        return False, None
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


@dataclass(frozen=True)
class OutputFile:
    """A file the run left under ``/sandbox/out/`` (docs/files.md#output-files)."""

    path: str
    """Relative to ``/sandbox/out/``."""
    content: bytes
    """The file's bytes, or its first bytes when ``truncated``."""
    size_bytes: int
    """The whole file's size, also when ``content`` is truncated."""
    sha256: str
    media_type: str
    truncated: bool

    def text(self, encoding: str = "utf-8") -> str:
        """The content decoded as text."""
        return self.content.decode(encoding)

    @classmethod
    def from_message(cls, message: execution_pb2.OutputFile) -> "OutputFile":
        return cls(
            path=message.path,
            content=bytes(message.content),
            size_bytes=message.size_bytes,
            sha256=message.sha256,
            media_type=message.media_type,
            truncated=message.truncated,
        )


@dataclass(frozen=True)
class RunResult:
    """One sandbox run: an invocation's, or the test run of a registration.

    ``success`` is the service's verdict: exit code 0 and something printed. A failed run is an
    answer, not an exception: ``error_summary`` says why in one line.
    """

    success: bool
    exit_code: int
    stdout: str
    stderr: str
    error_summary: str
    """One line saying why the run failed; empty on success."""
    duration_ms: int
    timed_out: bool
    oom_killed: bool
    stdout_truncated: bool
    stderr_truncated: bool
    is_json: bool
    """Whether ``stdout`` is one JSON document."""
    json: Any
    """``stdout`` parsed as JSON when it is JSON (``is_json``), else None. Parsed here by Python's json
    module, so integers stay exact; the service's own parse, whose numbers are doubles, is the message's
    ``result_json`` (``InvocationResult.raw.result.result_json``; docs/api.md#json-as-structures)."""

    @staticmethod
    def fields_of(message: execution_pb2.ExecutionResult) -> Dict[str, Any]:
        is_json, parsed = _parse_json(message.stdout)
        return dict(
            success=message.success,
            exit_code=message.exit_code,
            stdout=message.stdout,
            stderr=message.stderr,
            error_summary=message.error_summary,
            duration_ms=message.duration_ms,
            timed_out=message.timed_out,
            oom_killed=message.oom_killed,
            stdout_truncated=message.stdout_truncated,
            stderr_truncated=message.stderr_truncated,
            is_json=is_json,
            json=parsed,
        )

    @classmethod
    def from_message(cls, message: execution_pb2.ExecutionResult) -> "RunResult":
        return cls(**RunResult.fields_of(message))


@dataclass(frozen=True)
class InvocationResult(RunResult):
    """The answer of :meth:`SkillEngine.invoke`: the run, plus what the service adds to it."""

    name: str
    """The skill that ran."""
    version: int
    """The version that ran."""
    invocation_id: str
    """Names this invocation for :meth:`SkillEngine.record_outcome`; empty when it could not be recorded."""
    warnings: Tuple[str, ...]
    """What the caller must know: files that did not come back, a failed re-test of a dependency, ..."""
    files: Tuple[OutputFile, ...]
    """The files the run left under ``/sandbox/out/``."""
    raw: execution_pb2.InvokeSkillResponse = field(repr=False, compare=False)

    @classmethod
    def from_response(cls, name: str, response: execution_pb2.InvokeSkillResponse) -> "InvocationResult":
        return cls(
            **RunResult.fields_of(response.result),
            name=name,
            version=response.version,
            invocation_id=response.invocation_id,
            warnings=tuple(response.warnings),
            files=tuple(OutputFile.from_message(f) for f in response.files),
            raw=response,
        )


@dataclass(frozen=True)
class Registration:
    """The answer of :meth:`SkillEngine.register`: the skill as stored, and the test run that admitted it."""

    name: str
    version: int
    status: str
    """``"active"``, ``"degraded"``, ... (SkillStatus without its prefix, in lower case)."""
    unchanged: bool
    """The registration was the active version as it is (same code, same declarations): nothing ran and
    ``version`` is that version (docs/skill-lifecycle.md#identical-registrations)."""
    test: Optional[RunResult]
    """The test run that admitted the version; None when ``unchanged``."""
    normalizations: Tuple[str, ...]
    """What intake changed in the submitted code before testing it (send clean code next time)."""
    warnings: Tuple[str, ...]
    """Content-guard findings of "caution" severity, as ``"rule_id (line N): message"``."""
    similar_skills: Tuple[str, ...]
    """Names of visible skills that resemble this one (docs/learning.md#near-duplicates)."""
    raw: registration_pb2.RegisterSkillResponse = field(repr=False, compare=False)

    @classmethod
    def from_response(cls, response: registration_pb2.RegisterSkillResponse) -> "Registration":
        return cls(
            name=response.skill.name,
            version=response.skill.version,
            status=enum_label(response.skill.DESCRIPTOR.fields_by_name["status"].enum_type, response.skill.status),
            unchanged=response.unchanged,
            test=RunResult.from_message(response.test) if response.HasField("test") else None,
            normalizations=tuple(response.normalizations),
            warnings=tuple(f"{w.rule_id} (line {w.line}): {w.message}" for w in response.warnings),
            similar_skills=tuple(s.name for s in response.similar_skills),
            raw=response,
        )


@dataclass(frozen=True)
class RoutedSkill:
    """One skill a route found for the query, with the tool definition to hand to a model."""

    name: str
    description: str
    """The description, hardened as the route asked (``hardening``: by default one line on calling it)."""
    parameters: Dict[str, Any]
    """The skill's parameters schema (JSON Schema), parsed."""
    tool: Dict[str, Any]
    """The tool definition in the format the route asked for (OpenAI or Anthropic), parsed."""
    score: float
    relevance: Optional[float]
    """Calibrated probability in [0, 1] that the query needs this skill; None when the route had no vector source."""
    status: str
    success_rate: Optional[float]
    """None until the skill has been invoked."""
    kind: str
    """``"plain"``, ``"composed"``, ``"directory"`` or ``"instructions"`` (nothing to run: read its content)."""
    instructions: str
    """For an instructions-only skill (``tool`` is then empty): what the instructions are for and how to read
    their body (``GetSkillContent``). Put it in the model's context; never offer it as a tool."""
    warnings: Tuple[str, ...]
    raw: routing_pb2.RoutedSkill = field(repr=False, compare=False)

    @classmethod
    def from_message(cls, message: routing_pb2.RoutedSkill) -> "RoutedSkill":
        parameters = _parse_json(message.parameters_schema)[1]
        tool = _parse_json(message.tool_definition)[1]
        return cls(
            name=message.name,
            description=message.description,
            parameters=parameters if isinstance(parameters, dict) else {"type": "object"},
            tool=tool if isinstance(tool, dict) else {},
            score=message.score,
            relevance=message.relevance if message.has_relevance else None,
            status=enum_label(message.DESCRIPTOR.fields_by_name["status"].enum_type, message.status),
            success_rate=message.success_rate if message.has_success_rate else None,
            kind=message.kind,
            instructions=message.instructions,
            warnings=tuple(message.warnings),
            raw=message,
        )


@dataclass(frozen=True)
class Route:
    """The answer of :meth:`SkillEngine.route`: the few skills that matter for a query, best first."""

    route_id: str
    """Pass it to :meth:`SkillEngine.invoke` (``route_id=``) so that routing learns from the outcome."""
    skills: Tuple[RoutedSkill, ...]
    degraded: Tuple[str, ...]
    """Sources that could not answer and what was used instead."""
    warnings: Tuple[str, ...]
    no_fit: bool
    """True when nothing in the library fits the query (``skills`` is empty on purpose): do the task
    another way rather than force a skill onto it."""
    raw: routing_pb2.RouteSkillsResponse = field(repr=False, compare=False)

    @classmethod
    def from_response(cls, response: routing_pb2.RouteSkillsResponse) -> "Route":
        return cls(
            route_id=response.route_id,
            skills=tuple(RoutedSkill.from_message(s) for s in response.skills),
            degraded=tuple(response.degraded),
            warnings=tuple(response.warnings),
            no_fit=response.no_fit,
            raw=response,
        )

    def tools(self) -> "ToolList":
        """The routed skills' tool definitions, in the format the route was asked for. Instructions-only
        skills are not tools: they are left out here (see :meth:`instructions`)."""
        return ToolList((skill.tool for skill in self.skills if skill.tool), route_id=self.route_id)

    def instructions(self) -> Tuple[str, ...]:
        """The routed instructions-only skills' texts, for the model's context (not its ``tools``)."""
        return tuple(skill.instructions for skill in self.skills if skill.instructions)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.skills)

    def __len__(self) -> int:
        return len(self.skills)


class ToolList(List[Dict[str, Any]]):
    """Tool definitions ready for a model's ``tools`` parameter: a plain list (JSON-serializable as is)
    that also remembers the route it came from, to pass back with :meth:`SkillEngine.invoke`."""

    def __init__(self, tools: Any = (), route_id: str = "") -> None:
        super().__init__(tools)
        self.route_id = route_id


@dataclass(frozen=True)
class Outcome:
    """The answer of :meth:`SkillEngine.record_outcome`."""

    name: str
    invocation_id: str
    success: bool
    """The verdict recorded."""
    exit_code_success: bool
    """The verdict the exit code had given that invocation."""
    overridden: bool
    """Whether the recorded verdict differs from the exit code's."""
    status: str
    """The skill's status after the outcome counted."""
    raw: learning_pb2.RecordSkillOutcomeResponse = field(repr=False, compare=False)

    @classmethod
    def from_response(
        cls, name: str, invocation_id: str, success: bool, response: learning_pb2.RecordSkillOutcomeResponse
    ) -> "Outcome":
        return cls(
            name=name,
            invocation_id=invocation_id,
            success=success,
            exit_code_success=response.exit_code_success,
            overridden=response.overridden,
            status=enum_label(response.skill.DESCRIPTOR.fields_by_name["status"].enum_type, response.skill.status),
            raw=response,
        )
