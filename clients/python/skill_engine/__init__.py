"""Python client of the skill engine: register, invoke and route executable skills over gRPC.

    from skill_engine import SkillEngine

    with SkillEngine("127.0.0.1:50051") as engine:
        engine.register("add", code, description="Adds a and b", test_payload={"a": 1, "b": 2})
        print(engine.invoke("add", {"a": 2, "b": 3}).json)

The generated messages and stubs of every RPC are under ``skill_engine.gen.skillengine.v1``.
"""

from .client import DEFAULT_ADDRESS, DEFAULT_TIMEOUT_SECONDS, MAX_RECEIVE_MESSAGE_BYTES, SkillEngine
from .errors import (
    AbortedError,
    AlreadyExistsError,
    CancelledError,
    DeadlineExceededError,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    SkillEngineError,
    UnauthenticatedError,
    UnavailableError,
    error_class_for,
)
from .results import InvocationResult, Outcome, OutputFile, Registration, Route, RoutedSkill, RunResult, ToolList

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_RECEIVE_MESSAGE_BYTES",
    "AbortedError",
    "AlreadyExistsError",
    "CancelledError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "InvocationResult",
    "NotFoundError",
    "Outcome",
    "OutputFile",
    "PermissionDeniedError",
    "Registration",
    "ResourceExhaustedError",
    "Route",
    "RoutedSkill",
    "RunResult",
    "SkillEngine",
    "SkillEngineError",
    "ToolList",
    "UnauthenticatedError",
    "UnavailableError",
    "error_class_for",
]
