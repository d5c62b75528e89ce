from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

CANDIDATE_STATUS_CANDIDATE: CandidateStatus
CANDIDATE_STATUS_DISMISSED: CandidateStatus
CANDIDATE_STATUS_PROMOTED: CandidateStatus
CANDIDATE_STATUS_UNSPECIFIED: CandidateStatus
DESCRIPTOR: _descriptor.FileDescriptor
ON_DUPLICATE_REJECT: OnDuplicate
ON_DUPLICATE_UNSPECIFIED: OnDuplicate
ON_DUPLICATE_WARN: OnDuplicate

class Candidate(_message.Message):
    __slots__ = ["agent_id", "created_at", "description", "hash", "id", "name", "occurrences", "promoted_at", "session_keys", "skill_name", "status", "tool_sequence"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OCCURRENCES_FIELD_NUMBER: _ClassVar[int]
    PROMOTED_AT_FIELD_NUMBER: _ClassVar[int]
    SESSION_KEYS_FIELD_NUMBER: _ClassVar[int]
    SKILL_NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TOOL_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    created_at: str
    description: str
    hash: str
    id: int
    name: str
    occurrences: int
    promoted_at: str
    session_keys: _containers.RepeatedScalarFieldContainer[str]
    skill_name: str
    status: CandidateStatus
    tool_sequence: _containers.RepeatedCompositeFieldContainer[SequenceStep]
    def __init__(self, id: _Optional[int] = ..., agent_id: _Optional[str] = ..., hash: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., tool_sequence: _Optional[_Iterable[_Union[SequenceStep, _Mapping]]] = ..., session_keys: _Optional[_Iterable[str]] = ..., occurrences: _Optional[int] = ..., status: _Optional[_Union[CandidateStatus, str]] = ..., created_at: _Optional[str] = ..., promoted_at: _Optional[str] = ..., skill_name: _Optional[str] = ...) -> None: ...

class DismissCandidateRequest(_message.Message):
    __slots__ = ["id"]
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class DismissCandidateResponse(_message.Message):
    __slots__ = ["candidate"]
    CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    candidate: Candidate
    def __init__(self, candidate: _Optional[_Union[Candidate, _Mapping]] = ...) -> None: ...

class EvolutionEvent(_message.Message):
    __slots__ = ["at", "candidate_id", "from_version", "overlap", "skill_name", "summary", "to_version"]
    AT_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_FIELD_NUMBER: _ClassVar[int]
    SKILL_NAME_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TO_VERSION_FIELD_NUMBER: _ClassVar[int]
    at: str
    candidate_id: int
    from_version: int
    overlap: float
    skill_name: str
    summary: str
    to_version: int
    def __init__(self, skill_name: _Optional[str] = ..., from_version: _Optional[int] = ..., to_version: _Optional[int] = ..., candidate_id: _Optional[int] = ..., overlap: _Optional[float] = ..., at: _Optional[str] = ..., summary: _Optional[str] = ...) -> None: ...

class ListCandidatesRequest(_message.Message):
    __slots__ = ["page_size", "page_token", "status"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    status: CandidateStatus
    def __init__(self, status: _Optional[_Union[CandidateStatus, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListCandidatesResponse(_message.Message):
    __slots__ = ["candidates", "next_page_token"]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    candidates: _containers.RepeatedCompositeFieldContainer[Candidate]
    next_page_token: str
    def __init__(self, candidates: _Optional[_Iterable[_Union[Candidate, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListSkillEvolutionRequest(_message.Message):
    __slots__ = ["name", "page_size", "page_token"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    page_size: int
    page_token: str
    def __init__(self, name: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSkillEvolutionResponse(_message.Message):
    __slots__ = ["events", "next_page_token"]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[EvolutionEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[EvolutionEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PromoteCandidateRequest(_message.Message):
    __slots__ = ["description", "id", "name"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    description: str
    id: int
    name: str
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class PromoteCandidateResponse(_message.Message):
    __slots__ = ["candidate", "evolution", "skill"]
    CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    EVOLUTION_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    candidate: Candidate
    evolution: EvolutionEvent
    skill: _skills_pb2.Skill
    def __init__(self, candidate: _Optional[_Union[Candidate, _Mapping]] = ..., skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., evolution: _Optional[_Union[EvolutionEvent, _Mapping]] = ...) -> None: ...

class RecordSessionRequest(_message.Message):
    __slots__ = ["session_key", "tool_calls"]
    SESSION_KEY_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    session_key: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    def __init__(self, session_key: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ...) -> None: ...

class RecordSessionResponse(_message.Message):
    __slots__ = ["already_recorded", "candidates", "implicit_failures", "promoted_skills", "tool_calls"]
    ALREADY_RECORDED_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    IMPLICIT_FAILURES_FIELD_NUMBER: _ClassVar[int]
    PROMOTED_SKILLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    already_recorded: bool
    candidates: _containers.RepeatedCompositeFieldContainer[Candidate]
    implicit_failures: int
    promoted_skills: _containers.RepeatedScalarFieldContainer[str]
    tool_calls: int
    def __init__(self, candidates: _Optional[_Iterable[_Union[Candidate, _Mapping]]] = ..., promoted_skills: _Optional[_Iterable[str]] = ..., tool_calls: _Optional[int] = ..., already_recorded: bool = ..., implicit_failures: _Optional[int] = ...) -> None: ...

class RecordSkillOutcomeRequest(_message.Message):
    __slots__ = ["invocation_id", "name", "note", "success"]
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    name: str
    note: str
    success: bool
    def __init__(self, name: _Optional[str] = ..., invocation_id: _Optional[str] = ..., success: bool = ..., note: _Optional[str] = ...) -> None: ...

class RecordSkillOutcomeResponse(_message.Message):
    __slots__ = ["exit_code_success", "overridden", "skill"]
    EXIT_CODE_SUCCESS_FIELD_NUMBER: _ClassVar[int]
    OVERRIDDEN_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    exit_code_success: bool
    overridden: bool
    skill: _skills_pb2.Skill
    def __init__(self, exit_code_success: bool = ..., overridden: bool = ..., skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ...) -> None: ...

class SequenceStep(_message.Message):
    __slots__ = ["shape", "tool"]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    shape: str
    tool: str
    def __init__(self, tool: _Optional[str] = ..., shape: _Optional[str] = ...) -> None: ...

class SimilarSkill(_message.Message):
    __slots__ = ["code_similarity", "description_similarity", "name", "near_duplicate"]
    CODE_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NEAR_DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    code_similarity: float
    description_similarity: float
    name: str
    near_duplicate: bool
    def __init__(self, name: _Optional[str] = ..., description_similarity: _Optional[float] = ..., code_similarity: _Optional[float] = ..., near_duplicate: bool = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ["arguments", "tool"]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    arguments: str
    tool: str
    def __init__(self, tool: _Optional[str] = ..., arguments: _Optional[str] = ...) -> None: ...

class OnDuplicate(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class CandidateStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
