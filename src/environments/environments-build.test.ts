import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { environmentsFixture, type EnvironmentsFixture } from "../../test/support/environments-fixture.js";
import { sha256Of, writeSdist, writeWheel } from "../../test/support/wheelhouse.js";
import { FailedPreconditionError, InvalidArgumentError } from "../errors/index.js";
import { ENVIRONMENT_MOUNT } from "./index.js";

/**
 * Builds with the host's real pip from a wheelhouse (and an index) the test makes itself
 * (docs/packages.md): locks, sharing, and each way a build fails leaving nothing behind.
 */
let fx: EnvironmentsFixture;
beforeEach(() => {
  fx = environmentsFixture();
});
afterEach(() => fx.close());

/** What a skill would see: Debian's python3 importing from the environment's site folder. */
function importFrom(hostPath: string, module: string): string {
  return execFileSync(
    "/usr/bin/python3",
    ["-I", "-c", `import sys; sys.path.insert(0, ${JSON.stringify(`${hostPath}/site`)}); import ${module}; print(${module}.VALUE)`],
    {
      encoding: "utf8",
    },
  ).trim();
}

async function failure(work: Promise<unknown>): Promise<FailedPreconditionError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FailedPreconditionError);
  return error as FailedPreconditionError;
}

describe("building from a wheelhouse", () => {
  it("installs the resolved set, locks it by sha256 and records it", async () => {
    const environments = fx.environments();
    const env = await environments.ensure({ requirements: ["Needs_Old"] });
    expect(env).toBeDefined();
    if (env === undefined) return;
    expect(env.hostPath).toBe(path.join(fx.root, env.id));
    expect(env.lock).toEqual([
      {
        kind: "wheel",
        name: "needs-old",
        version: "1.0",
        sha256: sha256Of(path.join(fx.wheelhouse, "needs_old-1.0-py3-none-any.whl")),
        file: "needs_old-1.0-py3-none-any.whl",
      },
      {
        kind: "wheel",
        name: "tiny-pkg",
        version: "1.0",
        sha256: sha256Of(path.join(fx.wheelhouse, "tiny_pkg-1.0-py3-none-any.whl")),
        file: "tiny_pkg-1.0-py3-none-any.whl",
      },
    ]);
    expect(JSON.parse(readFileSync(path.join(env.hostPath, "lock.json"), "utf8"))).toEqual(env.lock);
    expect(env.containerEnv).toEqual({ PYTHONPATH: `${ENVIRONMENT_MOUNT}/site` });
    expect(importFrom(env.hostPath, "needs_old")).toBe("1");
    // Bytecode is there for a read-only mount, naming the file where the container sees it.
    const pyc = path.join(env.hostPath, "site/tiny_pkg/__pycache__/__init__.cpython-311.pyc");
    expect(readFileSync(pyc).includes(Buffer.from(`${ENVIRONMENT_MOUNT}/site/tiny_pkg/__init__.py`))).toBe(true);
    // Readable by the sandbox's user, writable by nobody else.
    expect(statSync(path.join(env.hostPath, "site/tiny_pkg/__init__.py")).mode & 0o777).toBe(0o644);

    const [row] = await environments.list();
    expect(row).toMatchObject({ id: env.id, requirements: ["needs-old"], systemPackages: [], lock: env.lock, status: "ready", error: "" });
    expect(row?.sizeBytes).toBeGreaterThan(0);
    expect(fx.counts).toMatchObject({ built: ["declarations"], failed: [], bytes: row?.sizeBytes });
    expect(fx.entries()).toEqual([env.id]);
  });

  it("answers undefined when nothing is declared, and checks declarations before anything else", async () => {
    const environments = fx.environments();
    expect(await environments.ensure({ requirements: [], systemPackages: [] })).toBeUndefined();
    await expect(environments.ensure({ requirements: ["pkg @ https://example.invalid/x.whl"] })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(fx.entries()).toEqual([]);
  });

  it("builds one set once: concurrent calls share the build, later calls and other instances reuse it", async () => {
    const first = fx.environments();
    const results = await Promise.all([
      first.ensure({ requirements: ["tiny-pkg==1.0", "needs-old"] }),
      first.ensure({ requirements: ["needs_old", "Tiny.Pkg==1.0"] }),
      first.ensure({ requirements: ["needs-old", "tiny-pkg==1.0", "needs-old"] }),
    ]);
    const ids = new Set(results.map((env) => env?.id));
    expect(ids.size).toBe(1);
    expect(fx.counts.built).toEqual(["declarations"]);
    const again = await fx.environments().ensure({ requirements: ["tiny-pkg==1.0", "needs-old"] });
    expect(again?.id).toBe(results[0]?.id);
    expect(again?.lock).toEqual(results[0]?.lock);
    expect(fx.counts.built).toEqual(["declarations"]);
    // A different set is a different environment.
    const other = await first.ensure({ requirements: ["tiny-pkg==2.0"] });
    expect(other?.id).not.toBe(results[0]?.id);
    expect(importFrom(other?.hostPath ?? "", "tiny_pkg")).toBe("2");
    expect(fx.counts.built).toEqual(["declarations", "declarations"]);
  });

  it("installs from an index (PEP 503 simple pages) as from a wheelhouse", async () => {
    const wheel = "tiny_pkg-1.0-py3-none-any.whl";
    const server = await serve((url) => {
      if (url === "/simple/tiny-pkg/") {
        return { type: "text/html", body: `<a href="/files/${wheel}#sha256=${sha256Of(path.join(fx.wheelhouse, wheel))}">${wheel}</a>` };
      }
      if (url === `/files/${wheel}`) return { type: "application/octet-stream", body: readFileSync(path.join(fx.wheelhouse, wheel)) };
      return undefined;
    });
    try {
      const env = await fx
        .environments({ wheelhouse: undefined, pipIndexUrl: `${server.url}/simple/` })
        .ensure({ requirements: ["tiny-pkg"] });
      expect(env?.lock.map((e) => [e.name, e.version, e.file])).toEqual([["tiny-pkg", "1.0", wheel]]);
      expect(importFrom(env?.hostPath ?? "", "tiny_pkg")).toBe("1");
    } finally {
      server.close();
    }
  });
});

describe("a build that fails leaves nothing and says why", () => {
  it("no package source configured: names the settings", async () => {
    const error = await failure(fx.environments({ wheelhouse: undefined }).ensure({ requirements: ["tiny-pkg"] }));
    expect(error.message).toContain("SKILL_ENGINE_PIP_INDEX_URL");
    expect(error.message).toContain("SKILL_ENGINE_WHEELHOUSE");
    expect(fx.counts.failed).toEqual(["not-configured"]);
  });

  it("a requirement that does not exist", async () => {
    const environments = fx.environments();
    const error = await failure(environments.ensure({ requirements: ["no-such-package>=1"] }));
    expect(error.message).toBe("No matching distribution found for no-such-package>=1");
    expect(fx.counts.failed).toEqual(["not-found"]);
    expect(fx.entries()).toEqual([]);
    expect(await environments.list()).toEqual([]);
  });

  it("a version conflict between two requirements", async () => {
    const error = await failure(fx.environments().ensure({ requirements: ["tiny-pkg>=2", "needs-old"] }));
    expect(error.message).toMatch(/^Cannot install .*needs-old.*tiny-pkg.* because these package versions have conflicting dependencies/);
    expect(fx.counts.failed).toEqual(["conflict"]);
    expect(fx.entries()).toEqual([]);
  });

  it("a package offered only as source: refused, its build script never runs", async () => {
    const mark = path.join(fx.dir, "build-script-ran");
    writeSdist(fx.wheelhouse, "only-source", "1.0", mark);
    const error = await failure(fx.environments().ensure({ requirements: ["only-source==1.0"] }));
    expect(error.message).toContain("only binary wheels are installed");
    expect(error.message).toContain("only-source");
    expect(fx.counts.failed).toEqual(["source-only"]);
    expect(existsSync(mark)).toBe(false);
    expect(fx.entries()).toEqual([]);
  });

  it("past the time limit: the installer is stopped", async () => {
    // An index that accepts connections and never answers: pip waits until it is killed.
    const sockets = new Set<import("node:net").Socket>();
    const server = await serve(() => "hang");
    server.server.on("connection", (socket) => sockets.add(socket));
    try {
      const environments = fx.environments({ wheelhouse: undefined, pipIndexUrl: `${server.url}/simple/`, buildTimeoutMs: 4000 });
      const error = await failure(environments.ensure({ requirements: ["tiny-pkg"] }));
      expect(error.message).toContain("longer than the build's limit of 4 s");
      expect(fx.counts.failed).toEqual(["timeout"]);
      expect(fx.entries()).toEqual([]);
    } finally {
      for (const socket of sockets) socket.destroy();
      server.close();
    }
  });

  it("over the size limit", async () => {
    writeWheel(fx.wheelhouse, {
      name: "big-pkg",
      version: "1.0",
      files: { "big_pkg/__init__.py": `DATA = ${JSON.stringify("x".repeat(64 * 1024))}\n` },
    });
    const error = await failure(fx.environments({ maxBytes: 16 * 1024 }).ensure({ requirements: ["big-pkg"] }));
    expect(error.message).toMatch(/installed, over its limit of 0\.016 MiB \(SKILL_ENGINE_ENV_MAX_BYTES\)/);
    expect(fx.counts.failed).toEqual(["too-large"]);
    expect(fx.entries()).toEqual([]);
  });
});

type Answer = { type: string; body: string | Buffer } | "hang" | undefined;

async function serve(answer: (url: string) => Answer): Promise<{ url: string; server: Server; close(): void }> {
  const server = createServer((request, response) => {
    const reply = answer(request.url ?? "");
    if (reply === "hang") return;
    if (reply === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": reply.type }).end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server, close: () => server.close() };
}
