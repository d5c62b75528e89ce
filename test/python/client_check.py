"""Drives the installed Python client against a real service (test/python-client.docker.test.ts).

    client_check.py ADDRESS TOKEN

The service has tokens configured and TOKEN is an agent's. Each check prints "ok: ..."; the first
failure raises (exit code 1) with what was expected and what came back.
"""

from __future__ import annotations

import json
import sys

import grpc
from google.protobuf import json_format, struct_pb2

import skill_engine
from skill_engine import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    SkillEngine,
    SkillEngineError,
    UnauthenticatedError,
    UnavailableError,
)
from skill_engine.gen.skillengine.v1 import execution_pb2, operations_pb2, playbook_pb2

ADD = """import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"sum": args["a"] + args["b"]}))
"""
DIVIDE = """import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"quotient": args["a"] / args["b"]}))
"""
UPPER_FILE = """import json, pathlib
text = pathlib.Path("/sandbox/in/in.txt").read_text()
pathlib.Path("/sandbox/out/out.txt").write_text(text.upper())
print(json.dumps({"chars": len(text)}))
"""
NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}


def check(condition: bool, what: str, got: object) -> None:
    if not condition:
        raise AssertionError(f"{what}; got {got!r}")


def expect_error(kind: type, call, what: str) -> SkillEngineError:  # type: ignore[no-untyped-def]
    try:
        call()
    except kind as error:
        return error  # type: ignore[return-value]
    except Exception as error:  # noqa: BLE001 - reported as the failure
        raise AssertionError(f"{what}: expected {kind.__name__}, got {type(error).__name__}: {error}") from error
    raise AssertionError(f"{what}: expected {kind.__name__}, but the call succeeded")


def main(address: str, token: str) -> None:
    print(f"client: {skill_engine.__file__}")
    engine = SkillEngine(address, token=token + "\n", timeout=300)

    who = engine.call("WhoAmI", operations_pb2.WhoAmIRequest())
    check(who.agent_id == "alice" and who.authenticated, "the token names alice", who)
    print("ok: the token goes as authorization: Bearer")

    added = engine.register(
        "py_add",
        ADD,
        description="Adds two numbers a and b and prints their sum",
        parameters_schema=NUMBERS,
        test_payload={"a": 1, "b": 2},
        example_queries=["add two numbers together"],
    )
    check(added.name == "py_add" and added.version >= 1 and added.status == "active", "py_add active", added)
    check(added.test.success and added.test.json == {"sum": 3}, "the test run printed the sum", added.test)
    print("ok: register")

    result = engine.invoke("py_add", {"a": 2, "b": 3.5})
    check(result.success and result.is_json and result.json == {"sum": 5.5}, "invoke answers the sum as JSON", result)
    check(
        result.invocation_id.isdigit() and result.version == added.version, "an invocation id and the version", result
    )
    text_payload = engine.invoke("py_add", '{"a": 1, "b": 1}')
    check(text_payload.json == {"sum": 2}, "a payload given as JSON text", text_payload)
    print("ok: invoke")

    same = engine.register(
        "py_add",
        ADD,
        description="Adds two numbers a and b and prints their sum",
        parameters_schema=NUMBERS,
        test_payload={"a": 1, "b": 2},
        example_queries=["add two numbers together"],
    )
    check(same.unchanged and same.version == added.version, "the same registration again is unchanged", same)
    check(same.test is None and not added.unchanged, "no test run for it, one for the first", same)
    print("ok: an identical registration is unchanged")

    structured = execution_pb2.InvokeSkillRequest(name="py_add")
    structured.payload_json.update({"a": 2, "b": 40})
    answer = engine.call("InvokeSkill", structured)
    check(answer.result.HasField("result_json"), "the result as a structure", answer.result)
    check(json_format.MessageToDict(answer.result.result_json) == {"sum": 42}, "the sum, parsed by the service", answer)
    check(isinstance(answer.result.result_json, struct_pb2.Value), "a google.protobuf.Value", answer.result)
    check(
        json_format.MessageToDict(same.raw.skill.parameters_schema_json) == NUMBERS, "the schema as a structure", same.raw
    )
    both = execution_pb2.InvokeSkillRequest(name="py_add", payload='{"a": 1, "b": 1}')
    both.payload_json.update({"a": 1, "b": 1})
    refused = expect_error(InvalidArgumentError, lambda: engine.call("InvokeSkill", both), "payload and payload_json")
    check(refused.details.startswith("payload_json: give payload or payload_json, not both"), "says which", refused)
    print("ok: JSON as structures")

    engine.register(
        "py_upper_file",
        UPPER_FILE,
        description="Upper-cases the text file in.txt into out.txt",
        test_files={"in.txt": b"abc"},
    )
    with_files = engine.invoke("py_upper_file", files={"in.txt": "hello files"})
    check(with_files.success and with_files.json == {"chars": 11}, "the skill read its input file", with_files)
    out = {f.path: f for f in with_files.files}
    check("out.txt" in out and out["out.txt"].content == b"HELLO FILES", "out.txt came back", with_files.files)
    check(
        out["out.txt"].text() == "HELLO FILES" and out["out.txt"].size_bytes == 11, "its text and size", out["out.txt"]
    )
    print("ok: files in and out")

    engine.register(
        "py_divide", DIVIDE, description="Divides a by b", parameters_schema=NUMBERS, test_payload={"a": 6, "b": 3}
    )
    failed = engine.invoke("py_divide", {"a": 1, "b": 0})
    check(not failed.success and "ZeroDivisionError" in failed.error_summary, "a failing skill is an answer", failed)
    check(failed.json is None and not failed.is_json, "no JSON from a failed run", failed)
    print("ok: a failed run is in-band")

    missing = expect_error(NotFoundError, lambda: engine.invoke("no_such_skill_here", {}), "invoke of an unknown skill")
    check(
        missing.code == grpc.StatusCode.NOT_FOUND and missing.method == "InvokeSkill",
        "NOT_FOUND of InvokeSkill",
        missing,
    )
    check(
        isinstance(missing, SkillEngineError) and "no_such_skill_here" in missing.details,
        "details name the skill",
        missing,
    )
    bad = expect_error(
        InvalidArgumentError, lambda: engine.invoke("py_add", {"a": "x", "b": 1}), "a payload off the schema"
    )
    check(
        bad.code == grpc.StatusCode.INVALID_ARGUMENT and bad.details.startswith("payload:"),
        "INVALID_ARGUMENT naming payload",
        bad,
    )
    gate = expect_error(
        FailedPreconditionError,
        lambda: engine.register(
            "py_gate", DIVIDE, description="Divides", parameters_schema=NUMBERS, test_payload={"a": 1, "b": 0}
        ),
        "a registration whose test run fails",
    )
    check("ZeroDivisionError" in gate.details, "FAILED_PRECONDITION with the one-line cause", gate)
    anonymous = SkillEngine(address, timeout=60)
    expect_error(UnauthenticatedError, lambda: anonymous.route("add"), "a call without the token")
    anonymous.close()
    nobody = SkillEngine("127.0.0.1:1", timeout=60)
    expect_error(UnavailableError, lambda: nobody.invoke("py_add", {}), "a call to a port nobody listens on")
    nobody.close()
    print("ok: errors map to their classes")

    route = engine.route("add two numbers together", limit=5)
    names = [skill.name for skill in route]
    check(route.route_id != "" and "py_add" in names, "the route finds py_add", route)
    first = next(skill for skill in route if skill.name == "py_add")
    check(first.parameters == NUMBERS and first.kind == "plain", "its parameters schema, parsed", first)
    hardened = {
        level: next(s for s in engine.route("add two numbers together", hardening=level) if s.name == "py_add")
        for level in ("none", "full")
    }
    check(hardened["none"].description == "Adds two numbers a and b and prints their sum", "as registered", hardened)
    full = hardened["full"].description
    check(full.startswith("[ACQUIRED SKILL") and len(full) > len(first.description), "hardening full", hardened)
    print("ok: route")

    openai = engine.route_as_tools("add two numbers together", format="openai")
    tool = next(t for t in openai if t["function"]["name"] == "py_add")
    check(tool["type"] == "function" and tool["function"]["parameters"] == NUMBERS, "an OpenAI function tool", tool)
    check(isinstance(openai, list) and openai.route_id != "", "a list with its route id", openai)
    json.dumps(openai)
    anthropic = engine.route_as_tools("add two numbers together", format="anthropic")
    tool = next(t for t in anthropic if t["name"] == "py_add")
    check(
        tool["input_schema"] == NUMBERS and "description" in tool and "function" not in tool, "an Anthropic tool", tool
    )
    try:
        engine.route_as_tools("add", format="gemini")
        raise AssertionError("an unknown format was accepted")
    except ValueError as error:
        check("'openai'" in str(error) and "'anthropic'" in str(error), "the formats are named", error)
    routed = engine.invoke("py_add", {"a": 4, "b": 4}, route_id=openai.route_id)
    check(routed.json == {"sum": 8}, "an invocation following the route", routed)
    nothing = engine.route("book me a flight to Paris")
    check(nothing.no_fit and len(nothing) == 0 and nothing.tools() == [], "a query nothing fits: no_fit, no tools", nothing)
    print("ok: route_as_tools")

    outcome = engine.record_outcome(result.invocation_id, False, note="the user wanted a product")
    check(
        outcome.name == "py_add" and outcome.exit_code_success and outcome.overridden,
        "an override of an exit-0 run",
        outcome,
    )
    confirmed = engine.record_outcome(routed, True)
    check(confirmed.success and not confirmed.overridden, "a confirmation by result object", confirmed)
    expect_error(
        NotFoundError, lambda: engine.record_outcome("999999", True, name="py_add"), "an outcome of no invocation"
    )
    try:
        engine.record_outcome("999999", True)
        raise AssertionError("an invocation this client did not make was accepted without a name")
    except ValueError as error:
        check("name=" in str(error), "says to pass name=", error)
    print("ok: record_outcome")

    check_pages(engine)
    print("ok: list helpers follow pages")
    engine.close()
    print("all checks passed")


def check_pages(engine: SkillEngine) -> None:
    """The list helpers with pages smaller than the lists, so that each follows next_page_token."""
    for name, code, description in (
        ("py_page_apple", 'print("apple")', "Prints the word apple"),
        ("py_page_week", "print(7)", "Prints how many days a week has"),
        ("py_page_hello", 'print("hello")', "Prints a friendly greeting"),
    ):
        engine.register(name, code + "\n", description=description)
    engine.register("py_page_week", "print(7.0)\n", description="Prints how many days a week has")
    everyone = sorted(["py_add", "py_divide", "py_upper_file", "py_page_apple", "py_page_hello", "py_page_week"])

    pages = list(engine.pages("ListSkills", page_size=2))
    check([len(page.skills) for page in pages] == [2, 2, 2], "three pages of two skills", pages)
    check(pages[-1].next_page_token == "" and all(page.next_page_token for page in pages[:-1]), "tokens", pages)
    names = [skill.name for page in pages for skill in page.skills]
    check(names == everyone, "every skill once, by name", names)
    check([skill.name for skill in engine.iter_skills(page_size=4)] == everyone, "iter_skills", everyone)
    check([entry.name for entry in engine.iter_catalog(page_size=2)] == everyone, "iter_catalog", everyone)
    versions = [version.version for version in engine.iter_skill_versions("py_page_week", page_size=1)]
    check(versions == [1, 2], "iter_skill_versions, a version a page", versions)

    added = [
        engine.call(
            "AddLesson",
            playbook_pb2.AddLessonRequest(trigger=trigger, correct_pattern=pattern, domains=["coding"]),
        ).lesson.id
        for trigger, pattern in (
            ("When parsing dates from user input", "Use datetime.fromisoformat and say which format failed."),
            ("When reading a CSV file", "Use the csv module, never split on commas by hand."),
            ("When sorting a dictionary by its values", "Use sorted(d.items(), key=lambda kv: kv[1])."),
        )
    ]
    # ListLessons (the Playbook service's RPC) orders by a utility that decays with the clock; every page
    # of a walk orders at the instant of its first (docs/api.md#pagination), so each lesson is seen once.
    lesson_pages = list(engine.pages("ListLessons", page_size=2))
    check([len(page.lessons) for page in lesson_pages] == [2, 1], "lessons in two pages", lesson_pages)
    walked = [lesson for page in lesson_pages for lesson in page.lessons]
    check(sorted(lesson.id for lesson in walked) == sorted(added), "ListLessons pages: each lesson once", walked)
    utilities = [lesson.utility for lesson in walked]
    check(utilities == sorted(utilities, reverse=True), "ListLessons pages: one utility order", utilities)
    lessons = [lesson.id for lesson in engine.iter_lessons()]
    check(sorted(lessons) == sorted(added), "iter_lessons: each lesson once", lessons)

    try:
        engine.pages("GetSkill")
        raise AssertionError("GetSkill was taken for a list RPC")
    except ValueError as error:
        check("ListSkills" in str(error), "the list RPCs are named", error)
    refused = expect_error(InvalidArgumentError, lambda: list(engine.iter_skills(page_size=-1)), "a negative page size")
    check("page_size" in refused.details, "INVALID_ARGUMENT naming page_size", refused)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
