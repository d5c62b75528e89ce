import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InvokeSkillResponse } from "../src/gen/skillengine/v1/execution.js";
import { selfSigned } from "./support/self-signed.js";
import { runsCleanedUp, startTestEngine, type TestEngine, whileItsContainerRuns } from "./support/test-engine.js";

/**
 * One skill, many errands, each through the skill's ordinary HTTP client (urllib) and the proxy the
 * sandbox sets up. Every target is on this machine: the test's own servers on loopback, reached only
 * through names the engine's host map sends there (docs/security.md#egress).
 */
const ERRANDS = `import json, os, ssl, sys, urllib.error, urllib.request
args = json.loads(sys.argv[1])
def fetch(url, **kw):
    try:
        with urllib.request.urlopen(url, timeout=20, **kw) as r:
            return {"status": r.status, "body": r.read().decode()}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": e.read().decode()}
    except Exception as e:
        return {"error": type(e).__name__ + ": " + str(e)}
errand = args["errand"]
if errand == "weather":
    req = urllib.request.Request(args["url"], headers={"X-Key": os.environ.get("WEATHER_KEY", "")})
    print(json.dumps(fetch(req)))
elif errand == "https":
    ctx = ssl.create_default_context(cafile="/sandbox/in/ca.pem")
    print(json.dumps(fetch(args["url"], context=ctx)))
elif errand == "fetch":
    print(json.dumps(fetch(args["url"])))
elif errand == "look":
    found = []
    for root, dirs, files in os.walk("/", onerror=lambda e: None):
        if root.startswith(("/proc", "/sys")):
            dirs[:] = []
            continue
        found += [os.path.join(root, f) for f in files if f == "egress.sock"]
    print(json.dumps({"sockets": found, "proxy": os.environ.get("HTTPS_PROXY"), "fetch": fetch(args.get("url", "http://api.example.test/"))}))
elif errand == "raw":
    urllib.request.urlopen(args["url"], timeout=20)
    print(json.dumps({"reached": True}))
elif errand == "wait":
    import time
    time.sleep(args["seconds"])
    print(json.dumps({"waited": True}))
`;

describe("egress to declared hosts", () => {
  let engine: TestEngine;
  let dir: string;
  let http: Server;
  let https: Server;
  let httpPort: number;
  let httpsPort: number;
  let ca: string;
  /** What reached the test's servers: method, path and the key header. */
  const seen: string[] = [];

  const handler = (request: IncomingMessage, response: ServerResponse): void => {
    seen.push(`${request.method} ${request.headers.host} ${request.url} key=${String(request.headers["x-key"] ?? "")}`);
    if (request.url === "/redirect") {
      response.writeHead(302, { location: "http://evil.example.test/landing" }).end();
      return;
    }
    if (request.url === "/big") {
      response.end(Buffer.alloc(3 * 1024 * 1024, 120));
      return;
    }
    response.end(JSON.stringify({ path: request.url, key: request.headers["x-key"] ?? null }));
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "egress-e2e-"));
    const { certFile, keyFile } = await selfSigned(dir, "secure", ["secure.example.test"]);
    ca = await readFile(certFile, "utf8");
    http = createHttpServer(handler);
    https = createHttpsServer({ cert: ca, key: await readFile(keyFile) }, handler);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve));
    httpPort = (http.address() as AddressInfo).port;
    httpsPort = (https.address() as AddressInfo).port;
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_EGRESS_ALLOWED_HOSTS: "api.example.test,secure.example.test,localhost,*.open.example.test",
        SKILL_ENGINE_EGRESS_HOST_MAP: [
          `api.example.test=127.0.0.1:${httpPort}`,
          `secure.example.test=127.0.0.1:${httpsPort}`,
          `evil.example.test=127.0.0.1:${httpPort}`,
        ].join(","),
        SKILL_ENGINE_EGRESS_MAX_BYTES: String(1024 * 1024),
      },
    });
    await engine.client.call(engine.client.raw.setSecret, { name: "WEATHER_KEY", value: "wk-0123456789abcdef" });
    const registered = await engine.client.register({
      name: "errands",
      code: ERRANDS,
      testPayload: JSON.stringify({ errand: "weather", url: "http://api.example.test/test-run" }),
      secrets: ["WEATHER_KEY"],
      networkAllow: ["api.example.test", "secure.example.test", "localhost"],
    });
    expect(registered.test?.success, JSON.stringify(registered.test)).toBe(true);
    await engine.client.register({
      name: "offline",
      code: ERRANDS,
      testPayload: JSON.stringify({ errand: "wait", seconds: 0 }),
    });
  }, 180_000);
  afterAll(async () => {
    await engine?.dispose();
    await new Promise((resolve) => http?.close(resolve));
    await new Promise((resolve) => https?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const run = (name: string, payload: object, withCa = false): Promise<InvokeSkillResponse> =>
    engine.client.call(engine.client.raw.invokeSkill, {
      name,
      payload: JSON.stringify(payload),
      payloadJson: undefined,
      routeId: "",
      files: withCa ? [{ path: "ca.pem", content: Buffer.from(ca) }] : [],
    });
  const answer = (response: InvokeSkillResponse): { status?: number; body?: string; error?: string } =>
    JSON.parse(response.result?.stdout ?? "{}") as { status?: number; body?: string; error?: string };

  it("calls a declared host with the caller's secret in a header: the server saw the key, the agent sees it redacted", async () => {
    seen.length = 0;
    const response = await run("errands", { errand: "weather", url: "http://api.example.test/forecast?city=oslo" });
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    expect(seen).toEqual(["GET api.example.test /forecast?city=oslo key=wk-0123456789abcdef"]);
    expect(answer(response)).toEqual({ status: 200, body: '{"path":"/forecast?city=oslo","key":"[secret:WEATHER_KEY]"}' });
    expect(response.warnings).toEqual([]);
  });

  it("reaches a declared host over HTTPS through the tunnel, verifying its certificate", async () => {
    seen.length = 0;
    const response = await run("errands", { errand: "https", url: "https://secure.example.test/report" }, true);
    expect(answer(response)).toEqual({ status: 200, body: '{"path":"/report","key":null}' });
    expect(seen).toEqual(["GET secure.example.test /report key="]);
  });

  it("refuses an undeclared host even when the map knows it, a name that resolves to loopback, an IP literal and a redirect to an undeclared host; nothing reaches the server", async () => {
    seen.length = 0;
    const cases: [string, RegExp, RegExp][] = [
      [
        "http://evil.example.test/",
        /not in the skill's network_allow/,
        /^network: evil\.example\.test:80 refused: not in the skill's network_allow$/,
      ],
      ["http://localhost/", /resolves to (127\.0\.0\.1|::1), a loopback address/, /^network: localhost:80 refused: resolves to/],
      [`http://127.0.0.1:${httpPort}/`, /an IP address the skill did not declare/, /^network: 127\.0\.0\.1:\d+ refused: an IP address/],
    ];
    for (const [url, body, warning] of cases) {
      const response = await run("errands", { errand: "fetch", url });
      expect(answer(response).status, url).toBe(403);
      expect(answer(response).body).toMatch(body);
      expect(
        response.warnings.some((w) => warning.test(w)),
        JSON.stringify(response.warnings),
      ).toBe(true);
    }
    expect(seen).toEqual([]);
    // The redirect reaches the declared host; the hop to the undeclared one is refused.
    const redirected = await run("errands", { errand: "fetch", url: "http://api.example.test/redirect" });
    expect(answer(redirected).status).toBe(403);
    expect(seen).toEqual(["GET api.example.test /redirect key="]);
    expect(redirected.warnings).toContain("network: evil.example.test:80 refused: not in the skill's network_allow");
  });

  it("cuts a run off past its byte limit and says so", async () => {
    const response = await run("errands", { errand: "fetch", url: "http://api.example.test/big" });
    expect(answer(response).error ?? "").not.toBe("");
    expect(response.warnings).toContain(
      "network: api.example.test:80 cut off: the run moved more than 1048576 bytes (SKILL_ENGINE_EGRESS_MAX_BYTES)",
    );
  });

  it("a skill without network_allow has no network, no proxy and no socket, even while another run's gateway is open", async () => {
    const { call } = await whileItsContainerRuns(engine.instanceTag, () => run("errands", { errand: "wait", seconds: 6 }));
    const offline = await run("offline", { errand: "look", url: "http://api.example.test/" });
    const report = JSON.parse(offline.result?.stdout ?? "{}") as { sockets: string[]; proxy: string | null; fetch: { error?: string } };
    expect(report.sockets).toEqual([]);
    expect(report.proxy).toBeNull();
    expect(report.fetch.error).toMatch(/URLError/);
    expect((await call).result?.success).toBe(true);
    await runsCleanedUp(engine);
  });

  it("a skill without network_allow that fails on name resolution is told what to declare", async () => {
    const response = await run("offline", { errand: "raw", url: "http://api.example.test/" });
    expect(response.result?.success).toBe(false);
    expect(response.result?.errorSummary).toMatch(
      /Temporary failure in name resolution.*\(the sandbox has no network: declare the hosts the skill calls in network_allow, docs\/security\.md#egress\)$/,
    );
  });
});
