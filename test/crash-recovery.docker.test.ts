import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { contentHash } from "../src/control/store/index.js";
import { instanceTagOf } from "../src/app.js";
import { connect, containersOf, makeDirs, type TestClient } from "./support/test-engine.js";
import { spawnService } from "./support/service-process.js";
import { readMirrorSkills } from "./support/registry-mirror.js";

const skillCode = (label: string, sleepSeconds: number) => `import json, sys, time
time.sleep(${sleepSeconds})
print(json.dumps({"label": "${label}"}))
`;

/** Registry (through the API) and canonical directory describe exactly the same skills. */
async function expectRegistryAndStoreAgree(port: number, home: string): Promise<string[]> {
  const client = connect(port);
  try {
    const { skills } = await client.list();
    const directory = path.join(home, "memory", "acquired_skills");
    const files = (await readdir(directory))
      .filter((f) => f.endsWith(".py"))
      .map((f) => f.slice(0, -3))
      .sort();
    expect(files).toEqual(skills.map((s) => s.name));
    for (const skill of skills) {
      const code = await readFile(path.join(directory, `${skill.name}.py`), "utf8");
      expect(contentHash(code)).toBe(skill.contentHash);
      const versions = (await readdir(path.join(directory, ".versions", skill.name))).sort();
      expect(versions).toEqual(Array.from({ length: skill.latestVersion }, (_, i) => `${i + 1}.py`).sort());
      expect((await client.get(skill.name)).code).toBe(code);
    }
    const mirror = await readMirrorSkills<{ name: string; content_hash: string }>(home);
    expect(mirror.map((s) => [s.name, s.content_hash])).toEqual(skills.map((s) => [s.name, s.contentHash]));
    expect((await readdir(directory)).filter((f) => f.startsWith(".tmp-"))).toEqual([]);
    return skills.map((s) => s.name);
  } finally {
    client.close();
  }
}

/** A change the service answered OK before it was killed: that version must be there after the restart. */
interface Acknowledged {
  readonly name: string;
  readonly version: number;
  readonly contentHash: string;
  readonly round: number;
}

/** Every acknowledged version is in the restarted service's history, with the hash it was acknowledged with. */
async function expectAcknowledgedKept(client: TestClient, acknowledged: readonly Acknowledged[]): Promise<void> {
  for (const ack of acknowledged) {
    const { versions } = await client.call(client.raw.listSkillVersions, { name: ack.name });
    const kept = versions.find((v) => v.version === ack.version);
    expect(kept?.contentHash, `round ${ack.round}: ${ack.name} v${ack.version} was acknowledged before the SIGKILL`).toBe(ack.contentHash);
  }
}

describe("killing the service during registrations and patches loses nothing and leaves nothing behind", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it("after SIGKILL at fixed and random points of registrations and patches, a restart agrees with itself and reaps orphans", async () => {
    const dirs = await makeDirs();
    const env = { SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir };
    const instanceTag = instanceTagOf(dirs.home);

    let service = await spawnService(env);
    cleanups.push(() => service.kill());
    const setup = connect(service.port);
    const first = await setup.register({ name: "survivor", code: skillCode("v1", 0) });
    setup.close();
    const acknowledged: Acknowledged[] = [
      { name: "survivor", version: first.skill?.version ?? 0, contentHash: first.skill?.contentHash ?? "", round: -1 },
    ];

    // Kill points spread over registrations and patches: during the test run (container alive),
    // and around its end, where the version file, the row and the canonical file are written.
    // Half are fixed, half random (logged, so a failure can be replayed); "ack" kills the moment
    // the answer arrives, the tightest point at which an acknowledged change could still be lost.
    const killPoints: Array<number | "ack"> = [
      600,
      "ack",
      150,
      300,
      "ack",
      450,
      700,
      900,
      "ack",
      ...Array.from({ length: 4 }, () => Math.round(100 + Math.random() * 900)),
    ];
    console.log(`kill points (ms after the call, or at its acknowledgement): ${killPoints.join(", ")}`);
    for (const [round, killPoint] of killPoints.entries()) {
      const client = connect(service.port);
      const change =
        round % 3 === 2
          ? client.call(client.raw.patchSkill, { name: "survivor", find: "time.sleep(", replace: "time.sleep(0 * 1 + ", testPayload: "" })
          : client.register({ name: round % 3 === 0 ? "survivor" : `newcomer_${round}`, code: skillCode(`round${round}`, 0.4) });
      const pending = change.then(
        (response) => {
          if (response.skill)
            acknowledged.push({
              name: response.skill.name,
              version: response.skill.version,
              contentHash: response.skill.contentHash,
              round,
            });
          return "acknowledged" as const;
        },
        () => "failed" as const,
      );
      if (killPoint === "ack") expect(await pending, `round ${round} must be acknowledged`).toBe("acknowledged");
      else await sleep(killPoint);
      await service.kill("SIGKILL");
      await pending;
      client.close();

      service = await spawnService(env);
      // The restarted process reaped what the dead one left: containers and run directories.
      expect(await containersOf(instanceTag)).toEqual([]);
      const runs = await readdir(path.join(dirs.sandboxDir, "runs")).catch(() => []);
      expect(runs).toEqual([]);
      const names = await expectRegistryAndStoreAgree(service.port, dirs.home);
      expect(names).toContain("survivor");

      const check = connect(service.port);
      await expectAcknowledgedKept(check, acknowledged);
      const invoked = await check.invoke("survivor");
      expect(invoked.result?.success).toBe(true);
      check.close();
    }
    // At least the rounds killed on acknowledgement acknowledged something, so the check above had work to do.
    expect(acknowledged.filter((a) => a.round >= 0).length).toBeGreaterThanOrEqual(killPoints.filter((k) => k === "ack").length);
    console.log(`acknowledged before a SIGKILL and found after the restart: ${acknowledged.length} versions`);
    await service.kill("SIGTERM");
    // A dozen service starts and kills: minutes on a loaded 2-core machine, not the suite's two.
  }, 900_000);
});
