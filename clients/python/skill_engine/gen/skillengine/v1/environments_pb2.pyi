from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ENVIRONMENT_REBUILD_RESULT_FAILED: EnvironmentRebuildResult
ENVIRONMENT_REBUILD_RESULT_REBUILT: EnvironmentRebuildResult
ENVIRONMENT_REBUILD_RESULT_SKIPPED: EnvironmentRebuildResult
ENVIRONMENT_REBUILD_RESULT_UNSPECIFIED: EnvironmentRebuildResult
ENVIRONMENT_STATUS_FAILED: EnvironmentStatus
ENVIRONMENT_STATUS_MISSING: EnvironmentStatus
ENVIRONMENT_STATUS_READY: EnvironmentStatus
ENVIRONMENT_STATUS_UNSPECIFIED: EnvironmentStatus

class CheckRuntimesRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class CheckRuntimesResponse(_message.Message):
    __slots__ = ["debian", "installer_python", "package_source", "pip", "python_matches", "sandbox_python"]
    DEBIAN_FIELD_NUMBER: _ClassVar[int]
    INSTALLER_PYTHON_FIELD_NUMBER: _ClassVar[int]
    PACKAGE_SOURCE_FIELD_NUMBER: _ClassVar[int]
    PIP_FIELD_NUMBER: _ClassVar[int]
    PYTHON_MATCHES_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_PYTHON_FIELD_NUMBER: _ClassVar[int]
    debian: DebianPackages
    installer_python: str
    package_source: PackageSource
    pip: str
    python_matches: bool
    sandbox_python: str
    def __init__(self, sandbox_python: _Optional[str] = ..., installer_python: _Optional[str] = ..., pip: _Optional[str] = ..., python_matches: bool = ..., package_source: _Optional[_Union[PackageSource, _Mapping]] = ..., debian: _Optional[_Union[DebianPackages, _Mapping]] = ...) -> None: ...

class DebianPackages(_message.Message):
    __slots__ = ["available", "detail"]
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    available: bool
    detail: str
    def __init__(self, available: bool = ..., detail: _Optional[str] = ...) -> None: ...

class Environment(_message.Message):
    __slots__ = ["built_at", "error", "id", "last_used_at", "lock", "requirements", "size_bytes", "skills", "status", "system_packages"]
    BUILT_AT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_AT_FIELD_NUMBER: _ClassVar[int]
    LOCK_FIELD_NUMBER: _ClassVar[int]
    REQUIREMENTS_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PACKAGES_FIELD_NUMBER: _ClassVar[int]
    built_at: _timestamp_pb2.Timestamp
    error: str
    id: str
    last_used_at: _timestamp_pb2.Timestamp
    lock: _containers.RepeatedCompositeFieldContainer[LockedFile]
    requirements: _containers.RepeatedScalarFieldContainer[str]
    size_bytes: int
    skills: int
    status: EnvironmentStatus
    system_packages: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., requirements: _Optional[_Iterable[str]] = ..., system_packages: _Optional[_Iterable[str]] = ..., lock: _Optional[_Iterable[_Union[LockedFile, _Mapping]]] = ..., size_bytes: _Optional[int] = ..., skills: _Optional[int] = ..., built_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[_Union[EnvironmentStatus, str]] = ..., error: _Optional[str] = ..., last_used_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class EnvironmentRebuild(_message.Message):
    __slots__ = ["error", "id", "result"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    error: str
    id: str
    result: EnvironmentRebuildResult
    def __init__(self, id: _Optional[str] = ..., result: _Optional[_Union[EnvironmentRebuildResult, str]] = ..., error: _Optional[str] = ...) -> None: ...

class ListEnvironmentsRequest(_message.Message):
    __slots__ = ["page_size", "page_token"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListEnvironmentsResponse(_message.Message):
    __slots__ = ["environments", "next_page_token"]
    ENVIRONMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    environments: _containers.RepeatedCompositeFieldContainer[Environment]
    next_page_token: str
    def __init__(self, environments: _Optional[_Iterable[_Union[Environment, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class LockedFile(_message.Message):
    __slots__ = ["file", "kind", "name", "sha256", "version"]
    FILE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    file: str
    kind: str
    name: str
    sha256: str
    version: str
    def __init__(self, kind: _Optional[str] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., sha256: _Optional[str] = ..., file: _Optional[str] = ...) -> None: ...

class PackageSource(_message.Message):
    __slots__ = ["detail", "kind", "location", "reachable"]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    REACHABLE_FIELD_NUMBER: _ClassVar[int]
    detail: str
    kind: str
    location: str
    reachable: bool
    def __init__(self, kind: _Optional[str] = ..., location: _Optional[str] = ..., reachable: bool = ..., detail: _Optional[str] = ...) -> None: ...

class RebuildEnvironmentsRequest(_message.Message):
    __slots__ = ["missing_only"]
    MISSING_ONLY_FIELD_NUMBER: _ClassVar[int]
    missing_only: bool
    def __init__(self, missing_only: bool = ...) -> None: ...

class RebuildEnvironmentsResponse(_message.Message):
    __slots__ = ["duration_ms", "environments"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENTS_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    environments: _containers.RepeatedCompositeFieldContainer[EnvironmentRebuild]
    def __init__(self, environments: _Optional[_Iterable[_Union[EnvironmentRebuild, _Mapping]]] = ..., duration_ms: _Optional[int] = ...) -> None: ...

class EnvironmentStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class EnvironmentRebuildResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
