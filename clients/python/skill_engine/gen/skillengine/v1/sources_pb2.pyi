from skill_engine.gen.skillengine.v1 import composition_pb2 as _composition_pb2
from skill_engine.gen.skillengine.v1 import execution_pb2 as _execution_pb2
from skill_engine.gen.skillengine.v1 import learning_pb2 as _learning_pb2
from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BundledFile(_message.Message):
    __slots__ = ["bytes", "path"]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    bytes: int
    path: str
    def __init__(self, path: _Optional[str] = ..., bytes: _Optional[int] = ...) -> None: ...

class ExportSkillRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ExportSkillResponse(_message.Message):
    __slots__ = ["archive", "file_name", "skill_id"]
    ARCHIVE_FIELD_NUMBER: _ClassVar[int]
    FILE_NAME_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    archive: bytes
    file_name: str
    skill_id: str
    def __init__(self, archive: _Optional[bytes] = ..., file_name: _Optional[str] = ..., skill_id: _Optional[str] = ...) -> None: ...

class GetSkillContentRequest(_message.Message):
    __slots__ = ["name", "skill_id"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    skill_id: str
    def __init__(self, name: _Optional[str] = ..., skill_id: _Optional[str] = ...) -> None: ...

class GetSkillContentResponse(_message.Message):
    __slots__ = ["base_dir", "body", "description", "files", "kind", "name", "skill_id", "version"]
    BASE_DIR_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    base_dir: str
    body: str
    description: str
    files: _containers.RepeatedCompositeFieldContainer[BundledFile]
    kind: str
    name: str
    skill_id: str
    version: int
    def __init__(self, name: _Optional[str] = ..., skill_id: _Optional[str] = ..., kind: _Optional[str] = ..., body: _Optional[str] = ..., base_dir: _Optional[str] = ..., files: _Optional[_Iterable[_Union[BundledFile, _Mapping]]] = ..., version: _Optional[int] = ..., description: _Optional[str] = ...) -> None: ...

class GetSkillFileRequest(_message.Message):
    __slots__ = ["name", "path", "skill_id"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    path: str
    skill_id: str
    def __init__(self, name: _Optional[str] = ..., skill_id: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...

class GetSkillFileResponse(_message.Message):
    __slots__ = ["bytes", "content", "name", "path"]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    bytes: int
    content: bytes
    name: str
    path: str
    def __init__(self, name: _Optional[str] = ..., path: _Optional[str] = ..., content: _Optional[bytes] = ..., bytes: _Optional[int] = ...) -> None: ...

class ImportSkillBundleRequest(_message.Message):
    __slots__ = ["archive", "on_duplicate", "visibility"]
    ARCHIVE_FIELD_NUMBER: _ClassVar[int]
    ON_DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    archive: bytes
    on_duplicate: _learning_pb2.OnDuplicate
    visibility: _skills_pb2.Visibility
    def __init__(self, archive: _Optional[bytes] = ..., visibility: _Optional[_Union[_skills_pb2.Visibility, str]] = ..., on_duplicate: _Optional[_Union[_learning_pb2.OnDuplicate, str]] = ...) -> None: ...

class ImportSkillBundleResponse(_message.Message):
    __slots__ = ["similar_skills", "skill", "skill_id", "test"]
    SIMILAR_SKILLS_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    SKILL_ID_FIELD_NUMBER: _ClassVar[int]
    TEST_FIELD_NUMBER: _ClassVar[int]
    similar_skills: _containers.RepeatedCompositeFieldContainer[_learning_pb2.SimilarSkill]
    skill: _skills_pb2.Skill
    skill_id: str
    test: _execution_pb2.ExecutionResult
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., skill_id: _Optional[str] = ..., test: _Optional[_Union[_execution_pb2.ExecutionResult, _Mapping]] = ..., similar_skills: _Optional[_Iterable[_Union[_learning_pb2.SimilarSkill, _Mapping]]] = ...) -> None: ...

class ListSkillSourcesRequest(_message.Message):
    __slots__ = ["page_size", "page_token"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSkillSourcesResponse(_message.Message):
    __slots__ = ["directories", "next_page_token", "problems", "sources"]
    DIRECTORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    directories: _containers.RepeatedScalarFieldContainer[str]
    next_page_token: str
    problems: _containers.RepeatedCompositeFieldContainer[SourceProblem]
    sources: _containers.RepeatedCompositeFieldContainer[_composition_pb2.CatalogEntry]
    def __init__(self, sources: _Optional[_Iterable[_Union[_composition_pb2.CatalogEntry, _Mapping]]] = ..., problems: _Optional[_Iterable[_Union[SourceProblem, _Mapping]]] = ..., directories: _Optional[_Iterable[str]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RescanSkillDirsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class RescanSkillDirsResponse(_message.Message):
    __slots__ = ["duration_ms", "problems", "registered", "retired", "sources"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    REGISTERED_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    problems: _containers.RepeatedCompositeFieldContainer[SourceProblem]
    registered: _containers.RepeatedScalarFieldContainer[str]
    retired: _containers.RepeatedScalarFieldContainer[str]
    sources: _containers.RepeatedCompositeFieldContainer[_composition_pb2.CatalogEntry]
    def __init__(self, sources: _Optional[_Iterable[_Union[_composition_pb2.CatalogEntry, _Mapping]]] = ..., problems: _Optional[_Iterable[_Union[SourceProblem, _Mapping]]] = ..., registered: _Optional[_Iterable[str]] = ..., retired: _Optional[_Iterable[str]] = ..., duration_ms: _Optional[int] = ...) -> None: ...

class SourceProblem(_message.Message):
    __slots__ = ["directory", "reason"]
    DIRECTORY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    directory: str
    reason: str
    def __init__(self, directory: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
