from skill_engine.gen.skillengine.v1 import execution_pb2 as _execution_pb2
from skill_engine.gen.skillengine.v1 import learning_pb2 as _learning_pb2
from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

CATALOG_STATUS_BLOCKED: CatalogStatus
CATALOG_STATUS_DISCOVERED: CatalogStatus
CATALOG_STATUS_FAILED: CatalogStatus
CATALOG_STATUS_INACTIVE: CatalogStatus
CATALOG_STATUS_READY: CatalogStatus
CATALOG_STATUS_SHADOWED: CatalogStatus
CATALOG_STATUS_UNSPECIFIED: CatalogStatus
DESCRIPTOR: _descriptor.FileDescriptor
ON_FAILURE_CONTINUE: OnFailure
ON_FAILURE_STOP: OnFailure
ON_FAILURE_UNSPECIFIED: OnFailure

class CatalogEntry(_message.Message):
    __slots__ = ["blocked_by", "depends_on", "error", "kind", "name", "reason", "skill_id", "source_directory", "source_folder", "status", "version", "warnings"]
    BLOCKED_BY_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_DIRECTORY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FOLDER_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    blocked_by: _containers.RepeatedScalarFieldContainer[str]
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    error: str
    kind: str
    name: str
    reason: str
    skill_id: str
    source_directory: str
    source_folder: str
    status: CatalogStatus
    version: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., status: _Optional[_Union[CatalogStatus, str]] = ..., version: _Optional[int] = ..., depends_on: _Optional[_Iterable[str]] = ..., blocked_by: _Optional[_Iterable[str]] = ..., error: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ..., skill_id: _Optional[str] = ..., source_directory: _Optional[str] = ..., source_folder: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ComposedStep(_message.Message):
    __slots__ = ["args", "id", "on_failure", "skill", "when"]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    ON_FAILURE_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    WHEN_FIELD_NUMBER: _ClassVar[int]
    args: str
    id: str
    on_failure: OnFailure
    skill: str
    when: str
    def __init__(self, id: _Optional[str] = ..., skill: _Optional[str] = ..., args: _Optional[str] = ..., when: _Optional[str] = ..., on_failure: _Optional[_Union[OnFailure, str]] = ...) -> None: ...

class GetCatalogRequest(_message.Message):
    __slots__ = ["page_size", "page_token"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetCatalogResponse(_message.Message):
    __slots__ = ["etag", "next_page_token", "skills"]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    etag: str
    next_page_token: str
    skills: _containers.RepeatedCompositeFieldContainer[CatalogEntry]
    def __init__(self, skills: _Optional[_Iterable[_Union[CatalogEntry, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., etag: _Optional[str] = ...) -> None: ...

class GetSkillDependenciesRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetSkillDependenciesResponse(_message.Message):
    __slots__ = ["dependents", "depends_on", "load_order", "warnings"]
    DEPENDENTS_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    LOAD_ORDER_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    dependents: _containers.RepeatedScalarFieldContainer[str]
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    load_order: _containers.RepeatedScalarFieldContainer[str]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, depends_on: _Optional[_Iterable[str]] = ..., dependents: _Optional[_Iterable[str]] = ..., load_order: _Optional[_Iterable[str]] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class RegisterComposedSkillRequest(_message.Message):
    __slots__ = ["description", "example_queries", "name", "on_duplicate", "output", "parameters_schema", "steps", "test_payload", "visibility"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    EXAMPLE_QUERIES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ON_DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    TEST_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    description: str
    example_queries: _containers.RepeatedScalarFieldContainer[str]
    name: str
    on_duplicate: _learning_pb2.OnDuplicate
    output: str
    parameters_schema: str
    steps: _containers.RepeatedCompositeFieldContainer[ComposedStep]
    test_payload: str
    visibility: _skills_pb2.Visibility
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters_schema: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[ComposedStep, _Mapping]]] = ..., output: _Optional[str] = ..., test_payload: _Optional[str] = ..., visibility: _Optional[_Union[_skills_pb2.Visibility, str]] = ..., example_queries: _Optional[_Iterable[str]] = ..., on_duplicate: _Optional[_Union[_learning_pb2.OnDuplicate, str]] = ...) -> None: ...

class RegisterComposedSkillResponse(_message.Message):
    __slots__ = ["evicted", "similar_skills", "skill", "steps", "test", "unchanged"]
    EVICTED_FIELD_NUMBER: _ClassVar[int]
    SIMILAR_SKILLS_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    TEST_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    evicted: _containers.RepeatedScalarFieldContainer[str]
    similar_skills: _containers.RepeatedCompositeFieldContainer[_learning_pb2.SimilarSkill]
    skill: _skills_pb2.Skill
    steps: _containers.RepeatedCompositeFieldContainer[_execution_pb2.StepResult]
    test: _execution_pb2.ExecutionResult
    unchanged: bool
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., test: _Optional[_Union[_execution_pb2.ExecutionResult, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[_execution_pb2.StepResult, _Mapping]]] = ..., evicted: _Optional[_Iterable[str]] = ..., similar_skills: _Optional[_Iterable[_Union[_learning_pb2.SimilarSkill, _Mapping]]] = ..., unchanged: bool = ...) -> None: ...

class OnFailure(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class CatalogStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
