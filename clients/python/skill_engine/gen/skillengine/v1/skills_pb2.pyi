from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from skill_engine.gen.skillengine.v1 import execution_pb2 as _execution_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
SKILL_STATUS_ACTIVE: SkillStatus
SKILL_STATUS_DEGRADED: SkillStatus
SKILL_STATUS_DELETED: SkillStatus
SKILL_STATUS_DEPRECATED: SkillStatus
SKILL_STATUS_RETIRED: SkillStatus
SKILL_STATUS_UNSPECIFIED: SkillStatus
VISIBILITY_INTERNAL: Visibility
VISIBILITY_PRIVATE: Visibility
VISIBILITY_PUBLIC: Visibility
VISIBILITY_UNSPECIFIED: Visibility

class GetSkillRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetSkillResponse(_message.Message):
    __slots__ = ["code", "composed", "depends_on", "kind", "skill", "skill_id", "test_files"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    COMPOSED_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    TEST_FILES_FIELD_NUMBER: _ClassVar[int]
    code: str
    composed: bool
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    kind: str
    skill: Skill
    skill_id: str
    test_files: _containers.RepeatedCompositeFieldContainer[_execution_pb2.InputFile]
    def __init__(self, skill: _Optional[_Union[Skill, _Mapping]] = ..., code: _Optional[str] = ..., composed: bool = ..., depends_on: _Optional[_Iterable[str]] = ..., kind: _Optional[str] = ..., skill_id: _Optional[str] = ..., test_files: _Optional[_Iterable[_Union[_execution_pb2.InputFile, _Mapping]]] = ...) -> None: ...

class GetSkillStatsRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetSkillStatsResponse(_message.Message):
    __slots__ = ["age_days", "applied", "auto_created", "completions", "fallbacks", "has_success_rate", "invocation_velocity_7d", "last_outcome", "name", "p50_duration_ms", "p95_duration_ms", "selections", "skill", "success_by_source", "success_rate", "total_invocations", "total_successes", "version", "window_samples", "window_successes"]
    AGE_DAYS_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    AUTO_CREATED_FIELD_NUMBER: _ClassVar[int]
    COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    FALLBACKS_FIELD_NUMBER: _ClassVar[int]
    HAS_SUCCESS_RATE_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_VELOCITY_7D_FIELD_NUMBER: _ClassVar[int]
    LAST_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    P50_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    P95_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    SELECTIONS_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_BY_SOURCE_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_RATE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_INVOCATIONS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WINDOW_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    WINDOW_SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    age_days: float
    applied: int
    auto_created: bool
    completions: int
    fallbacks: int
    has_success_rate: bool
    invocation_velocity_7d: float
    last_outcome: SkillOutcome
    name: str
    p50_duration_ms: int
    p95_duration_ms: int
    selections: int
    skill: Skill
    success_by_source: _containers.RepeatedCompositeFieldContainer[SourceRate]
    success_rate: float
    total_invocations: int
    total_successes: int
    version: int
    window_samples: int
    window_successes: int
    def __init__(self, name: _Optional[str] = ..., age_days: _Optional[float] = ..., success_rate: _Optional[float] = ..., has_success_rate: bool = ..., invocation_velocity_7d: _Optional[float] = ..., version: _Optional[int] = ..., auto_created: bool = ..., p50_duration_ms: _Optional[int] = ..., p95_duration_ms: _Optional[int] = ..., window_samples: _Optional[int] = ..., window_successes: _Optional[int] = ..., total_invocations: _Optional[int] = ..., total_successes: _Optional[int] = ..., skill: _Optional[_Union[Skill, _Mapping]] = ..., selections: _Optional[int] = ..., applied: _Optional[int] = ..., completions: _Optional[int] = ..., fallbacks: _Optional[int] = ..., success_by_source: _Optional[_Iterable[_Union[SourceRate, _Mapping]]] = ..., last_outcome: _Optional[_Union[SkillOutcome, _Mapping]] = ...) -> None: ...

class ListSkillVersionsRequest(_message.Message):
    __slots__ = ["name", "page_size", "page_token"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    page_size: int
    page_token: str
    def __init__(self, name: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSkillVersionsResponse(_message.Message):
    __slots__ = ["next_page_token", "versions"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    versions: _containers.RepeatedCompositeFieldContainer[SkillVersion]
    def __init__(self, versions: _Optional[_Iterable[_Union[SkillVersion, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListSkillsRequest(_message.Message):
    __slots__ = ["include_inactive", "owner", "page_size", "page_token"]
    INCLUDE_INACTIVE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    include_inactive: bool
    owner: str
    page_size: int
    page_token: str
    def __init__(self, include_inactive: bool = ..., owner: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSkillsResponse(_message.Message):
    __slots__ = ["next_page_token", "skills"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    skills: _containers.RepeatedCompositeFieldContainer[Skill]
    def __init__(self, skills: _Optional[_Iterable[_Union[Skill, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class Skill(_message.Message):
    __slots__ = ["auto_created", "content_hash", "created_at", "description", "disabled", "disabled_by", "environment_id", "failure_count", "grant_count", "last_invoked_at", "latest_version", "name", "network_allow", "owner", "parameters_schema", "parameters_schema_json", "pinned_version", "protected", "requirements", "secrets", "status", "status_changed_at", "status_reason", "system", "system_packages", "updated_at", "usage_count", "version", "visibility", "warning"]
    AUTO_CREATED_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DISABLED_BY_FIELD_NUMBER: _ClassVar[int]
    DISABLED_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_ID_FIELD_NUMBER: _ClassVar[int]
    FAILURE_COUNT_FIELD_NUMBER: _ClassVar[int]
    GRANT_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_INVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    LATEST_VERSION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NETWORK_ALLOW_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    PINNED_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTECTED_FIELD_NUMBER: _ClassVar[int]
    REQUIREMENTS_FIELD_NUMBER: _ClassVar[int]
    SECRETS_FIELD_NUMBER: _ClassVar[int]
    STATUS_CHANGED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_REASON_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PACKAGES_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    USAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    WARNING_FIELD_NUMBER: _ClassVar[int]
    auto_created: bool
    content_hash: str
    created_at: _timestamp_pb2.Timestamp
    description: str
    disabled: bool
    disabled_by: str
    environment_id: str
    failure_count: int
    grant_count: int
    last_invoked_at: _timestamp_pb2.Timestamp
    latest_version: int
    name: str
    network_allow: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    parameters_schema: str
    parameters_schema_json: _struct_pb2.Struct
    pinned_version: int
    protected: bool
    requirements: _containers.RepeatedScalarFieldContainer[str]
    secrets: _containers.RepeatedScalarFieldContainer[str]
    status: SkillStatus
    status_changed_at: _timestamp_pb2.Timestamp
    status_reason: str
    system: bool
    system_packages: _containers.RepeatedScalarFieldContainer[str]
    updated_at: _timestamp_pb2.Timestamp
    usage_count: int
    version: int
    visibility: Visibility
    warning: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters_schema: _Optional[str] = ..., status: _Optional[_Union[SkillStatus, str]] = ..., version: _Optional[int] = ..., content_hash: _Optional[str] = ..., usage_count: _Optional[int] = ..., failure_count: _Optional[int] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_invoked_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., status_reason: _Optional[str] = ..., warning: _Optional[str] = ..., protected: bool = ..., auto_created: bool = ..., latest_version: _Optional[int] = ..., status_changed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., owner: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., system: bool = ..., disabled: bool = ..., disabled_by: _Optional[str] = ..., pinned_version: _Optional[int] = ..., grant_count: _Optional[int] = ..., requirements: _Optional[_Iterable[str]] = ..., system_packages: _Optional[_Iterable[str]] = ..., environment_id: _Optional[str] = ..., secrets: _Optional[_Iterable[str]] = ..., network_allow: _Optional[_Iterable[str]] = ..., parameters_schema_json: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class SkillOutcome(_message.Message):
    __slots__ = ["at", "reporter", "source", "success"]
    AT_FIELD_NUMBER: _ClassVar[int]
    REPORTER_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    at: _timestamp_pb2.Timestamp
    reporter: str
    source: str
    success: bool
    def __init__(self, source: _Optional[str] = ..., success: bool = ..., at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., reporter: _Optional[str] = ...) -> None: ...

class SkillVersion(_message.Message):
    __slots__ = ["active", "content_hash", "created_at", "description", "origin", "parameters_schema", "test_payload", "version"]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    TEST_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    active: bool
    content_hash: str
    created_at: _timestamp_pb2.Timestamp
    description: str
    origin: str
    parameters_schema: str
    test_payload: str
    version: int
    def __init__(self, version: _Optional[int] = ..., content_hash: _Optional[str] = ..., description: _Optional[str] = ..., parameters_schema: _Optional[str] = ..., test_payload: _Optional[str] = ..., origin: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., active: bool = ...) -> None: ...

class SourceRate(_message.Message):
    __slots__ = ["samples", "source", "success_rate", "successes", "weight"]
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_RATE_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    samples: int
    source: str
    success_rate: float
    successes: int
    weight: float
    def __init__(self, source: _Optional[str] = ..., samples: _Optional[int] = ..., successes: _Optional[int] = ..., success_rate: _Optional[float] = ..., weight: _Optional[float] = ...) -> None: ...

class Visibility(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SkillStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
