from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RetireSkillRequest(_message.Message):
    __slots__ = ["force", "name"]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    force: bool
    name: str
    def __init__(self, name: _Optional[str] = ..., force: bool = ...) -> None: ...

class RetireSkillResponse(_message.Message):
    __slots__ = ["skill"]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ...) -> None: ...
