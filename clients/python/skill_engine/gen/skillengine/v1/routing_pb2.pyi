from google.protobuf import struct_pb2 as _struct_pb2
from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
HARDENING_FULL: Hardening
HARDENING_NONE: Hardening
HARDENING_SHORT: Hardening
HARDENING_UNSPECIFIED: Hardening
ROUTE_MODE_FUSED: RouteMode
ROUTE_MODE_KEYWORDS: RouteMode
ROUTE_MODE_RRF: RouteMode
ROUTE_MODE_UNSPECIFIED: RouteMode
ROUTE_MODE_VECTORS: RouteMode
TOOL_FORMAT_ANTHROPIC: ToolFormat
TOOL_FORMAT_OPENAI: ToolFormat
TOOL_FORMAT_UNSPECIFIED: ToolFormat

class ExampleQueryRank(_message.Message):
    __slots__ = ["found", "has_relevance", "outranked_by", "query", "rank", "relevance"]
    FOUND_FIELD_NUMBER: _ClassVar[int]
    HAS_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    OUTRANKED_BY_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    found: bool
    has_relevance: bool
    outranked_by: _containers.RepeatedScalarFieldContainer[str]
    query: str
    rank: int
    relevance: float
    def __init__(self, query: _Optional[str] = ..., rank: _Optional[int] = ..., relevance: _Optional[float] = ..., has_relevance: bool = ..., outranked_by: _Optional[_Iterable[str]] = ..., found: bool = ...) -> None: ...

class RecordRouteFeedbackRequest(_message.Message):
    __slots__ = ["fallback", "name", "route_id", "success"]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROUTE_ID_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    fallback: bool
    name: str
    route_id: str
    success: bool
    def __init__(self, route_id: _Optional[str] = ..., name: _Optional[str] = ..., success: bool = ..., fallback: bool = ...) -> None: ...

class RecordRouteFeedbackResponse(_message.Message):
    __slots__ = ["credited"]
    CREDITED_FIELD_NUMBER: _ClassVar[int]
    credited: bool
    def __init__(self, credited: bool = ...) -> None: ...

class ResetSkillQualityRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ResetSkillQualityResponse(_message.Message):
    __slots__ = ["applied", "completions", "fallbacks", "routed_completions", "routed_selections", "selections", "skill"]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    FALLBACKS_FIELD_NUMBER: _ClassVar[int]
    ROUTED_COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    ROUTED_SELECTIONS_FIELD_NUMBER: _ClassVar[int]
    SELECTIONS_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    applied: int
    completions: int
    fallbacks: int
    routed_completions: int
    routed_selections: int
    selections: int
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., routed_selections: _Optional[int] = ..., routed_completions: _Optional[int] = ..., selections: _Optional[int] = ..., applied: _Optional[int] = ..., completions: _Optional[int] = ..., fallbacks: _Optional[int] = ...) -> None: ...

class RouteSkillsRequest(_message.Message):
    __slots__ = ["format", "hardening", "limit", "min_relevance", "mode", "query"]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    HARDENING_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MIN_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    format: ToolFormat
    hardening: Hardening
    limit: int
    min_relevance: float
    mode: RouteMode
    query: str
    def __init__(self, query: _Optional[str] = ..., limit: _Optional[int] = ..., format: _Optional[_Union[ToolFormat, str]] = ..., mode: _Optional[_Union[RouteMode, str]] = ..., min_relevance: _Optional[float] = ..., hardening: _Optional[_Union[Hardening, str]] = ...) -> None: ...

class RouteSkillsResponse(_message.Message):
    __slots__ = ["degraded", "no_fit", "route_id", "skills", "warnings"]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    NO_FIT_FIELD_NUMBER: _ClassVar[int]
    ROUTE_ID_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    degraded: _containers.RepeatedScalarFieldContainer[str]
    no_fit: bool
    route_id: str
    skills: _containers.RepeatedCompositeFieldContainer[RoutedSkill]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, route_id: _Optional[str] = ..., skills: _Optional[_Iterable[_Union[RoutedSkill, _Mapping]]] = ..., degraded: _Optional[_Iterable[str]] = ..., warnings: _Optional[_Iterable[str]] = ..., no_fit: bool = ...) -> None: ...

class RoutedSkill(_message.Message):
    __slots__ = ["applied", "completions", "description", "fallbacks", "has_relevance", "has_success_rate", "instructions", "keyword_rank", "keyword_score", "kind", "name", "parameters_schema", "parameters_schema_json", "relevance", "score", "selections", "skill_id", "status", "success_rate", "tool_definition", "tool_definition_json", "vector_rank", "vector_score", "warnings"]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FALLBACKS_FIELD_NUMBER: _ClassVar[int]
    HAS_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    HAS_SUCCESS_RATE_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_RANK_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_SCORE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SELECTIONS_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_RATE_FIELD_NUMBER: _ClassVar[int]
    TOOL_DEFINITION_FIELD_NUMBER: _ClassVar[int]
    TOOL_DEFINITION_JSON_FIELD_NUMBER: _ClassVar[int]
    VECTOR_RANK_FIELD_NUMBER: _ClassVar[int]
    VECTOR_SCORE_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    applied: int
    completions: int
    description: str
    fallbacks: int
    has_relevance: bool
    has_success_rate: bool
    instructions: str
    keyword_rank: int
    keyword_score: float
    kind: str
    name: str
    parameters_schema: str
    parameters_schema_json: _struct_pb2.Struct
    relevance: float
    score: float
    selections: int
    skill_id: str
    status: _skills_pb2.SkillStatus
    success_rate: float
    tool_definition: str
    tool_definition_json: _struct_pb2.Struct
    vector_rank: int
    vector_score: float
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters_schema: _Optional[str] = ..., score: _Optional[float] = ..., status: _Optional[_Union[_skills_pb2.SkillStatus, str]] = ..., success_rate: _Optional[float] = ..., has_success_rate: bool = ..., warnings: _Optional[_Iterable[str]] = ..., tool_definition: _Optional[str] = ..., keyword_rank: _Optional[int] = ..., vector_rank: _Optional[int] = ..., relevance: _Optional[float] = ..., has_relevance: bool = ..., keyword_score: _Optional[float] = ..., vector_score: _Optional[float] = ..., kind: _Optional[str] = ..., skill_id: _Optional[str] = ..., selections: _Optional[int] = ..., applied: _Optional[int] = ..., completions: _Optional[int] = ..., fallbacks: _Optional[int] = ..., instructions: _Optional[str] = ..., tool_definition_json: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., parameters_schema_json: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class RoutingGateReport(_message.Message):
    __slots__ = ["degraded", "examples", "shadowed", "warnings"]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    EXAMPLES_FIELD_NUMBER: _ClassVar[int]
    SHADOWED_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    degraded: _containers.RepeatedScalarFieldContainer[str]
    examples: _containers.RepeatedCompositeFieldContainer[ExampleQueryRank]
    shadowed: _containers.RepeatedCompositeFieldContainer[ShadowedQuery]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, examples: _Optional[_Iterable[_Union[ExampleQueryRank, _Mapping]]] = ..., shadowed: _Optional[_Iterable[_Union[ShadowedQuery, _Mapping]]] = ..., warnings: _Optional[_Iterable[str]] = ..., degraded: _Optional[_Iterable[str]] = ...) -> None: ...

class ShadowedQuery(_message.Message):
    __slots__ = ["query", "rank", "skill", "skill_rank"]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    SKILL_RANK_FIELD_NUMBER: _ClassVar[int]
    query: str
    rank: int
    skill: str
    skill_rank: int
    def __init__(self, skill: _Optional[str] = ..., query: _Optional[str] = ..., rank: _Optional[int] = ..., skill_rank: _Optional[int] = ...) -> None: ...

class ToolFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class RouteMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Hardening(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
