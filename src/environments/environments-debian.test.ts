import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { environmentsFixture, type EnvironmentsFixture } from "../../test/support/environments-fixture.js";
import { sha256Of, treeDigest, writeAptRepository } from "../../test/support/wheelhouse.js";
import { FailedPreconditionError } from "../errors/index.js";
import { DEFAULT_ENVIRONMENT_SETTINGS, ENVIRONMENT_MOUNT, Environments } from "./index.js";

/**
 * Debian packages (docs/packages.md#debian-packages), fetched on the host with apt-get from a
 * repository the test makes (a sources.list of its own, SKILL_ENGINE_APT_SOURCES) and unpacked
 * with dpkg-deb: nothing from outside the machine.
 */
let fx: EnvironmentsFixture;
let sources: string;
let deb: string;
beforeEach(() => {
  fx = environmentsFixture();
  sources = writeAptRepository(path.join(fx.dir, "apt"), {
    name: "python3-tinydeb",
    version: "1.0-1",
    module: "tinydeb",
    value: "from a deb",
  });
  deb = path.join(fx.dir, "apt/repo/python3-tinydeb_1.0-1_all.deb");
});
afterEach(() => fx.close());

/** Debian's python3 with the environment's PYTHONPATH as the container would have it, mapped to the host. */
function importWith(hostPath: string, pythonPath: string, module: string): string {
  const paths = pythonPath.split(":").map((dir) => dir.replace(ENVIRONMENT_MOUNT, hostPath));
  return execFileSync(
    "/usr/bin/python3",
    ["-I", "-c", `import sys; sys.path[:0] = ${JSON.stringify(paths)}; import ${module}; print(${module}.VALUE)`],
    {
      encoding: "utf8",
    },
  ).trim();
}

describe("Debian packages", () => {
  it("are fetched with apt, unpacked without scripts, locked by sha256, and sit beside wheels", async () => {
    const env = await fx
      .environments({ aptSourceList: sources })
      .ensure({ requirements: ["tiny-pkg==1.0"], systemPackages: ["python3-tinydeb"] });
    if (env === undefined) throw new Error("expected an environment");
    expect(env.lock.map((e) => [e.kind, e.name, e.version])).toEqual([
      ["deb", "python3-tinydeb", "1.0-1"],
      ["wheel", "tiny-pkg", "1.0"],
    ]);
    expect(env.lock[0]).toMatchObject({ sha256: sha256Of(deb), file: "python3-tinydeb_1.0-1_all.deb" });
    expect(env.containerEnv.PYTHONPATH).toBe(`${ENVIRONMENT_MOUNT}/site:${ENVIRONMENT_MOUNT}/deb/usr/lib/python3/dist-packages`);
    expect(importWith(env.hostPath, env.containerEnv.PYTHONPATH ?? "", "tinydeb")).toBe("from a deb");
    expect(importWith(env.hostPath, env.containerEnv.PYTHONPATH ?? "", "tiny_pkg")).toBe("1");
  });

  it("only what the sandbox image lacks is fetched", async () => {
    const imageHoldsIt: Environments = new Environments({
      db: fx.db,
      home: fx.home,
      settings: { ...DEFAULT_ENVIRONMENT_SETTINGS, aptSourceList: sources },
      image: {
        ...fx.image,
        dpkgStatus: () =>
          Promise.resolve(
            "Package: python3-tinydeb\nStatus: install ok installed\nPriority: optional\nMaintainer: x <x@example.invalid>\n" +
              "Architecture: all\nVersion: 1.0-1\nDescription: held by the image\n\n",
          ),
      },
    });
    const env = await imageHoldsIt.ensure({ systemPackages: ["python3-tinydeb"] });
    expect(env?.lock).toEqual([]);
    expect(env?.containerEnv).toEqual({ PYTHONPATH: `${ENVIRONMENT_MOUNT}/site` });
  });

  it("a name apt cannot find fails with apt's cause and leaves nothing", async () => {
    const error = await fx
      .environments({ aptSourceList: sources })
      .ensure({ systemPackages: ["python3-no-such-thing"] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(FailedPreconditionError);
    expect((error as Error).message).toBe("Unable to locate package python3-no-such-thing");
    expect(fx.counts.failed).toEqual(["not-found"]);
    expect(fx.entries()).toEqual([]);
  });

  it("a lost environment comes back from its lock with the same files", async () => {
    const environments = fx.environments({ aptSourceList: sources });
    const env = await environments.ensure({ systemPackages: ["python3-tinydeb"] });
    if (env === undefined) throw new Error("expected an environment");
    const before = treeDigest(env.hostPath);
    rmSync(env.hostPath, { recursive: true, force: true });
    expect(await environments.rebuild({ missingOnly: true })).toEqual([{ id: env.id, result: "rebuilt" }]);
    expect(treeDigest(env.hostPath)).toEqual(before);
    expect(fx.counts.built).toEqual(["declarations", "lock"]);
  });
});
