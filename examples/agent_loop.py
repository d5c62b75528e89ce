#!/usr/bin/env python3
"""An agent loop on the skill engine, runnable offline.

    python3 examples/agent_loop.py --address 127.0.0.1:50051 [--token TOKEN] [--request "..."]

One turn of what an agent does with the service:

1. route the user's request to the few skills that matter, as OpenAI tool definitions;
2. hand them to a model in the shape of OpenAI's chat-completions tool calling;
3. run the tool call the model chose as a skill invocation;
4. give the result back to the model for its answer, and tell the service whether the skill did the job.

The "model" is a stub (StubModel) that picks the first tool and fills its arguments from the
JSON Schema and the request, so the loop runs without a network or an API key. To use a real model,
replace StubModel.create with your client's ``chat.completions.create``: the request and the
answer have that shape.

Needs the client: pip install --no-index --no-build-isolation ./clients/python (clients/python/README.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any, Dict, List, Optional

from skill_engine import NotFoundError, SkillEngine, SkillEngineError

DEFAULT_REQUEST = "How many words are in 'the quick brown fox jumps over the lazy dog'?"

# Two skills for the demo, registered when missing so that the route has something to find. Each
# follows the skill contract: the payload arrives as JSON text in sys.argv[1]; the result is printed.
DEMO_SKILLS: List[Dict[str, Any]] = [
    {
        "name": "count_words",
        "description": "Counts the words in a text (words are separated by whitespace).",
        "parameters_schema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text whose words to count"}},
            "required": ["text"],
        },
        "code": "import json, sys\n"
        "args = json.loads(sys.argv[1])\n"
        'print(json.dumps({"words": len(args["text"].split())}))\n',
        "test_payload": {"text": "one two three"},
        "example_queries": ["how many words are in this sentence"],
    },
    {
        "name": "celsius_to_fahrenheit",
        "description": "Converts a temperature from degrees Celsius to degrees Fahrenheit.",
        "parameters_schema": {
            "type": "object",
            "properties": {"celsius": {"type": "number", "description": "Degrees Celsius"}},
            "required": ["celsius"],
        },
        "code": "import json, sys\n"
        "args = json.loads(sys.argv[1])\n"
        'print(json.dumps({"fahrenheit": args["celsius"] * 9 / 5 + 32}))\n',
        "test_payload": {"celsius": 100},
        "example_queries": ["what is 20 degrees celsius in fahrenheit"],
    },
]


class StubModel:
    """Stands in for an LLM behind OpenAI's chat-completions API: same request, same answer shape.

    On a turn whose last message is the user's, it calls the first tool offered, with arguments
    made from the tool's parameters schema and the user's words. On a turn after a tool result, it
    answers in words.
    """

    def create(self, *, model: str, messages: List[Dict[str, Any]], tools: List[Dict[str, Any]]) -> Dict[str, Any]:
        last = messages[-1]
        if last["role"] == "tool":
            content = f"The tool answered: {last['content']}"
            return _completion({"role": "assistant", "content": content}, "stop")
        if not tools:
            return _completion({"role": "assistant", "content": "I have no tool for that."}, "stop")
        function = tools[0]["function"]
        arguments = _arguments_for(function.get("parameters") or {}, last["content"])
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": function["name"], "arguments": json.dumps(arguments)},
        }
        return _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


def _completion(message: Dict[str, Any], finish_reason: str) -> Dict[str, Any]:
    return {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}


def _arguments_for(schema: Dict[str, Any], request: str) -> Dict[str, Any]:
    """A value for every property: its default or first enum value, else something from the request."""
    quoted = re.search(r"['\"\u2018\u201c]([^'\"\u2019\u201d]+)['\"\u2019\u201d]", request)
    number = re.search(r"-?\d+(?:\.\d+)?", request)
    arguments: Dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type")
        if "default" in prop:
            arguments[name] = prop["default"]
        elif prop.get("enum"):
            arguments[name] = prop["enum"][0]
        elif kind in ("number", "integer"):
            value = float(number.group()) if number else 0
            arguments[name] = int(value) if kind == "integer" else value
        elif kind == "boolean":
            arguments[name] = True
        elif kind == "string":
            arguments[name] = quoted.group(1) if quoted else request
    return arguments


def ensure_demo_skills(engine: SkillEngine) -> None:
    """Registers the demo skills that are not there yet (a registration runs the skill's test)."""
    from skill_engine.gen.skillengine.v1 import skills_pb2

    for skill in DEMO_SKILLS:
        try:
            engine.call("GetSkill", skills_pb2.GetSkillRequest(name=skill["name"]))
        except NotFoundError:
            registered = engine.register(**skill)
            if registered.test is None:  # the same code and declarations as the active version: nothing ran
                print(f"unchanged: {registered.name} v{registered.version}")
            else:
                printed = registered.test.stdout.strip()
                print(f"registered: {registered.name} v{registered.version} (test run printed {printed})")


def run(engine: SkillEngine, request: str) -> bool:
    """One agent turn for `request`; True when a skill did the job."""
    print(f"request: {request}")
    tools = engine.route_as_tools(request, format="openai", limit=3)
    print(f"routed: {', '.join(t['function']['name'] for t in tools) or '(no skill fits)'}")

    model = StubModel()
    messages: List[Dict[str, Any]] = [{"role": "user", "content": request}]
    reply = model.create(model="stub", messages=messages, tools=tools)["choices"][0]["message"]
    calls = reply.get("tool_calls") or []
    if not calls:
        print(f"answer: {reply['content']}")
        return False

    call = calls[0]
    name = call["function"]["name"]
    arguments = call["function"]["arguments"]
    print(f"model called: {name} {arguments}")
    # The model's arguments are JSON text already: the service takes them as the skill's payload,
    # and route_id tells routing which route this call followed.
    result = engine.invoke(name, arguments, route_id=tools.route_id)
    if result.success:
        print(f"result: success, {result.stdout.strip()}")
    else:
        print(f"result: failed, {result.error_summary}")
    for warning in result.warnings:
        print(f"warning: {warning}")

    messages += [
        reply,
        {"role": "tool", "tool_call_id": call["id"], "content": result.stdout.strip() or result.error_summary},
    ]
    answer = model.create(model="stub", messages=messages, tools=tools)["choices"][0]["message"]["content"]
    print(f"answer: {answer}")

    # The agent's verdict: here, that the skill printed JSON. A real agent judges by the task.
    did_the_job = result.success and result.is_json
    if result.invocation_id:
        outcome = engine.record_outcome(result, did_the_job, note="stub agent: judged by a JSON answer")
        print(f"outcome recorded: {'success' if outcome.success else 'failure'} (skill status: {outcome.status})")
    return did_the_job


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="One agent turn on the skill engine, with a stub model.")
    parser.add_argument("--address", default="127.0.0.1:50051", help="host:port of the service")
    parser.add_argument("--token", default=None, help="bearer token, when the service has tokens configured")
    parser.add_argument("--request", default=DEFAULT_REQUEST, help="the user's request")
    parser.add_argument("--no-seed", action="store_true", help="do not register the demo skills")
    args = parser.parse_args(argv)
    try:
        with SkillEngine(args.address, token=args.token) as engine:
            if not args.no_seed:
                ensure_demo_skills(engine)
            return 0 if run(engine, args.request) else 1
    except SkillEngineError as error:
        print(f"agent_loop: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
