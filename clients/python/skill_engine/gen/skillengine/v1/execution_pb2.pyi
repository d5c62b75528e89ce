from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ExecutionResult(_message.Message):
    __slots__ = ["duration_ms", "error_summary", "exit_code", "oom_killed", "result_json", "stderr", "stderr_truncated", "stdout", "stdout_truncated", "success", "timed_out"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    OOM_KILLED_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    STDERR_FIELD_NUMBER: _ClassVar[int]
    STDERR_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    STDOUT_FIELD_NUMBER: _ClassVar[int]
    STDOUT_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    error_summary: str
    exit_code: int
    oom_killed: bool
    result_json: _struct_pb2.Value
    stderr: str
    stderr_truncated: bool
    stdout: str
    stdout_truncated: bool
    success: bool
    timed_out: bool
    def __init__(self, exit_code: _Optional[int] = ..., stdout: _Optional[str] = ..., stderr: _Optional[str] = ..., duration_ms: _Optional[int] = ..., timed_out: bool = ..., oom_killed: bool = ..., stdout_truncated: bool = ..., stderr_truncated: bool = ..., error_summary: _Optional[str] = ..., success: bool = ..., result_json: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class InputFile(_message.Message):
    __slots__ = ["content", "path"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    content: bytes
    path: str
    def __init__(self, path: _Optional[str] = ..., content: _Optional[bytes] = ...) -> None: ...

class InvokeSkillRequest(_message.Message):
    __slots__ = ["files", "idempotency_key", "name", "payload", "payload_json", "route_id"]
    FILES_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_JSON_FIELD_NUMBER: _ClassVar[int]
    ROUTE_ID_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[InputFile]
    idempotency_key: str
    name: str
    payload: str
    payload_json: _struct_pb2.Struct
    route_id: str
    def __init__(self, name: _Optional[str] = ..., payload: _Optional[str] = ..., payload_json: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., route_id: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., files: _Optional[_Iterable[_Union[InputFile, _Mapping]]] = ...) -> None: ...

class InvokeSkillResponse(_message.Message):
    __slots__ = ["files", "invocation_id", "result", "steps", "version", "warnings"]
    FILES_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[OutputFile]
    invocation_id: str
    result: ExecutionResult
    steps: _containers.RepeatedCompositeFieldContainer[StepResult]
    version: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, result: _Optional[_Union[ExecutionResult, _Mapping]] = ..., version: _Optional[int] = ..., steps: _Optional[_Iterable[_Union[StepResult, _Mapping]]] = ..., warnings: _Optional[_Iterable[str]] = ..., invocation_id: _Optional[str] = ..., files: _Optional[_Iterable[_Union[OutputFile, _Mapping]]] = ...) -> None: ...

class OutputFile(_message.Message):
    __slots__ = ["content", "media_type", "path", "sha256", "size_bytes", "truncated"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    content: bytes
    media_type: str
    path: str
    sha256: str
    size_bytes: int
    truncated: bool
    def __init__(self, path: _Optional[str] = ..., size_bytes: _Optional[int] = ..., sha256: _Optional[str] = ..., content: _Optional[bytes] = ..., truncated: bool = ..., media_type: _Optional[str] = ...) -> None: ...

class StepResult(_message.Message):
    __slots__ = ["error", "files", "id", "result", "skill", "skipped", "version"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    error: str
    files: _containers.RepeatedCompositeFieldContainer[OutputFile]
    id: str
    result: ExecutionResult
    skill: str
    skipped: bool
    version: int
    def __init__(self, id: _Optional[str] = ..., skill: _Optional[str] = ..., version: _Optional[int] = ..., skipped: bool = ..., result: _Optional[_Union[ExecutionResult, _Mapping]] = ..., error: _Optional[str] = ..., files: _Optional[_Iterable[_Union[OutputFile, _Mapping]]] = ...) -> None: ...
