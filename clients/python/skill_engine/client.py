"""The skill engine client: register, invoke, route and report outcomes over gRPC."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence, Tuple, Union

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from .errors import from_rpc_error
from .gen.skillengine.v1 import (
    composition_pb2,
    environments_pb2,
    execution_pb2,
    learning_pb2,
    playbook_pb2,
    playbook_pb2_grpc,
    registration_pb2,
    routing_pb2,
    secrets_pb2,
    sharing_pb2,
    skill_engine_pb2_grpc,
    skills_pb2,
    sources_pb2,
)
from .results import InvocationResult, Outcome, Registration, Route, ToolList, enum_number

DEFAULT_ADDRESS = "127.0.0.1:50051"
"""Where the service listens by default (SKILL_ENGINE_HOST, SKILL_ENGINE_PORT)."""

DEFAULT_TIMEOUT_SECONDS = 120.0
"""Deadline of each call unless told otherwise: a registration includes its test run in a container."""

MAX_RECEIVE_MESSAGE_BYTES = (256 + 2 * 64 + 8) * 1024 * 1024
"""The largest answer the client reads: the largest the service sends under any configuration, files
inline (SKILL_ENGINE_OUTPUT_INLINE_MB, at most 256 MiB), stdout and stderr (at most 64 MiB each) and 8 MiB for
the rest (docs/files.md#message-sizes). grpcio reads only 4 MiB by default."""

_REMEMBERED_INVOCATIONS = 4096
"""How many invocation ids :meth:`SkillEngine.record_outcome` can name the skill of without ``name=``."""

Json = Any
"""A value json.dumps accepts (dict, list, str, number, bool, None)."""
Payload = Union[Mapping[str, Any], str, None]
Files = Union[Mapping[str, Union[bytes, str]], Iterable[Tuple[str, Union[bytes, str]]], None]
Tls = Union[bool, str, bytes, grpc.ChannelCredentials, None]

_LISTINGS: Mapping[str, Tuple[Callable[[], Message], str]] = {
    "ListSkills": (skills_pb2.ListSkillsRequest, "skills"),
    "ListSkillVersions": (skills_pb2.ListSkillVersionsRequest, "versions"),
    "GetCatalog": (composition_pb2.GetCatalogRequest, "skills"),
    "ListSkillSources": (sources_pb2.ListSkillSourcesRequest, "sources"),
    "ListGrants": (sharing_pb2.ListGrantsRequest, "grants"),
    "ListCandidates": (learning_pb2.ListCandidatesRequest, "candidates"),
    "ListSkillEvolution": (learning_pb2.ListSkillEvolutionRequest, "events"),
    "ListEnvironments": (environments_pb2.ListEnvironmentsRequest, "environments"),
    "ListSecrets": (secrets_pb2.ListSecretsRequest, "secrets"),
    "ListLessons": (playbook_pb2.ListLessonsRequest, "lessons"),
}
"""Every list RPC (docs/api.md#pagination): its request message and the field of its answer holding the items."""


class SkillEngine:
    """A connection to a skill engine service::

        engine = SkillEngine("127.0.0.1:50051")
        engine.register("add", code, description="Adds a and b", test_payload={"a": 1, "b": 2})
        engine.invoke("add", {"a": 2, "b": 3}).json  # what the skill printed, parsed

    Args:
        address: ``host:port`` of the service.
        token: sent as ``authorization: Bearer <token>`` on every call, when the service has tokens
            configured (docs/security.md). None for a service without tokens.
        tls: None or False for plaintext; True for TLS checked against the system's roots; a path
            (str) or the PEM bytes of the CA that signed the server's certificate; or ready
            ``grpc.ChannelCredentials`` (client certificates and the like).
        timeout: the deadline of each call in seconds (None: no deadline); each method takes its own
            ``timeout=`` too.
        options: more gRPC channel options, e.g. ``[("grpc.ssl_target_name_override", "engine")]``.

    Errors are raised as :class:`skill_engine.SkillEngineError` subclasses, one per gRPC code
    (``NotFoundError``, ``InvalidArgumentError``, ...). Use it as a context manager, or call
    :meth:`close`.
    """

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        token: Optional[str] = None,
        tls: Tls = None,
        *,
        timeout: Optional[float] = DEFAULT_TIMEOUT_SECONDS,
        options: Sequence[Tuple[str, Any]] = (),
    ) -> None:
        channel_options = [("grpc.max_receive_message_length", MAX_RECEIVE_MESSAGE_BYTES), *options]
        credentials = _channel_credentials(tls)
        if credentials is None:
            self._channel = grpc.insecure_channel(address, options=channel_options)
        else:
            self._channel = grpc.secure_channel(address, credentials, options=channel_options)
        self.address = address
        self.timeout = timeout
        # Token files usually end with a newline; the header must not.
        self._metadata: Tuple[Tuple[str, str], ...] = (
            (("authorization", f"Bearer {token.strip()}"),) if token is not None else ()
        )
        self.stub = skill_engine_pb2_grpc.SkillEngineStub(self._channel)
        """The generated stub of every SkillEngine RPC, for what this class does not wrap (use :meth:`call`)."""
        self.playbook = playbook_pb2_grpc.PlaybookStub(self._channel)
        """The generated stub of the Playbook service's RPCs (lessons), on the same channel."""
        self._invocations: "OrderedDict[str, str]" = OrderedDict()

    # -- the calls ---------------------------------------------------------------------------

    def register(
        self,
        name: str,
        code: str,
        description: str,
        parameters_schema: Union[Mapping[str, Any], str, None] = None,
        test_payload: Payload = None,
        *,
        timeout: Optional[float] = None,
        **more: Any,
    ) -> Registration:
        """Registers a skill, or a new version of it, after its test run (the TDD gate) passed.

        The skill's code gets the payload as JSON text in ``sys.argv[1]`` and prints its result
        (docs/api.md#registerskill). The service runs it once on ``test_payload`` in a sandbox: it must
        exit 0 and print something, or the registration fails with FailedPreconditionError whose
        message is the one-line cause (``line 7: KeyError: 'items'``). Registering the active version
        again (the same code and declarations) runs nothing and makes no version: the answer has
        ``unchanged`` True and ``test`` None (docs/skill-lifecycle.md#identical-registrations).

        Args:
            name: usable as a tool name: 1-64 letters, digits, ``_`` or ``-``.
            code: the Python source.
            description: what it does and when to use it (routing searches it).
            parameters_schema: the JSON Schema of the payload, as a dict or JSON text; None for a
                skill without parameters.
            test_payload: the payload of the test run, as a dict or JSON text (None: ``{}``).
            timeout: this call's deadline in seconds (the test run counts).
            **more: any other field of RegisterSkillRequest by its name, e.g.
                ``example_queries=["..."]``, ``visibility="public"``, ``requirements=["PyYAML==6.0.1"]``,
                ``depends_on=[...]``, ``test_files={"in.csv": b"..."}``, ``secrets=[...]``,
                ``network_allow=["api.example.com"]``, ``on_duplicate="reject"``. Enums take their value's name.

        Raises:
            InvalidArgumentError: a field is malformed (the message names it).
            FailedPreconditionError: the test run failed.
        """
        request = registration_pb2.RegisterSkillRequest(
            name=name,
            code=code,
            description=description,
            parameters_schema=_json_text(parameters_schema, "parameters_schema", empty=""),
            test_payload=_json_text(test_payload, "test_payload", empty="{}"),
        )
        _set_fields(request, more)
        return Registration.from_response(self.call("RegisterSkill", request, timeout=timeout))

    def invoke(
        self,
        name: str,
        payload: Payload = None,
        files: Files = None,
        *,
        route_id: str = "",
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> InvocationResult:
        """Runs the active version of a skill on a payload.

        A skill that fails is an answer, not an exception: look at ``result.success`` and
        ``result.error_summary``. ``result.json`` is the printed result parsed when it is JSON.

        Args:
            name: the skill.
            payload: a dict (sent as JSON) or JSON text; None for ``{}``.
            files: files placed read-only under ``/sandbox/in/<path>``: a mapping (or pairs) of
                relative path to bytes or text (docs/files.md#input-files).
            route_id: the :meth:`route` answer this call follows, so that a success teaches routing.
            idempotency_key: your promise that running this twice is harmless; lets the service
                retry a run whose execution host vanished (docs/execution-hosts.md#at-most-once).
            timeout: this call's deadline in seconds.

        Raises:
            NotFoundError: no such skill (or one you may not see).
            InvalidArgumentError: the payload does not match the skill's parameters schema.
            UnavailableError: the service or its sandbox engine is down.
            ResourceExhaustedError: the run queue is full.
        """
        request = execution_pb2.InvokeSkillRequest(
            name=name,
            payload=_json_text(payload, "payload", empty=""),
            route_id=route_id,
            files=_input_files(files),
        )
        if idempotency_key is not None:
            request.idempotency_key = idempotency_key
        result = InvocationResult.from_response(name, self.call("InvokeSkill", request, timeout=timeout))
        if result.invocation_id:
            self._remember(result.invocation_id, name)
        return result

    def route(
        self,
        query: str,
        limit: int = 5,
        *,
        format: str = "openai",  # noqa: A002 - the service's word for it
        mode: Optional[str] = None,
        min_relevance: Optional[float] = None,
        hardening: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Route:
        """The few skills that matter for a query, best first, each with its tool definition.

        Args:
            query: the user's request (or the task at hand), in words.
            limit: at most this many skills (the service allows up to 50).
            format: ``"openai"`` or ``"anthropic"``: the shape of each skill's ``tool``.
            mode: ``"fused"`` (default), ``"keywords"``, ``"vectors"`` or ``"rrf"``.
            min_relevance: leave out skills below this calibrated relevance (0..1); None: the
                service's default. The answer may then be empty: no skill fits.
            hardening: what each tool's description adds about calling it: ``"short"`` (the service's
                default: one line), ``"full"`` (a label, an example call and the wrappers not to write) or
                ``"none"`` (the description as registered) (docs/routing.md#hardened-descriptions).
            timeout: this call's deadline in seconds.
        """
        request = routing_pb2.RouteSkillsRequest(query=query, limit=limit)
        _set_fields(request, {"format": format, "mode": mode, "hardening": hardening})
        if min_relevance is not None:
            request.min_relevance = min_relevance
        return Route.from_response(self.call("RouteSkills", request, timeout=timeout))

    def route_as_tools(
        self,
        query: str,
        format: str = "openai",  # noqa: A002 - the service's word for it
        limit: int = 5,
        *,
        min_relevance: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> ToolList:
        """The tool definitions of the skills that matter for a query, as the service renders them for
        an LLM API: ``{"type": "function", "function": {...}}`` for ``"openai"``,
        ``{"name", "description", "input_schema"}`` for ``"anthropic"``.

        The answer is a plain list, ready for the model's ``tools`` parameter; its ``route_id``
        attribute goes back with :meth:`invoke`.
        """
        return self.route(query, limit, format=format, min_relevance=min_relevance, timeout=timeout).tools()

    def record_outcome(
        self,
        invocation_id: Union[str, InvocationResult],
        success: bool,
        note: str = "",
        *,
        name: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Outcome:
        """Says whether an invocation achieved its goal (an exit 0 that did not help is a failure).

        The verdict counts in the skill's health window and overrides the exit code's
        (docs/learning.md#outcomes).

        Args:
            invocation_id: ``result.invocation_id`` of :meth:`invoke`, or the result itself.
            success: whether the skill did the job.
            note: why (at most 2,000 characters).
            name: the skill; needed only for an invocation this client did not make (the last
                4,096 it made are remembered).
            timeout: this call's deadline in seconds.

        Raises:
            NotFoundError: no such invocation of yours.
        """
        if isinstance(invocation_id, InvocationResult):
            name = name or invocation_id.name
            invocation_id = invocation_id.invocation_id
        skill = name or self._invocations.get(invocation_id)
        if not skill:
            raise ValueError(
                f"record_outcome: invocation {invocation_id!r} was not made by this client: "
                "pass name= (the skill's name)"
            )
        request = learning_pb2.RecordSkillOutcomeRequest(
            name=skill, invocation_id=invocation_id, success=success, note=note
        )
        response = self.call("RecordSkillOutcome", request, timeout=timeout)
        return Outcome.from_response(skill, invocation_id, success, response)

    # -- listings, a page at a time ----------------------------------------------------------

    def pages(
        self, method: str, *, page_size: Optional[int] = None, timeout: Optional[float] = None, **filters: Any
    ) -> Iterator[Any]:
        """Every page of a list RPC, asked for one after the other: each answer's ``next_page_token``
        goes back with the same filters until it is empty (docs/api.md#pagination).

        ``engine.pages("ListSkills", page_size=100, include_inactive=True)`` yields ListSkillsResponse
        messages, whole (ListSkillSources' ``problems`` and ``directories`` too). Each page is asked for
        when the iteration reaches it; an item added or removed meanwhile moves no other item across a
        page boundary, so every item that exists throughout is seen once. ListLessons orders by utility,
        computed at the first page's instant: a lesson whose own numbers change during the walk (a
        retrieval, a credit) can move across a page boundary (docs/api.md#pagination).

        Args:
            method: a list RPC: ListSkills, ListSkillVersions, GetCatalog, ListSkillSources, ListGrants,
                ListCandidates, ListSkillEvolution, ListEnvironments, ListSecrets or ListLessons.
            page_size: items a page; None: the service's default (1,000, also its maximum).
            timeout: each page's deadline in seconds.
            **filters: the request's other fields by name (``name="add"``, ``status="pending"``; enums
                take their value's name).

        Raises:
            ValueError: not a list RPC (at once).
            TypeError: a filter the request has no field for (at once).
            InvalidArgumentError: a filter the service refuses, or a negative page size (when the
                iteration asks for that page).
        """
        listing = _LISTINGS.get(method)
        if listing is None:
            raise ValueError(f"{method!r} is not a list RPC: use one of {', '.join(sorted(_LISTINGS))}")
        first = listing[0]()
        _set_fields(first, filters)
        if page_size is not None:
            first.page_size = page_size
        return self._follow(method, first, timeout)

    def _follow(self, method: str, first: Message, timeout: Optional[float]) -> Iterator[Any]:
        token = ""
        given: "set[str]" = set()
        while True:
            request = type(first)()
            request.CopyFrom(first)
            if token:
                request.page_token = token
            page = self.call(method, request, timeout=timeout)
            yield page
            token = page.next_page_token
            if not token:
                return
            # A token the service already gave would loop forever: a broken service, not a long list.
            if token in given:
                raise RuntimeError(f"{method}: the service answered the same next_page_token twice")
            given.add(token)

    def iter_items(
        self, method: str, *, page_size: Optional[int] = None, timeout: Optional[float] = None, **filters: Any
    ) -> Iterator[Any]:
        """The items of every page of a list RPC, in the listing's order (:meth:`pages` says how):
        ``for skill in engine.iter_items("ListSkills"): ...``. ``list(...)`` of it is the whole list."""
        pages = self.pages(method, page_size=page_size, timeout=timeout, **filters)
        field = _LISTINGS[method][1]
        return (item for page in pages for item in getattr(page, field))

    def iter_skills(
        self,
        *,
        include_inactive: bool = False,
        owner: str = "",
        page_size: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> Iterator[skills_pb2.Skill]:
        """Every skill you may see, by name (ListSkills); retired and deleted ones with
        ``include_inactive``; ``owner`` keeps one agent's."""
        return self.iter_items(
            "ListSkills", page_size=page_size, timeout=timeout, include_inactive=include_inactive, owner=owner
        )

    def iter_skill_versions(
        self, name: str, *, page_size: Optional[int] = None, timeout: Optional[float] = None
    ) -> Iterator[skills_pb2.SkillVersion]:
        """Every version of a skill, oldest first (ListSkillVersions)."""
        return self.iter_items("ListSkillVersions", page_size=page_size, timeout=timeout, name=name)

    def iter_catalog(
        self, *, page_size: Optional[int] = None, timeout: Optional[float] = None
    ) -> Iterator[composition_pb2.CatalogEntry]:
        """Your catalog (GetCatalog): every skill you may see by name, with its dependency status, then
        the folders of the last scan that are no listed skill's ready source."""
        return self.iter_items("GetCatalog", page_size=page_size, timeout=timeout)

    def iter_skill_sources(
        self, *, page_size: Optional[int] = None, timeout: Optional[float] = None
    ) -> Iterator[composition_pb2.CatalogEntry]:
        """The skill folders of the last scan, by directory and folder (ListSkillSources)."""
        return self.iter_items("ListSkillSources", page_size=page_size, timeout=timeout)

    def iter_grants(
        self, name: str, *, page_size: Optional[int] = None, timeout: Optional[float] = None
    ) -> Iterator[sharing_pb2.SkillGrant]:
        """The grants of a skill you own (ListGrants)."""
        return self.iter_items("ListGrants", page_size=page_size, timeout=timeout, name=name)

    def iter_candidates(
        self, status: Optional[str] = None, *, page_size: Optional[int] = None, timeout: Optional[float] = None
    ) -> Iterator[learning_pb2.Candidate]:
        """Skill candidates from recorded sessions (ListCandidates); ``status``: ``"candidate"``,
        ``"promoted"`` or ``"dismissed"`` (None: every one)."""
        return self.iter_items("ListCandidates", page_size=page_size, timeout=timeout, status=status)

    def iter_skill_evolution(
        self, name: str, *, page_size: Optional[int] = None, timeout: Optional[float] = None
    ) -> Iterator[learning_pb2.EvolutionEvent]:
        """A skill's evolution events, oldest first (ListSkillEvolution)."""
        return self.iter_items("ListSkillEvolution", page_size=page_size, timeout=timeout, name=name)

    def iter_environments(
        self, *, page_size: Optional[int] = None, timeout: Optional[float] = None
    ) -> Iterator[environments_pb2.Environment]:
        """The package environments (ListEnvironments)."""
        return self.iter_items("ListEnvironments", page_size=page_size, timeout=timeout)

    def iter_secrets(
        self, *, page_size: Optional[int] = None, timeout: Optional[float] = None
    ) -> Iterator[secrets_pb2.SecretInfo]:
        """Your secrets' names and dates, never their values (ListSecrets)."""
        return self.iter_items("ListSecrets", page_size=page_size, timeout=timeout)

    def iter_lessons(
        self,
        *,
        scope: Optional[str] = None,
        domain: str = "",
        include_inactive: bool = False,
        owner: str = "",
        page_size: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> Iterator[playbook_pb2.Lesson]:
        """Your playbook's lessons, most useful first (ListLessons); ``scope``: ``"today"``, ``"week"``
        or ``"all"`` (None: all); ``domain`` keeps one domain's."""
        return self.iter_items(
            "ListLessons",
            page_size=page_size,
            timeout=timeout,
            scope=scope,
            domain=domain,
            include_inactive=include_inactive,
            owner=owner,
        )

    # -- any RPC -----------------------------------------------------------------------------

    def call(self, method: str, request: Message, *, timeout: Optional[float] = None) -> Any:
        """Any RPC of the SkillEngine or the Playbook service by its name, with this client's token,
        deadline and error mapping: ``engine.call("GetSkill", skills_pb2.GetSkillRequest(name="add"))``.

        Returns the response message; raises :class:`SkillEngineError` subclasses.
        """
        # The two services' RPC names do not overlap.
        rpc = getattr(self.stub, method, None) or getattr(self.playbook, method, None)
        if rpc is None:
            raise AttributeError(f"neither the SkillEngine nor the Playbook service has an RPC {method!r}")
        try:
            return rpc(request, timeout=self.timeout if timeout is None else timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error, method) from error

    # -- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the channel; calls made after it fail."""
        self._channel.close()

    def __enter__(self) -> "SkillEngine":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SkillEngine({self.address!r}, token={'...' if self._metadata else None})"

    def _remember(self, invocation_id: str, name: str) -> None:
        self._invocations[invocation_id] = name
        self._invocations.move_to_end(invocation_id)
        while len(self._invocations) > _REMEMBERED_INVOCATIONS:
            self._invocations.popitem(last=False)


def _channel_credentials(tls: Tls) -> Optional[grpc.ChannelCredentials]:
    if tls is None or tls is False:
        return None
    if tls is True:
        return grpc.ssl_channel_credentials()
    if isinstance(tls, grpc.ChannelCredentials):
        return tls
    if isinstance(tls, bytes):
        return grpc.ssl_channel_credentials(root_certificates=tls)
    if isinstance(tls, str):
        with open(tls, "rb") as ca:
            return grpc.ssl_channel_credentials(root_certificates=ca.read())
    raise TypeError(
        f"tls must be None, a bool, a CA path, CA PEM bytes or grpc.ChannelCredentials, not {type(tls).__name__}"
    )


def _json_text(value: Json, field: str, *, empty: str) -> str:
    """JSON text for a field the service takes as JSON: text is sent as it is, anything else as JSON."""
    if value is None:
        return empty
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{field}: cannot be sent as JSON: {error}") from error


def _input_files(files: Files) -> Sequence[execution_pb2.InputFile]:
    if files is None:
        return []
    pairs = files.items() if isinstance(files, Mapping) else files
    return [
        execution_pb2.InputFile(path=path, content=content.encode("utf-8") if isinstance(content, str) else content)
        for path, content in pairs
    ]


def _enum_value(enum: Any, value: Any) -> int:
    return enum_number(enum, value) if isinstance(value, str) else int(value)


def _is_repeated(descriptor: FieldDescriptor) -> bool:
    # protobuf 7 dropped FieldDescriptor.label for is_repeated, which protobuf 4.21 does not have.
    is_repeated = getattr(descriptor, "is_repeated", None)
    if is_repeated is not None:
        return bool(is_repeated)
    return bool(descriptor.label == FieldDescriptor.LABEL_REPEATED)


def _set_fields(message: Message, values: Mapping[str, Any]) -> None:
    """Sets fields of a request by name; enums take their value's name, InputFile lists a mapping."""
    fields = message.DESCRIPTOR.fields_by_name
    for key, value in values.items():
        descriptor = fields.get(key)
        if descriptor is None:
            known = ", ".join(sorted(fields))
            raise TypeError(f"{message.DESCRIPTOR.name} has no field {key!r}; its fields: {known}")
        if value is None:
            continue
        repeated = _is_repeated(descriptor)
        if descriptor.type == FieldDescriptor.TYPE_ENUM:
            enum = descriptor.enum_type
            if repeated:
                getattr(message, key).extend(_enum_value(enum, v) for v in value)
            else:
                setattr(message, key, _enum_value(enum, value))
        elif descriptor.message_type is not None and descriptor.message_type.full_name == "skillengine.v1.InputFile":
            getattr(message, key).extend(_input_files(value))
        elif repeated:
            if isinstance(value, str):
                raise TypeError(f"{key}: takes a list, not a string")
            getattr(message, key).extend(value)
        elif descriptor.message_type is not None:
            getattr(message, key).CopyFrom(value)
        else:
            setattr(message, key, value)
