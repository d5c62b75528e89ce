import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";
import { skillctl } from "./support/skillctl.js";

const UPPER = `import json, sys
print(json.dumps({"text": json.loads(sys.argv[1])["text"].upper()}))
`;

describe("skillctl compose, deps, catalog, and invoke of a composed skill", () => {
  let engine: TestEngine;
  let dir: string;
  beforeAll(async () => {
    engine = await startTestEngine();
    dir = await mkdtemp(path.join(os.tmpdir(), "skillctl-compose-"));
    await engine.client.register({ name: "upper", code: UPPER, testPayload: '{"text": "a"}' });
  });
  afterAll(async () => {
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("registers a composition from YAML, prints its steps on invoke, and shows deps and the catalog", async () => {
    const file = path.join(dir, "shout.yaml");
    await writeFile(
      file,
      `name: shout_twice
description: Upper-cases a text, then does it again only when asked.
parameters_schema:
  type: object
  properties: { text: { type: string }, again: { type: boolean } }
  required: [text]
steps:
  - id: first
    skill: upper
    args: { text: "{{params.text}}" }
  - id: second
    skill: upper
    args: { text: "{{steps.first.output.text}}!" }
    when: params.again = true
    on_failure: continue
output: "{{steps.first.output.text}}"
test_payload: { text: hi }
`,
    );
    const composed = await skillctl(engine.app.port, "compose", file);
    expect(composed.stderr).toBe("");
    expect(composed.code).toBe(0);
    expect(composed.stdout).toMatch(/^registered shout_twice v1 .*\(composed, 2 steps\); test run passed in \d+ ms\n/);
    expect(composed.stdout).toMatch(/ {2}step first: upper v1 ok in \d+ ms\n {2}step second: upper skipped \(condition false\)\n/);

    const invoked = await skillctl(engine.app.port, "invoke", "shout_twice", '{"text": "hey", "again": true}');
    expect(invoked.code).toBe(0);
    expect(invoked.stdout).toBe("HEY\n");
    expect(invoked.stderr).toMatch(/step first: upper v1 ok in \d+ ms\n.*step second: upper v1 ok in \d+ ms\n/s);

    const deps = await skillctl(engine.app.port, "deps", "upper");
    expect(deps.stdout).toBe("depends on: nothing\ndependents: shout_twice\nload order: upper\n");
    const catalog = await skillctl(engine.app.port, "catalog");
    expect(catalog.stdout).toMatch(/shout_twice +composed +1 +ready +upper/);

    const broken = path.join(dir, "broken.yaml");
    await writeFile(broken, "name: x\ndescription: y\nsteps: []\n");
    const refused = await skillctl(engine.app.port, "compose", broken);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/"steps" must be a non-empty list/);
  });
});
