import { createHash } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ComposedStep, OnFailure, type RegisterComposedSkillRequest } from "../src/gen/skillengine/v1/composition.js";
import type { InputFile, InvokeSkillResponse } from "../src/gen/skillengine/v1/execution.js";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * Turns the CSV at /sandbox/in/<csv> into /sandbox/out/table.json. Without the file (a composed
 * registration's test run has no files) it reads a one-row CSV of its own.
 */
const CSV_TO_TABLE = `import csv, io, json, os, sys
args = json.loads(sys.argv[1])
where = "/sandbox/in/" + args["csv"]
text = open(where).read() if os.path.exists(where) else "value\\n0\\n"
values = [float(r["value"]) for r in csv.DictReader(io.StringIO(text))]
with open("/sandbox/out/table.json", "w") as f:
    json.dump(values, f)
print(json.dumps({"rows": len(values)}))
`;

/** Sums the table at the path it is given into /sandbox/out/summary.txt, and lists what it was handed. */
const SUMMARIZE = `import json, os, sys
args = json.loads(sys.argv[1])
values = json.load(open(args["table"]))
with open("/sandbox/out/summary.txt", "w") as f:
    f.write("rows=%d total=%g\\n" % (len(values), sum(values)))
handed = sorted(
    os.path.relpath(os.path.join(d, n), "/sandbox/in") for d, _, names in os.walk("/sandbox/in") for n in names
)
print(json.dumps({"total": sum(values), "handed": handed}))
`;

const CSV_SCHEMA = JSON.stringify({ type: "object", properties: { csv: { type: "string" } }, required: ["csv"] });
const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");
const file = (filePath: string, content: string): InputFile => ({ path: filePath, content: Buffer.from(content) });

function step(id: string, skill: string, args: unknown): ComposedStep {
  return { id, skill, args: JSON.stringify(args), when: "", onFailure: OnFailure.ON_FAILURE_UNSPECIFIED };
}

/**
 * Files through composed skills (docs/composition.md#files), on a real server, engine and SQLite:
 * step "load" turns the caller's CSV into a file, step "sum" reads it at
 * /sandbox/in/steps/load/… (the path from {{steps.load.files}}) and writes a summary.
 */
describe("files through composed skills", () => {
  let engine: TestEngine;
  const composed = (request: Partial<RegisterComposedSkillRequest> & { name: string; steps: ComposedStep[] }) =>
    engine.client.call(
      engine.client.raw.registerComposedSkill,
      {
        description: "a composed test skill",
        parametersSchema: CSV_SCHEMA,
        output: "",
        testPayload: '{"csv": "data.csv"}',
        visibility: 0,
        exampleQueries: [],
        onDuplicate: 0,
        ...request,
      },
      120_000,
    );
  const invoke = (name: string, payload: object, files: InputFile[]): Promise<InvokeSkillResponse> =>
    engine.client.call(
      engine.client.raw.invokeSkill,
      { name, payload: JSON.stringify(payload), payloadJson: undefined, routeId: "", files },
      120_000,
    );

  beforeAll(async () => {
    engine = await startTestEngine();
    for (const [name, code, testPayload, testFiles] of [
      ["csv_to_table", CSV_TO_TABLE, '{"csv": "t.csv"}', [file("t.csv", "value\n1\n")]],
      ["summarize", SUMMARIZE, '{"table": "/sandbox/in/steps/load/table.json"}', [file("steps/load/table.json", "[1]")]],
    ] as const) {
      const registered = await engine.client.register({ name, code, testPayload, testFiles: [...testFiles] }, 120_000);
      expect(registered.test?.success, JSON.stringify(registered.test)).toBe(true);
    }
    const report = await composed({
      name: "csv_report",
      steps: [
        step("load", "csv_to_table", { csv: "{{params.csv}}" }),
        step("sum", "summarize", { table: "/sandbox/in/steps/load/{{steps.load.files[0]}}" }),
      ],
    });
    expect(report.test?.success, JSON.stringify(report.test)).toBe(true);
  }, 180_000);
  afterAll(async () => {
    await engine?.dispose();
  });

  it("hands a step the caller's files and the earlier step's; answers with the last step's files and each step's", async () => {
    const response = await invoke("csv_report", { csv: "data.csv" }, [file("data.csv", "label,value\na,10\nb,32\n")]);
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    expect(JSON.parse(response.result?.stdout ?? "")).toEqual({ total: 42, handed: ["data.csv", "steps/load/table.json"] });
    expect(response.steps.map((s) => [s.id, s.files.map((f) => f.path)])).toEqual([
      ["load", ["table.json"]],
      ["sum", ["summary.txt"]],
    ]);
    expect(Buffer.from(response.steps[0]?.files[0]?.content ?? []).toString()).toBe("[10.0, 32.0]");
    expect(response.files.map((f) => f.path)).toEqual(["summary.txt"]);
    const summary = response.files[0];
    expect(Buffer.from(summary?.content ?? []).toString()).toBe("rows=2 total=42\n");
    expect(summary?.sha256).toBe(sha256(summary?.content ?? new Uint8Array()));
    expect(summary?.truncated).toBe(false);
    expect(response.warnings).toEqual([]);
  }, 120_000);

  it("a nested composition hands its steps what it was handed, its own steps' files under their ids", async () => {
    const outer = await composed({
      name: "prepared_report",
      steps: [step("prep", "csv_to_table", { csv: "{{params.csv}}" }), step("report", "csv_report", { csv: "{{params.csv}}" })],
    });
    expect(outer.test?.success, JSON.stringify(outer.test)).toBe(true);
    const response = await invoke("prepared_report", { csv: "data.csv" }, [file("data.csv", "value\n5\n")]);
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    expect(JSON.parse(response.result?.stdout ?? "")).toEqual({
      total: 5,
      handed: ["data.csv", "steps/load/table.json", "steps/prep/table.json"],
    });
    expect(response.steps.map((s) => [s.id, s.files.map((f) => f.path)])).toEqual([
      ["prep", ["table.json"]],
      ["report", ["summary.txt"]],
    ]);
    expect(Buffer.from(response.files[0]?.content ?? []).toString()).toBe("rows=1 total=5\n");
  }, 120_000);

  it("refuses a caller's file under steps/ for a composed skill, naming the file and the rule, and runs nothing", async () => {
    const before = (await engine.client.get("csv_to_table")).skill?.usageCount;
    const error = await rpcError(
      invoke("csv_report", { csv: "data.csv" }, [file("data.csv", "value\n1\n"), file("steps/load/table.json", "[1]")]),
    );
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/^files\[1\] \("steps\/load\/table.json"\): a composed skill's files may not be at steps\//);
    expect(error.details).toContain("docs/composition.md#files");
    expect((await engine.client.get("csv_to_table")).skill?.usageCount).toBe(before);
  }, 120_000);
});
