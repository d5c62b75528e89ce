from google.protobuf import timestamp_pb2 as _timestamp_pb2
from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
LESSON_SCOPE_ALL: LessonScope
LESSON_SCOPE_TODAY: LessonScope
LESSON_SCOPE_UNSPECIFIED: LessonScope
LESSON_SCOPE_WEEK: LessonScope
LESSON_STATE_ACTIVE: LessonState
LESSON_STATE_ARCHIVED: LessonState
LESSON_STATE_DELETED: LessonState
LESSON_STATE_UNSPECIFIED: LessonState

class AddLessonRequest(_message.Message):
    __slots__ = ["anti_pattern", "challenge_text", "confidence", "correct_pattern", "domains", "source", "source_challenge_hash", "trigger", "visibility"]
    ANTI_PATTERN_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_TEXT_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CORRECT_PATTERN_FIELD_NUMBER: _ClassVar[int]
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_CHALLENGE_HASH_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    anti_pattern: str
    challenge_text: str
    confidence: float
    correct_pattern: str
    domains: _containers.RepeatedScalarFieldContainer[str]
    source: str
    source_challenge_hash: str
    trigger: str
    visibility: _skills_pb2.Visibility
    def __init__(self, trigger: _Optional[str] = ..., anti_pattern: _Optional[str] = ..., correct_pattern: _Optional[str] = ..., domains: _Optional[_Iterable[str]] = ..., confidence: _Optional[float] = ..., source: _Optional[str] = ..., source_challenge_hash: _Optional[str] = ..., challenge_text: _Optional[str] = ..., visibility: _Optional[_Union[_skills_pb2.Visibility, str]] = ...) -> None: ...

class AddLessonResponse(_message.Message):
    __slots__ = ["archived", "lesson", "merged"]
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    LESSON_FIELD_NUMBER: _ClassVar[int]
    MERGED_FIELD_NUMBER: _ClassVar[int]
    archived: _containers.RepeatedScalarFieldContainer[str]
    lesson: Lesson
    merged: bool
    def __init__(self, lesson: _Optional[_Union[Lesson, _Mapping]] = ..., merged: bool = ..., archived: _Optional[_Iterable[str]] = ...) -> None: ...

class CreditRecentRetrievalsRequest(_message.Message):
    __slots__ = ["window_seconds"]
    WINDOW_SECONDS_FIELD_NUMBER: _ClassVar[int]
    window_seconds: int
    def __init__(self, window_seconds: _Optional[int] = ...) -> None: ...

class CreditRecentRetrievalsResponse(_message.Message):
    __slots__ = ["credited"]
    CREDITED_FIELD_NUMBER: _ClassVar[int]
    credited: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, credited: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteLessonRequest(_message.Message):
    __slots__ = ["lesson_id"]
    LESSON_ID_FIELD_NUMBER: _ClassVar[int]
    lesson_id: str
    def __init__(self, lesson_id: _Optional[str] = ...) -> None: ...

class DeleteLessonResponse(_message.Message):
    __slots__ = ["lesson"]
    LESSON_FIELD_NUMBER: _ClassVar[int]
    lesson: Lesson
    def __init__(self, lesson: _Optional[_Union[Lesson, _Mapping]] = ...) -> None: ...

class GetLessonRequest(_message.Message):
    __slots__ = ["lesson_id"]
    LESSON_ID_FIELD_NUMBER: _ClassVar[int]
    lesson_id: str
    def __init__(self, lesson_id: _Optional[str] = ...) -> None: ...

class GetLessonResponse(_message.Message):
    __slots__ = ["lesson"]
    LESSON_FIELD_NUMBER: _ClassVar[int]
    lesson: Lesson
    def __init__(self, lesson: _Optional[_Union[Lesson, _Mapping]] = ...) -> None: ...

class GetPlaybookContextRequest(_message.Message):
    __slots__ = ["limit", "query"]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    limit: int
    query: str
    def __init__(self, query: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class GetPlaybookContextResponse(_message.Message):
    __slots__ = ["context", "lessons", "retrieval_id", "warnings"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    LESSONS_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_ID_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    context: str
    lessons: _containers.RepeatedCompositeFieldContainer[Lesson]
    retrieval_id: str
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, context: _Optional[str] = ..., lessons: _Optional[_Iterable[_Union[Lesson, _Mapping]]] = ..., retrieval_id: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class Lesson(_message.Message):
    __slots__ = ["anti_pattern", "archived_reason", "challenge_text_hash", "confidence", "correct_pattern", "created_at", "domains", "frequency", "guarded", "helpful_retrievals", "hit_rate", "id", "last_helpful_at", "last_retrieved_at", "owner", "pinned", "retrievals", "source", "source_challenge_hash", "state", "times_added", "trigger", "updated_at", "utility", "verified", "visibility"]
    ANTI_PATTERN_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_REASON_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_TEXT_HASH_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CORRECT_PATTERN_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    FREQUENCY_FIELD_NUMBER: _ClassVar[int]
    GUARDED_FIELD_NUMBER: _ClassVar[int]
    HELPFUL_RETRIEVALS_FIELD_NUMBER: _ClassVar[int]
    HIT_RATE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    LAST_HELPFUL_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_RETRIEVED_AT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    RETRIEVALS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_CHALLENGE_HASH_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TIMES_ADDED_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    UTILITY_FIELD_NUMBER: _ClassVar[int]
    VERIFIED_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    anti_pattern: str
    archived_reason: str
    challenge_text_hash: str
    confidence: float
    correct_pattern: str
    created_at: _timestamp_pb2.Timestamp
    domains: _containers.RepeatedScalarFieldContainer[str]
    frequency: int
    guarded: bool
    helpful_retrievals: int
    hit_rate: float
    id: str
    last_helpful_at: _timestamp_pb2.Timestamp
    last_retrieved_at: _timestamp_pb2.Timestamp
    owner: str
    pinned: bool
    retrievals: int
    source: str
    source_challenge_hash: str
    state: LessonState
    times_added: int
    trigger: str
    updated_at: _timestamp_pb2.Timestamp
    utility: float
    verified: bool
    visibility: _skills_pb2.Visibility
    def __init__(self, id: _Optional[str] = ..., owner: _Optional[str] = ..., trigger: _Optional[str] = ..., anti_pattern: _Optional[str] = ..., correct_pattern: _Optional[str] = ..., domains: _Optional[_Iterable[str]] = ..., confidence: _Optional[float] = ..., source: _Optional[str] = ..., source_challenge_hash: _Optional[str] = ..., challenge_text_hash: _Optional[str] = ..., state: _Optional[_Union[LessonState, str]] = ..., visibility: _Optional[_Union[_skills_pb2.Visibility, str]] = ..., verified: bool = ..., pinned: bool = ..., retrievals: _Optional[int] = ..., helpful_retrievals: _Optional[int] = ..., times_added: _Optional[int] = ..., frequency: _Optional[int] = ..., hit_rate: _Optional[float] = ..., utility: _Optional[float] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_retrieved_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_helpful_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., archived_reason: _Optional[str] = ..., guarded: bool = ...) -> None: ...

class ListLessonsRequest(_message.Message):
    __slots__ = ["domain", "include_inactive", "limit", "owner", "page_size", "page_token", "scope"]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_INACTIVE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    domain: str
    include_inactive: bool
    limit: int
    owner: str
    page_size: int
    page_token: str
    scope: LessonScope
    def __init__(self, scope: _Optional[_Union[LessonScope, str]] = ..., domain: _Optional[str] = ..., limit: _Optional[int] = ..., include_inactive: bool = ..., owner: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListLessonsResponse(_message.Message):
    __slots__ = ["lessons", "next_page_token"]
    LESSONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    lessons: _containers.RepeatedCompositeFieldContainer[Lesson]
    next_page_token: str
    def __init__(self, lessons: _Optional[_Iterable[_Union[Lesson, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PruneLessonsRequest(_message.Message):
    __slots__ = ["dry_run", "has_max_drop_fraction", "max_drop_fraction", "min_retrievals"]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    HAS_MAX_DROP_FRACTION_FIELD_NUMBER: _ClassVar[int]
    MAX_DROP_FRACTION_FIELD_NUMBER: _ClassVar[int]
    MIN_RETRIEVALS_FIELD_NUMBER: _ClassVar[int]
    dry_run: bool
    has_max_drop_fraction: bool
    max_drop_fraction: float
    min_retrievals: int
    def __init__(self, min_retrievals: _Optional[int] = ..., max_drop_fraction: _Optional[float] = ..., dry_run: bool = ..., has_max_drop_fraction: bool = ...) -> None: ...

class PruneLessonsResponse(_message.Message):
    __slots__ = ["dropped", "dry_run"]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    dropped: _containers.RepeatedCompositeFieldContainer[Lesson]
    dry_run: bool
    def __init__(self, dropped: _Optional[_Iterable[_Union[Lesson, _Mapping]]] = ..., dry_run: bool = ...) -> None: ...

class RecordHelpfulRetrievalRequest(_message.Message):
    __slots__ = ["lesson_id"]
    LESSON_ID_FIELD_NUMBER: _ClassVar[int]
    lesson_id: str
    def __init__(self, lesson_id: _Optional[str] = ...) -> None: ...

class RecordHelpfulRetrievalResponse(_message.Message):
    __slots__ = ["lesson"]
    LESSON_FIELD_NUMBER: _ClassVar[int]
    lesson: Lesson
    def __init__(self, lesson: _Optional[_Union[Lesson, _Mapping]] = ...) -> None: ...

class RestoreLessonRequest(_message.Message):
    __slots__ = ["lesson_id"]
    LESSON_ID_FIELD_NUMBER: _ClassVar[int]
    lesson_id: str
    def __init__(self, lesson_id: _Optional[str] = ...) -> None: ...

class RestoreLessonResponse(_message.Message):
    __slots__ = ["archived", "lesson"]
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    LESSON_FIELD_NUMBER: _ClassVar[int]
    archived: _containers.RepeatedScalarFieldContainer[str]
    lesson: Lesson
    def __init__(self, lesson: _Optional[_Union[Lesson, _Mapping]] = ..., archived: _Optional[_Iterable[str]] = ...) -> None: ...

class SetLessonPinnedRequest(_message.Message):
    __slots__ = ["lesson_id", "pinned"]
    LESSON_ID_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    lesson_id: str
    pinned: bool
    def __init__(self, lesson_id: _Optional[str] = ..., pinned: bool = ...) -> None: ...

class SetLessonPinnedResponse(_message.Message):
    __slots__ = ["lesson"]
    LESSON_FIELD_NUMBER: _ClassVar[int]
    lesson: Lesson
    def __init__(self, lesson: _Optional[_Union[Lesson, _Mapping]] = ...) -> None: ...

class VerifyLessonRequest(_message.Message):
    __slots__ = ["lesson_id", "original_attempts", "original_passed", "verify_attempts", "verify_passed"]
    LESSON_ID_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_PASSED_FIELD_NUMBER: _ClassVar[int]
    VERIFY_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    VERIFY_PASSED_FIELD_NUMBER: _ClassVar[int]
    lesson_id: str
    original_attempts: int
    original_passed: bool
    verify_attempts: int
    verify_passed: bool
    def __init__(self, lesson_id: _Optional[str] = ..., original_passed: bool = ..., original_attempts: _Optional[int] = ..., verify_passed: bool = ..., verify_attempts: _Optional[int] = ...) -> None: ...

class VerifyLessonResponse(_message.Message):
    __slots__ = ["lesson", "reason"]
    LESSON_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    lesson: Lesson
    reason: str
    def __init__(self, lesson: _Optional[_Union[Lesson, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class LessonState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class LessonScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
