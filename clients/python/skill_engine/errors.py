"""Errors of the skill engine client: one exception per gRPC status the service answers with.

Every failed call raises a :class:`SkillEngineError` (or the subclass for its code) carrying the
gRPC status code and the service's message, which says what was wrong and usually what to do
(e.g. ``payload: does not match parameters_schema: /a must be number``). A skill that fails when
invoked is *not* an error: :meth:`SkillEngine.invoke` returns a result whose ``success`` is false.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

import grpc


class SkillEngineError(Exception):
    """A call the service refused or could not complete.

    Attributes:
        code: the gRPC status code (``grpc.StatusCode.NOT_FOUND``, ...).
        details: the service's message (for INVALID_ARGUMENT it names the field first).
        method: the RPC that failed, e.g. ``"InvokeSkill"``.
    """

    def __init__(self, code: grpc.StatusCode, details: str, method: str = "") -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details
        self.method = method

    @property
    def code_name(self) -> str:
        """The code's name as the service's documentation writes it, e.g. ``"NOT_FOUND"``."""
        return str(self.code.name)


class InvalidArgumentError(SkillEngineError):
    """A field is malformed; the message names it (``payload: ...``, ``code: ...``)."""


class NotFoundError(SkillEngineError):
    """No such skill (or one the caller may not see), invocation or other named thing."""


class AlreadyExistsError(SkillEngineError):
    """The name belongs to another agent's skill, or a near-duplicate was rejected."""


class PermissionDeniedError(SkillEngineError):
    """The caller may see the thing but not change it, or the call is for admins only."""


class UnauthenticatedError(SkillEngineError):
    """The service has tokens configured and the call carried none, or a wrong one."""


class FailedPreconditionError(SkillEngineError):
    """The registration's test run failed (the message is its one-line cause), or the skill's state forbids the call."""


class ResourceExhaustedError(SkillEngineError):
    """The run queue is full or a quota is reached; retry later."""


class AbortedError(SkillEngineError):
    """The skill changed while the call was under way; read it again and retry."""


class UnavailableError(SkillEngineError):
    """The service (or its sandbox engine) cannot be reached right now."""


class DeadlineExceededError(SkillEngineError):
    """The call's timeout passed before the service answered."""


class CancelledError(SkillEngineError):
    """The call was cancelled before the service answered (a running container is stopped too)."""


class InternalError(SkillEngineError):
    """The service failed in a way it did not expect (a bug: its log says more)."""


_BY_CODE: Dict[grpc.StatusCode, Type[SkillEngineError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.ABORTED: AbortedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.CANCELLED: CancelledError,
    grpc.StatusCode.INTERNAL: InternalError,
}


def error_class_for(code: grpc.StatusCode) -> Type[SkillEngineError]:
    """The exception class raised for a status code (:class:`SkillEngineError` for codes without their own)."""
    return _BY_CODE.get(code, SkillEngineError)


def from_rpc_error(error: grpc.RpcError, method: str = "") -> SkillEngineError:
    """Translates what grpcio raised for a failed call into the matching :class:`SkillEngineError`."""
    # A failed unary call's RpcError is also a grpc.Call, which has code() and details().
    code_of = getattr(error, "code", None)
    details_of = getattr(error, "details", None)
    code: Optional[grpc.StatusCode] = code_of() if callable(code_of) else None
    details: Optional[str] = details_of() if callable(details_of) else None
    if not isinstance(code, grpc.StatusCode):
        code = grpc.StatusCode.UNKNOWN
    return error_class_for(code)(code, (details or str(error)).strip(), method)
