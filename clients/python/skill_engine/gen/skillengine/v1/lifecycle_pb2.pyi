from skill_engine.gen.skillengine.v1 import sharing_pb2 as _sharing_pb2
from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DeleteSkillRequest(_message.Message):
    __slots__ = ["force", "name"]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    force: bool
    name: str
    def __init__(self, name: _Optional[str] = ..., force: bool = ...) -> None: ...

class DeleteSkillResponse(_message.Message):
    __slots__ = ["revoked_grants", "skill"]
    REVOKED_GRANTS_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    revoked_grants: _containers.RepeatedCompositeFieldContainer[_sharing_pb2.SkillGrant]
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., revoked_grants: _Optional[_Iterable[_Union[_sharing_pb2.SkillGrant, _Mapping]]] = ...) -> None: ...

class RestoreSkillRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RestoreSkillResponse(_message.Message):
    __slots__ = ["evicted", "skill"]
    EVICTED_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    evicted: _containers.RepeatedScalarFieldContainer[str]
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., evicted: _Optional[_Iterable[str]] = ...) -> None: ...

class RetireDegradedSkillsRequest(_message.Message):
    __slots__ = ["dry_run", "force"]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    dry_run: bool
    force: bool
    def __init__(self, dry_run: bool = ..., force: bool = ...) -> None: ...

class RetireDegradedSkillsResponse(_message.Message):
    __slots__ = ["dry_run", "kept", "retired"]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    dry_run: bool
    kept: _containers.RepeatedCompositeFieldContainer[RetiredSkill]
    retired: _containers.RepeatedCompositeFieldContainer[RetiredSkill]
    def __init__(self, retired: _Optional[_Iterable[_Union[RetiredSkill, _Mapping]]] = ..., dry_run: bool = ..., kept: _Optional[_Iterable[_Union[RetiredSkill, _Mapping]]] = ...) -> None: ...

class RetiredSkill(_message.Message):
    __slots__ = ["name", "reasons"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    reasons: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., reasons: _Optional[_Iterable[str]] = ...) -> None: ...

class RollbackSkillRequest(_message.Message):
    __slots__ = ["name", "version"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class RollbackSkillResponse(_message.Message):
    __slots__ = ["skill"]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ...) -> None: ...

class SetSkillProtectedRequest(_message.Message):
    __slots__ = ["name", "protected"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROTECTED_FIELD_NUMBER: _ClassVar[int]
    name: str
    protected: bool
    def __init__(self, name: _Optional[str] = ..., protected: bool = ...) -> None: ...

class SetSkillProtectedResponse(_message.Message):
    __slots__ = ["skill"]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ...) -> None: ...

class SetSkillVisibilityRequest(_message.Message):
    __slots__ = ["name", "visibility"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    name: str
    visibility: _skills_pb2.Visibility
    def __init__(self, name: _Optional[str] = ..., visibility: _Optional[_Union[_skills_pb2.Visibility, str]] = ...) -> None: ...

class SetSkillVisibilityResponse(_message.Message):
    __slots__ = ["skill"]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ...) -> None: ...

class TransferSkillRequest(_message.Message):
    __slots__ = ["name", "new_owner"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NEW_OWNER_FIELD_NUMBER: _ClassVar[int]
    name: str
    new_owner: str
    def __init__(self, name: _Optional[str] = ..., new_owner: _Optional[str] = ...) -> None: ...

class TransferSkillResponse(_message.Message):
    __slots__ = ["skill"]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ...) -> None: ...
