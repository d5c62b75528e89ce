import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Hardening, RouteMode, type RoutedSkill, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * The shapes the two APIs accept for a caller-defined tool, as their references state them: OpenAI's
 * chat completions `tools[]` item (`{type: "function", function: {name, description?, parameters?, strict?}}`,
 * a name of 1–64 letters, digits, `_` or `-`, parameters a JSON Schema object) and Anthropic's Messages
 * `tools[]` custom tool (`{name, description?, input_schema: {type: "object", …}}`, the same name rule).
 * No other keys: an unknown key is a 400 from either.
 */
const TOOL_NAME = { type: "string", pattern: "^[a-zA-Z0-9_-]{1,64}$" };
const OBJECT_SCHEMA = { type: "object", required: ["type"], properties: { type: { const: "object" } } };
const OPENAI_TOOL = {
  type: "object",
  additionalProperties: false,
  required: ["type", "function"],
  properties: {
    type: { const: "function" },
    function: {
      type: "object",
      additionalProperties: false,
      required: ["name"],
      properties: { name: TOOL_NAME, description: { type: "string" }, parameters: OBJECT_SCHEMA, strict: { type: "boolean" } },
    },
  },
};
const ANTHROPIC_TOOL = {
  type: "object",
  additionalProperties: false,
  required: ["name", "input_schema"],
  properties: { name: TOOL_NAME, description: { type: "string" }, input_schema: OBJECT_SCHEMA, type: { const: "custom" } },
};
const ajv = new Ajv({ allErrors: true, strict: false });
const validTools = {
  [ToolFormat.TOOL_FORMAT_OPENAI]: ajv.compile({ type: "array", items: OPENAI_TOOL }),
  [ToolFormat.TOOL_FORMAT_ANTHROPIC]: ajv.compile({ type: "array", items: ANTHROPIC_TOOL }),
};

const SKILL_MD = `---
name: changelog_writer
description: Write the changelog entries of a release from its merged pull requests.
---
List the merged pull requests, group them by kind, and write one line each.
`;
const DESCRIPTION = "Write a changelog line for one merged pull request, given its title and number.";

/**
 * What an LLM is handed (docs/routing.md#what-an-llm-is-handed), through the real server: a skill
 * with code is a tool in exactly the shape each API accepts, with one short hardening line by
 * default; an instructions-only folder skill is never a tool but a text saying how to read it.
 */
describe("RouteSkills: tools in each API's shape, instructions skills apart", () => {
  let engine: TestEngine;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "routing-tool-formats-"));
    await mkdir(path.join(dir, "skills", "changelog"), { recursive: true });
    await writeFile(path.join(dir, "skills", "changelog", "SKILL.md"), SKILL_MD);
    engine = await startTestEngine({ env: { SKILL_ENGINE_SKILL_DIRS: path.join(dir, "skills"), SKILL_ENGINE_SKILL_WATCH: "off" } });
    await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 120_000);
    await engine.client.register(
      {
        name: "changelog_line",
        description: DESCRIPTION,
        code: "import json, sys\nargs = json.loads(sys.argv[1])\nprint(f\"- {args['title']} (#{args['number']})\")\n",
        parametersSchema: JSON.stringify({
          type: "object",
          properties: { title: { type: "string" }, number: { type: "integer" } },
          required: ["title", "number"],
        }),
        testPayload: '{"title": "Fix the parser", "number": 7}',
      },
      120_000,
    );
  }, 240_000);

  afterAll(async () => {
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const route = async (format: ToolFormat, hardening?: Hardening): Promise<RoutedSkill[]> =>
    (
      await engine.client.call(engine.client.raw.routeSkills, {
        query: "write the changelog of the release",
        limit: 5,
        format,
        mode: RouteMode.ROUTE_MODE_FUSED,
        minRelevance: 0,
        ...(hardening === undefined ? {} : { hardening }),
      })
    ).skills;
  const byName = (skills: RoutedSkill[], name: string): RoutedSkill => {
    const found = skills.find((s) => s.name === name);
    if (!found) throw new Error(`${name} was not routed: ${skills.map((s) => s.name).join(", ")}`);
    return found;
  };

  for (const format of [ToolFormat.TOOL_FORMAT_OPENAI, ToolFormat.TOOL_FORMAT_ANTHROPIC, ToolFormat.TOOL_FORMAT_UNSPECIFIED]) {
    it(`format ${ToolFormat[format]}: the tools array is exactly what the API accepts, and holds no instructions skill`, async () => {
      const skills = await route(format);
      const tools = skills.filter((s) => s.toolDefinition !== "").map((s) => JSON.parse(s.toolDefinition) as unknown);
      const validate =
        validTools[format === ToolFormat.TOOL_FORMAT_ANTHROPIC ? ToolFormat.TOOL_FORMAT_ANTHROPIC : ToolFormat.TOOL_FORMAT_OPENAI];
      expect(validate(tools), JSON.stringify(validate.errors)).toBe(true);
      expect(tools).toHaveLength(1);

      const instructions = byName(skills, "changelog_writer");
      expect(instructions.kind).toBe("instructions");
      expect(instructions.toolDefinition).toBe("");
      expect(instructions.instructions).toBe(
        'Write the changelog entries of a release from its merged pull requests.\nInstructions to read, not a tool to call: their body comes from GetSkillContent {"name":"changelog_writer"}.',
      );
      expect(instructions.description).toBe(instructions.instructions);
      // Nothing tells the model to call it.
      expect(instructions.instructions).not.toMatch(/call it directly|changelog_writer\(/i);
    });
  }

  it("the call the instructions name discloses their body", async () => {
    const instructions = byName(await route(ToolFormat.TOOL_FORMAT_OPENAI), "changelog_writer");
    const call = /GetSkillContent (\{.*\})/.exec(instructions.instructions)?.[1] ?? "{}";
    const content = await engine.client.call(engine.client.raw.getSkillContent, { skillId: "", ...(JSON.parse(call) as { name: string }) });
    expect(content.body).toBe("List the merged pull requests, group them by kind, and write one line each.\n");
  });

  it("a tool's description carries one short line by default, seed 000's three lines on request, or nothing", async () => {
    const short = byName(await route(ToolFormat.TOOL_FORMAT_OPENAI), "changelog_line");
    expect(short.description).toBe(`${DESCRIPTION}\nCall it directly as a tool; never wrap it in a script.`);
    expect(short.description).not.toContain("acquired_skills");
    expect(JSON.parse(short.toolDefinition)).toEqual({
      type: "function",
      function: { name: "changelog_line", description: short.description, parameters: JSON.parse(short.parametersSchema) as unknown },
    });
    expect(byName(await route(ToolFormat.TOOL_FORMAT_OPENAI, Hardening.HARDENING_SHORT), "changelog_line").description).toBe(
      short.description,
    );

    const full = byName(await route(ToolFormat.TOOL_FORMAT_ANTHROPIC, Hardening.HARDENING_FULL), "changelog_line");
    expect(full.description.split("\n")).toEqual([
      `[ACQUIRED SKILL — CALL BY NAME] ${DESCRIPTION}`,
      'Call it directly as the tool "changelog_line", e.g. changelog_line({"title":"<title>","number":1}).',
      "Do not wrap it: no `python -c`, no `import changelog_line`, no `python3 acquired_skills/changelog_line.py`.",
    ]);
    expect(JSON.parse(full.toolDefinition)).toMatchObject({ name: "changelog_line", description: full.description });

    const none = byName(await route(ToolFormat.TOOL_FORMAT_OPENAI, Hardening.HARDENING_NONE), "changelog_line");
    expect(none.description).toBe(DESCRIPTION);
    // Instructions skills read the same at every level: how to read them is not boilerplate.
    expect(byName(await route(ToolFormat.TOOL_FORMAT_OPENAI, Hardening.HARDENING_NONE), "changelog_writer").toolDefinition).toBe("");
  });

  it("refuses a hardening it does not know", async () => {
    await expect(
      engine.client.call(engine.client.raw.routeSkills, {
        query: "changelog",
        limit: 5,
        format: ToolFormat.TOOL_FORMAT_OPENAI,
        mode: RouteMode.ROUTE_MODE_FUSED,
        hardening: 9 as Hardening,
      }),
    ).rejects.toMatchObject({ code: 3, details: expect.stringContaining("hardening") as string });
  });
});
