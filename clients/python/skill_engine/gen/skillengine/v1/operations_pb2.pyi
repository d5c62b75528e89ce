from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class RebuildIndexesRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class RebuildIndexesResponse(_message.Message):
    __slots__ = ["duration_ms", "repairs", "skills_indexed"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    REPAIRS_FIELD_NUMBER: _ClassVar[int]
    SKILLS_INDEXED_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    repairs: _containers.RepeatedScalarFieldContainer[str]
    skills_indexed: int
    def __init__(self, skills_indexed: _Optional[int] = ..., repairs: _Optional[_Iterable[str]] = ..., duration_ms: _Optional[int] = ...) -> None: ...

class WhoAmIRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class WhoAmIResponse(_message.Message):
    __slots__ = ["admin", "agent_id", "authenticated"]
    ADMIN_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHENTICATED_FIELD_NUMBER: _ClassVar[int]
    admin: bool
    agent_id: str
    authenticated: bool
    def __init__(self, agent_id: _Optional[str] = ..., admin: bool = ..., authenticated: bool = ...) -> None: ...

class WipeSandboxRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class WipeSandboxResponse(_message.Message):
    __slots__ = ["removed_run_directories"]
    REMOVED_RUN_DIRECTORIES_FIELD_NUMBER: _ClassVar[int]
    removed_run_directories: int
    def __init__(self, removed_run_directories: _Optional[int] = ...) -> None: ...
