from google.protobuf import struct_pb2 as _struct_pb2
from skill_engine.gen.skillengine.v1 import execution_pb2 as _execution_pb2
from skill_engine.gen.skillengine.v1 import learning_pb2 as _learning_pb2
from skill_engine.gen.skillengine.v1 import routing_pb2 as _routing_pb2
from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DependentRetest(_message.Message):
    __slots__ = ["error", "name", "passed"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    error: str
    name: str
    passed: bool
    def __init__(self, name: _Optional[str] = ..., passed: bool = ..., error: _Optional[str] = ...) -> None: ...

class GuardFinding(_message.Message):
    __slots__ = ["category", "line", "message", "rule_id", "severity"]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    category: str
    line: int
    message: str
    rule_id: str
    severity: str
    def __init__(self, rule_id: _Optional[str] = ..., category: _Optional[str] = ..., severity: _Optional[str] = ..., message: _Optional[str] = ..., line: _Optional[int] = ...) -> None: ...

class PatchSkillRequest(_message.Message):
    __slots__ = ["find", "name", "replace", "test_payload"]
    FIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    TEST_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    find: str
    name: str
    replace: str
    test_payload: str
    def __init__(self, name: _Optional[str] = ..., find: _Optional[str] = ..., replace: _Optional[str] = ..., test_payload: _Optional[str] = ...) -> None: ...

class PatchSkillResponse(_message.Message):
    __slots__ = ["normalizations", "skill", "test", "warnings"]
    NORMALIZATIONS_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    TEST_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    normalizations: _containers.RepeatedScalarFieldContainer[str]
    skill: _skills_pb2.Skill
    test: _execution_pb2.ExecutionResult
    warnings: _containers.RepeatedCompositeFieldContainer[GuardFinding]
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., test: _Optional[_Union[_execution_pb2.ExecutionResult, _Mapping]] = ..., normalizations: _Optional[_Iterable[str]] = ..., warnings: _Optional[_Iterable[_Union[GuardFinding, _Mapping]]] = ...) -> None: ...

class RegisterSkillRequest(_message.Message):
    __slots__ = ["code", "depends_on", "description", "example_queries", "name", "network_allow", "on_duplicate", "parameters_schema", "parameters_schema_json", "requirements", "secrets", "system", "system_packages", "test_files", "test_payload", "test_payload_json", "visibility"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    EXAMPLE_QUERIES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NETWORK_ALLOW_FIELD_NUMBER: _ClassVar[int]
    ON_DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    REQUIREMENTS_FIELD_NUMBER: _ClassVar[int]
    SECRETS_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PACKAGES_FIELD_NUMBER: _ClassVar[int]
    TEST_FILES_FIELD_NUMBER: _ClassVar[int]
    TEST_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    TEST_PAYLOAD_JSON_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    code: str
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    description: str
    example_queries: _containers.RepeatedScalarFieldContainer[str]
    name: str
    network_allow: _containers.RepeatedScalarFieldContainer[str]
    on_duplicate: _learning_pb2.OnDuplicate
    parameters_schema: str
    parameters_schema_json: _struct_pb2.Struct
    requirements: _containers.RepeatedScalarFieldContainer[str]
    secrets: _containers.RepeatedScalarFieldContainer[str]
    system: bool
    system_packages: _containers.RepeatedScalarFieldContainer[str]
    test_files: _containers.RepeatedCompositeFieldContainer[_execution_pb2.InputFile]
    test_payload: str
    test_payload_json: _struct_pb2.Struct
    visibility: _skills_pb2.Visibility
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters_schema: _Optional[str] = ..., code: _Optional[str] = ..., test_payload: _Optional[str] = ..., example_queries: _Optional[_Iterable[str]] = ..., visibility: _Optional[_Union[_skills_pb2.Visibility, str]] = ..., depends_on: _Optional[_Iterable[str]] = ..., system: bool = ..., on_duplicate: _Optional[_Union[_learning_pb2.OnDuplicate, str]] = ..., requirements: _Optional[_Iterable[str]] = ..., system_packages: _Optional[_Iterable[str]] = ..., test_files: _Optional[_Iterable[_Union[_execution_pb2.InputFile, _Mapping]]] = ..., secrets: _Optional[_Iterable[str]] = ..., network_allow: _Optional[_Iterable[str]] = ..., parameters_schema_json: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., test_payload_json: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class RegisterSkillResponse(_message.Message):
    __slots__ = ["dependents_retested", "hidden_dependents_failed", "hidden_dependents_passed", "normalizations", "routing_gate", "similar_skills", "skill", "test", "test_file_warnings", "test_files", "unchanged", "warnings"]
    DEPENDENTS_RETESTED_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_DEPENDENTS_FAILED_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_DEPENDENTS_PASSED_FIELD_NUMBER: _ClassVar[int]
    NORMALIZATIONS_FIELD_NUMBER: _ClassVar[int]
    ROUTING_GATE_FIELD_NUMBER: _ClassVar[int]
    SIMILAR_SKILLS_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    TEST_FIELD_NUMBER: _ClassVar[int]
    TEST_FILES_FIELD_NUMBER: _ClassVar[int]
    TEST_FILE_WARNINGS_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    dependents_retested: _containers.RepeatedCompositeFieldContainer[DependentRetest]
    hidden_dependents_failed: int
    hidden_dependents_passed: int
    normalizations: _containers.RepeatedScalarFieldContainer[str]
    routing_gate: _routing_pb2.RoutingGateReport
    similar_skills: _containers.RepeatedCompositeFieldContainer[_learning_pb2.SimilarSkill]
    skill: _skills_pb2.Skill
    test: _execution_pb2.ExecutionResult
    test_file_warnings: _containers.RepeatedScalarFieldContainer[str]
    test_files: _containers.RepeatedCompositeFieldContainer[_execution_pb2.OutputFile]
    unchanged: bool
    warnings: _containers.RepeatedCompositeFieldContainer[GuardFinding]
    def __init__(self, skill: _Optional[_Union[_skills_pb2.Skill, _Mapping]] = ..., test: _Optional[_Union[_execution_pb2.ExecutionResult, _Mapping]] = ..., normalizations: _Optional[_Iterable[str]] = ..., warnings: _Optional[_Iterable[_Union[GuardFinding, _Mapping]]] = ..., dependents_retested: _Optional[_Iterable[_Union[DependentRetest, _Mapping]]] = ..., hidden_dependents_passed: _Optional[int] = ..., hidden_dependents_failed: _Optional[int] = ..., similar_skills: _Optional[_Iterable[_Union[_learning_pb2.SimilarSkill, _Mapping]]] = ..., test_files: _Optional[_Iterable[_Union[_execution_pb2.OutputFile, _Mapping]]] = ..., test_file_warnings: _Optional[_Iterable[str]] = ..., routing_gate: _Optional[_Union[_routing_pb2.RoutingGateReport, _Mapping]] = ..., unchanged: bool = ...) -> None: ...
