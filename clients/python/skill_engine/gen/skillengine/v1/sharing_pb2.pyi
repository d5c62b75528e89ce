from google.protobuf import timestamp_pb2 as _timestamp_pb2
from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GrantSkillRequest(_message.Message):
    __slots__ = ["grantee_agent", "grantee_user", "name", "version"]
    GRANTEE_AGENT_FIELD_NUMBER: _ClassVar[int]
    GRANTEE_USER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    grantee_agent: str
    grantee_user: str
    name: str
    version: int
    def __init__(self, name: _Optional[str] = ..., grantee_agent: _Optional[str] = ..., grantee_user: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class GrantSkillResponse(_message.Message):
    __slots__ = ["grant", "skill"]
    GRANT_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    grant: SkillGrant
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., grant: _Optional[_Union[SkillGrant, _Mapping]] = ...) -> None: ...

class ListGrantsRequest(_message.Message):
    __slots__ = ["name", "page_size", "page_token"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    page_size: int
    page_token: str
    def __init__(self, name: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListGrantsResponse(_message.Message):
    __slots__ = ["grants", "next_page_token"]
    GRANTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    grants: _containers.RepeatedCompositeFieldContainer[SkillGrant]
    next_page_token: str
    def __init__(self, grants: _Optional[_Iterable[_Union[SkillGrant, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RevokeSkillRequest(_message.Message):
    __slots__ = ["grantee_agent", "grantee_user", "name"]
    GRANTEE_AGENT_FIELD_NUMBER: _ClassVar[int]
    GRANTEE_USER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    grantee_agent: str
    grantee_user: str
    name: str
    def __init__(self, name: _Optional[str] = ..., grantee_agent: _Optional[str] = ..., grantee_user: _Optional[str] = ...) -> None: ...

class RevokeSkillResponse(_message.Message):
    __slots__ = ["revoked", "skill"]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    revoked: bool
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., revoked: bool = ...) -> None: ...

class SetSkillEnabledRequest(_message.Message):
    __slots__ = ["enabled", "name"]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    enabled: bool
    name: str
    def __init__(self, name: _Optional[str] = ..., enabled: bool = ...) -> None: ...

class SetSkillEnabledResponse(_message.Message):
    __slots__ = ["skill"]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    skill: _skills_pb2.Skill
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ...) -> None: ...

class SkillGrant(_message.Message):
    __slots__ = ["granted_at", "granted_by", "grantee_agent", "grantee_user", "name", "version"]
    GRANTED_AT_FIELD_NUMBER: _ClassVar[int]
    GRANTED_BY_FIELD_NUMBER: _ClassVar[int]
    GRANTEE_AGENT_FIELD_NUMBER: _ClassVar[int]
    GRANTEE_USER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    granted_at: _timestamp_pb2.Timestamp
    granted_by: str
    grantee_agent: str
    grantee_user: str
    name: str
    version: int
    def __init__(self, name: _Optional[str] = ..., grantee_agent: _Optional[str] = ..., grantee_user: _Optional[str] = ..., version: _Optional[int] = ..., granted_by: _Optional[str] = ..., granted_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
