import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CatalogEntry, CatalogStatus } from "../src/gen/skillengine/v1/composition.js";
import { packBundle, unpackBundle } from "../src/sources/index.js";
import { makeDirs, rpcError, runsByPath, startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * The `network_allow` declaration through the real server (docs/security.md#declaring-hosts): refused
 * outside the operator's policy (SKILL_ENGINE_EGRESS_ALLOWED_HOSTS) and when malformed, kept per
 * version (GetSkill, PatchSkill, RollbackSkill), declared by a folder's SKILL.md and a bundle, and
 * refused at run time once a restart narrowed the policy. No run here opens a connection: the
 * gateway's own tests reach loopback servers.
 */
const POLICY = "api.example.com,*.svc.example.org";
const NARROWED = "api.example.com";

/** Reads a declared secret in code that talks to the network, as a skill calling an API does; connects nowhere. */
const CALLS_API = `import json, os, sys, urllib.request
key = os.environ["WEATHER_API_KEY"]
def fetch(city):
    req = urllib.request.Request("https://api.example.com/v1?city=" + city, headers={"X-Api-Key": key})
    return urllib.request.urlopen(req, timeout=5).read()
args = json.loads(sys.argv[1])
print(json.dumps({"city": args.get("city", ""), "keyed": len(key) > 0}))
`;
const PLAIN = `import json, sys
print(json.dumps({"city": json.loads(sys.argv[1]).get("city", ""), "v": 1}))
`;
const skillMd = (name: string, hosts: string): string =>
  `---\nname: ${name}\ndescription: Looks up the forecast for a city (${name}).\nentrypoint: run.py\n` +
  `test_payload: {"city": "Oslo"}\nmetadata:\n  network_allow: [${hosts}]\n---\nLooks up the forecast.\n`;

describe("network_allow: declared hosts through the control plane (real server, engine, SQLite)", () => {
  let root: string;
  let skills: string;
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  let engine: TestEngine;

  const start = async (policy: string): Promise<void> => {
    engine = await startTestEngine({
      dirs,
      env: { SKILL_ENGINE_EGRESS_ALLOWED_HOSTS: policy, SKILL_ENGINE_SKILL_DIRS: skills, SKILL_ENGINE_SKILL_WATCH: "off" },
    });
  };
  const rescan = async (): Promise<Record<string, CatalogEntry>> => {
    const scan = await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 600_000);
    return Object.fromEntries(scan.sources.map((s) => [path.basename(s.sourceFolder), s]));
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "egress-declarations-"));
    skills = path.join(root, "skills");
    for (const [name, hosts] of [
      ["folder_forecast", "api.example.com"],
      ["folder_outside", "evil.example.net"],
    ] as const) {
      await mkdir(path.join(skills, name), { recursive: true });
      await writeFile(path.join(skills, name, "SKILL.md"), skillMd(name, hosts));
      await writeFile(path.join(skills, name, "run.py"), PLAIN);
    }
    dirs = await makeDirs();
    await start(POLICY);
  }, 240_000);

  afterAll(async () => {
    await engine?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it("refuses a declaration outside the operator's policy naming the host and the setting, and malformed ones, before any run", async () => {
    const testRuns = await runsByPath(engine, "test");
    const refused = async (networkAllow: string[]): Promise<string> => {
      const error = await rpcError(engine.client.register({ name: "refused", code: PLAIN, networkAllow }, 120_000));
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      return error.details;
    };
    expect(await refused(["api.example.com", "evil.example.net"])).toBe(
      `network_allow[1] ("evil.example.net"): not allowed by the operator's policy (SKILL_ENGINE_EGRESS_ALLOWED_HOSTS)`,
    );
    // A wildcard covers names under its domain, not the domain itself; a port is the skill's to name.
    expect(await refused(["svc.example.org"])).toMatch(/^network_allow\[0\] \("svc\.example\.org"\): not allowed by the operator's policy/);
    expect(await refused(["https://api.example.com/v1"])).toBe(
      `network_allow[0] ("https://api.example.com/v1"): must be a host, host:port or *.domain, not a URL`,
    );
    expect(await refused(["api.example.com", "API.example.com."])).toBe(
      `network_allow[1] ("API.example.com."): "api.example.com" is declared twice`,
    );
    expect(await refused(["api.example.com:0"])).toMatch(/^network_allow\[0\] .*has a port outside 1-65535$/);
    expect(await refused(Array.from({ length: 33 }, (_, i) => `h${i}.svc.example.org`))).toBe(
      "network_allow: declares 33 hosts; at most 32 may be declared",
    );
    expect((await rpcError(engine.client.get("refused"))).code).toBe(status.NOT_FOUND);
    expect(await runsByPath(engine, "test")).toEqual(testRuns);
  }, 240_000);

  it("accepts declarations inside it: GetSkill shows them, a patch keeps them, each version keeps its own", async () => {
    await engine.client.call(engine.client.raw.setSecret, { name: "WEATHER_API_KEY", value: "sk-test-0123456789" });
    // A declared secret read in network code is the skill's purpose once it declares its hosts (the content guard).
    const guarded = await rpcError(engine.client.register({ name: "forecast", code: CALLS_API, secrets: ["WEATHER_API_KEY"] }, 120_000));
    expect([guarded.code, guarded.details]).toEqual([status.INVALID_ARGUMENT, expect.stringContaining("credential-env-secret-exfil")]);
    const registered = await engine.client.register(
      {
        name: "forecast",
        code: CALLS_API,
        testPayload: '{"city": "Oslo"}',
        secrets: ["WEATHER_API_KEY"],
        networkAllow: ["API.Example.com", "files.svc.example.org:8443"],
      },
      240_000,
    );
    expect(registered.test?.exitCode).toBe(0);
    expect(registered.skill?.networkAllow).toEqual(["api.example.com", "files.svc.example.org:8443"]);
    expect((await engine.client.get("forecast")).skill?.networkAllow).toEqual(["api.example.com", "files.svc.example.org:8443"]);
    expect(JSON.parse((await engine.client.invoke("forecast", '{"city": "Bergen"}', 120_000)).result?.stdout ?? "{}")).toEqual({
      city: "Bergen",
      keyed: true,
    });

    const patched = await engine.client.call(
      engine.client.raw.patchSkill,
      { name: "forecast", find: '"keyed"', replace: '"has_key"', testPayload: "" },
      240_000,
    );
    expect([patched.skill?.version, patched.skill?.networkAllow]).toEqual([2, ["api.example.com", "files.svc.example.org:8443"]]);
    // A version without the declaration has no network; rolling back brings the version's own.
    const plain = await engine.client.register({ name: "forecast", code: PLAIN, testPayload: '{"city": "Oslo"}' }, 240_000);
    expect([plain.skill?.version, plain.skill?.networkAllow]).toEqual([3, []]);
    const rolledBack = await engine.client.call(engine.client.raw.rollbackSkill, { name: "forecast", version: 2 });
    expect(rolledBack.skill?.networkAllow).toEqual(["api.example.com", "files.svc.example.org:8443"]);
  }, 600_000);

  it("a folder declares them in SKILL.md (metadata.network_allow), under the same policy; an export carries them", async () => {
    const byFolder = await rescan();
    expect(byFolder.folder_forecast).toMatchObject({ status: CatalogStatus.CATALOG_STATUS_READY, version: 1 });
    expect(byFolder.folder_outside).toMatchObject({
      status: CatalogStatus.CATALOG_STATUS_FAILED,
      reason: `SKILL.md metadata.network_allow[0] ("evil.example.net"): not allowed by the operator's policy (SKILL_ENGINE_EGRESS_ALLOWED_HOSTS)`,
    });
    expect((await engine.client.get("folder_forecast")).skill?.networkAllow).toEqual(["api.example.com"]);

    const exported = await engine.client.call(engine.client.raw.exportSkill, { name: "forecast" });
    const files = await unpackBundle(Buffer.from(exported.archive));
    const manifest = files.find((f) => f.path === "SKILL.md")?.content.toString("utf8") ?? "";
    expect(manifest).toMatch(/network_allow:\n\s+- api\.example\.com\n\s+- files\.svc\.example\.org:8443\n/);
    // The bundle imported under another name declares the same hosts.
    const renamed = files.map((f) =>
      f.path === "SKILL.md" ? { ...f, content: Buffer.from(manifest.replace("name: forecast", "name: imported_forecast")) } : f,
    );
    const imported = await engine.client.call(
      engine.client.raw.importSkillBundle,
      { archive: await packBundle("imported_forecast", renamed), visibility: 0, onDuplicate: 0 },
      240_000,
    );
    expect(imported.skill?.networkAllow).toEqual(["api.example.com", "files.svc.example.org:8443"]);
  }, 600_000);

  it("after a restart with a narrower policy, a stored host it no longer covers refuses the run before any container, counting nothing", async () => {
    await engine.stop();
    await start(NARROWED);
    const before = (await engine.client.get("forecast")).skill;
    const runs = await runsByPath(engine);
    const refused = await rpcError(engine.client.invoke("forecast", '{"city": "Bergen"}', 120_000));
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    expect(refused.details).toMatch(
      /^skill forecast declares network_allow "files\.svc\.example\.org:8443", which the operator's policy \(SKILL_ENGINE_EGRESS_ALLOWED_HOSTS\) no longer allows/,
    );
    const after = (await engine.client.get("forecast")).skill;
    expect([after?.failureCount, after?.usageCount, after?.status]).toEqual([before?.failureCount, before?.usageCount, before?.status]);
    expect(await runsByPath(engine)).toEqual(runs);
    // A patch's test run is refused the same way; a skill whose hosts are still covered runs.
    const patch = await rpcError(
      engine.client.call(engine.client.raw.patchSkill, { name: "forecast", find: '"has_key"', replace: '"key"', testPayload: "" }),
    );
    expect(patch.code).toBe(status.FAILED_PRECONDITION);
    expect((await engine.client.invoke("folder_forecast", '{"city": "Oslo"}', 120_000)).result?.exitCode).toBe(0);
    // A registration (and an import) under the narrowed policy is refused at the door.
    const bundle = await engine.client.call(engine.client.raw.exportSkill, { name: "imported_forecast" });
    const reimport = await rpcError(
      engine.client.call(engine.client.raw.importSkillBundle, { archive: bundle.archive, visibility: 0, onDuplicate: 0 }, 240_000),
    );
    expect([reimport.code, reimport.details]).toEqual([
      status.INVALID_ARGUMENT,
      `SKILL.md metadata.network_allow[1] ("files.svc.example.org:8443"): not allowed by the operator's policy (SKILL_ENGINE_EGRESS_ALLOWED_HOSTS)`,
    ]);
  }, 600_000);
});
