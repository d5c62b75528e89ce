import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

/** Reads YAML only when asked to dump: the test payload never reaches the import. */
const LAZY_YAML = `import json
import sys


def as_yaml(data):
    import yaml
    return yaml.safe_dump(data)


args = json.loads(sys.argv[1])
print(json.dumps({"echo": args}))
`;

const EAGER_YAML = `import json
import sys
import yaml

print(json.dumps({"yaml": yaml.safe_dump(json.loads(sys.argv[1]))}))
`;

const STDLIB_ONLY = `from __future__ import annotations
import json
import os.path
import sys

try:
    import ujson as fast_json
except ImportError:
    fast_json = json

print(json.dumps({"base": os.path.basename(json.loads(sys.argv[1]).get("p", "/a/b"))}))
`;

const HELPER = `def shout(text):
    return text.upper() + "!"


if __name__ == "__main__":
    import json, sys
    print(json.dumps({"shout": shout(json.loads(sys.argv[1]).get("t", "hi"))}))
`;

const USES_HELPER = `import json
import sys
import scan_helper

print(json.dumps({"said": scan_helper.shout(json.loads(sys.argv[1]).get("t", "hi"))}))
`;

describe("packages: the dependency scan (warn only) and missing modules, through gRPC against the stdlib-only sandbox", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine();
  });
  afterAll(async () => {
    await engine.dispose();
  });

  it("a skill that imports yaml fails its test run: FAILED_PRECONDITION naming the module and requirements, nothing registered", async () => {
    const refused = await rpcError(engine.client.register({ name: "eager_yaml", code: EAGER_YAML }));
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    expect(refused.details.split("\n")[0]).toBe(
      'the test run failed: module "yaml" is not installed in the sandbox; declare it in requirements (PyYAML) or ' +
        "system_packages (python3-yaml) — the sandbox has Python's standard library only (docs/packages.md)",
    );
    expect((await rpcError(engine.client.get("eager_yaml"))).code).toBe(status.NOT_FOUND);
  });

  it("a skill that imports yaml where its test payload does not reach registers, warned to declare PyYAML", async () => {
    const registered = await engine.client.register({ name: "lazy_yaml", code: LAZY_YAML, testPayload: '{"a": 1}' });
    expect(registered.skill?.version).toBe(1);
    expect(registered.warnings).toEqual([
      {
        ruleId: "missing-dependency",
        category: "dependencies",
        severity: "warning",
        message:
          'imports "yaml", which no declared package provides: declare requirements ["PyYAML"] (or system_packages ["python3-yaml"]); see docs/packages.md',
        line: 6,
      },
    ]);
  });

  it("a patch that makes the import run fails the same way and leaves v1 active", async () => {
    const refused = await rpcError(
      engine.client.call(engine.client.raw.patchSkill, {
        name: "lazy_yaml",
        find: 'print(json.dumps({"echo": args}))',
        replace: 'print(json.dumps({"echo": args, "yaml": as_yaml(args)}))',
        testPayload: "",
      }),
    );
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    expect(refused.details).toMatch(
      /^the test run failed: module "yaml" is not installed in the sandbox; declare it in requirements \(PyYAML\)/,
    );
    expect((await engine.client.get("lazy_yaml")).skill?.version).toBe(1);
  });

  it("a stdlib-only skill (an ImportError fallback included) gets no missing-dependency warning", async () => {
    const registered = await engine.client.register({ name: "stdlib_only", code: STDLIB_ONLY, testPayload: '{"p": "/x/y.txt"}' });
    expect(JSON.parse(registered.test?.stdout ?? "")).toEqual({ base: "y.txt" });
    expect(registered.warnings.filter((w) => w.ruleId === "missing-dependency")).toEqual([]);
  });

  it("a skill that imports its dependency skill by name gets none; without depends_on, its test run names that field", async () => {
    await engine.client.register({ name: "scan_helper", code: HELPER });
    const undeclared = await rpcError(engine.client.register({ name: "uses_helper", code: USES_HELPER, testPayload: '{"t": "hey"}' }));
    expect(undeclared.code).toBe(status.FAILED_PRECONDITION);
    expect(undeclared.details).toBe(
      'the test run failed: module "scan_helper" is not installed in the sandbox; "scan_helper" is a skill: ' +
        "declare it in depends_on to have its code placed beside this one (docs/composition.md#dependencies)",
    );
    const registered = await engine.client.register({
      name: "uses_helper",
      code: USES_HELPER,
      dependsOn: ["scan_helper"],
      testPayload: '{"t": "hey"}',
    });
    expect(JSON.parse(registered.test?.stdout ?? "")).toEqual({ said: "HEY!" });
    expect(registered.warnings.filter((w) => w.ruleId === "missing-dependency")).toEqual([]);
  });
});
