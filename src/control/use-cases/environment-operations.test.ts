import { afterEach, describe, expect, it } from "vitest";
import { type ControlPlaneFixture, startControlPlane } from "../../../test/support/control-plane-fixture.js";
import { admin, agent, doubler } from "../../../test/support/skill-samples.js";
import { PermissionDeniedError } from "../../errors/index.js";
import type { SkillEnvironments } from "./control-dependencies.js";
import { type EnvironmentAdministration, type EnvironmentState, withoutCredentials } from "./environment-operations.js";

const SHARED = "a".repeat(32);
const UNUSED = "b".repeat(32);

/** Every declaration gets the one environment SHARED: what the environments do for one set. */
const environments: SkillEnvironments = {
  prepare: async (declared) => ({
    packages: { requirements: [...declared.requirements], systemPackages: [...declared.systemPackages], environmentId: SHARED },
    environment: { id: SHARED, hostPath: "/nonexistent" },
  }),
  environmentOf: async () => ({ id: SHARED, hostPath: "/nonexistent" }),
};

function state(id: string): EnvironmentState {
  const at = new Date("2024-01-01T00:00:00Z");
  return {
    id,
    requirements: ["tiny-pkg==1.0"],
    systemPackages: [],
    lock: [],
    sizeBytes: 10,
    status: "ready",
    error: "",
    builtAt: at,
    lastUsedAt: at,
  };
}

/** A stand-in for src/environments that records what it was asked. */
function administration(index: string): EnvironmentAdministration & { rebuilds: boolean[] } {
  const rebuilds: boolean[] = [];
  return {
    rebuilds,
    list: async () => [state(SHARED), state(UNUSED)],
    rebuild: async ({ missingOnly }) => {
      rebuilds.push(missingOnly);
      return [{ id: SHARED, result: "rebuilt" }];
    },
    checkRuntimes: async () => ({
      sandboxPython: "3.11.2",
      installerPython: "3.11.2",
      pip: "pip 23.0.1",
      pythonMatches: true,
      packageSource: { kind: "index", location: index, reachable: false, detail: `cannot reach ${index}: connection refused` },
      debian: { available: true, detail: "apt 2.6.1" },
    }),
  };
}

describe("the environments' operator use cases (real registry, stand-in environments)", () => {
  let fixture: ControlPlaneFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it("lists every environment with the number of skill versions that refer to it", async () => {
    fixture = await startControlPlane({ environments, environmentAdmin: administration("https://index.example/simple") });
    const { control } = fixture;
    await control.registration.register(doubler("first", { requirements: ["tiny-pkg==1.0"] }), agent("alice"));
    await control.registration.register(doubler("first", { requirements: ["tiny-pkg==1.0"], testPayload: '{"n": 3}' }), agent("alice"));
    await control.registration.register(doubler("second", { requirements: ["tiny-pkg==1.0"] }), agent("bob"));
    await control.registration.register(doubler("plain"), agent("bob"));

    const listed = await control.environments.list(agent("carol"));

    expect(listed.map((e) => [e.id, e.skills])).toEqual([
      [SHARED, 3],
      [UNUSED, 0],
    ]);
  });

  it("rebuilds for admins only", async () => {
    const port = administration("https://index.example/simple");
    fixture = await startControlPlane({ environments, environmentAdmin: port });

    await expect(fixture.control.environments.rebuild({ missingOnly: true }, agent("alice"))).rejects.toBeInstanceOf(PermissionDeniedError);
    expect(port.rebuilds).toEqual([]);
    expect(await fixture.control.environments.rebuild({ missingOnly: true }, admin())).toEqual([{ id: SHARED, result: "rebuilt" }]);
    expect(port.rebuilds).toEqual([true]);
  });

  it("never shows an index URL's user and password", async () => {
    fixture = await startControlPlane({ environments, environmentAdmin: administration("https://reader:s3cret@index.example/simple") });

    const report = await fixture.control.environments.checkRuntimes(agent("alice"));

    expect(report.packageSource.location).toBe("https://***@index.example/simple");
    expect(report.packageSource.detail).toBe("cannot reach https://***@index.example/simple: connection refused");
    expect(JSON.stringify(report)).not.toContain("s3cret");
  });
});

describe("withoutCredentials", () => {
  it("replaces a URL's user and password, and leaves everything else as it is", () => {
    expect(withoutCredentials("https://u:p@host:8443/simple/")).toBe("https://***@host:8443/simple/");
    expect(withoutCredentials("https://token@host/simple")).toBe("https://***@host/simple");
    expect(withoutCredentials("https://host/simple")).toBe("https://host/simple");
    expect(withoutCredentials("file:///srv/index")).toBe("file:///srv/index");
    expect(withoutCredentials("/srv/wheels")).toBe("/srv/wheels");
    expect(withoutCredentials("")).toBe("");
  });
});
