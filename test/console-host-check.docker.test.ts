import { request as httpRequest } from "node:http";
import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, screenshot } from "./support/browser.js";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

const SKILL = `import json, sys
print(json.dumps({"ok": True}))
`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One plain HTTP request with the headers a test forges (fetch would not let it set Host). */
function send(
  port: number,
  method: "GET" | "POST",
  path: string,
  headers: { host: string; origin?: string; cookie?: string },
  form?: Record<string, string>,
): Promise<Answer> {
  const body = form ? new URLSearchParams(form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: {
          ...headers,
          ...(body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** The session id a response sets, and the CSRF token of the form it holds. */
function sessionOf(answer: Answer): { cookie: string; csrf: string } {
  const setCookie = [answer.headers["set-cookie"] ?? []].flat().find((c) => c.startsWith("se_console="));
  const csrf = /name="csrf" value="([^"]+)"/.exec(answer.body)?.[1];
  if (setCookie === undefined || csrf === undefined) throw new Error(`no session in the answer (${answer.status})`);
  return { cookie: setCookie.split(";")[0] as string, csrf };
}

/**
 * DNS rebinding against the console with no tokens configured (docs/security.md#dns-rebinding): the
 * attacker's name resolves to this machine, so its page is same-origin with the port by the browser's
 * rules and every request comes from loopback. The port answers only the configured names (here
 * `console.test`, beside localhost and IP addresses), and a form's Origin must name one of them.
 */
describe("operator console: Host and Origin against DNS rebinding", () => {
  let engine: TestEngine;
  let browser: Browser;
  let port: number;

  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_CONSOLE: "on", SKILL_ENGINE_HTTP_ALLOWED_HOSTS: "console.test" } });
    port = engine.app.metricsPort as number;
    await engine.client.register({ name: "guarded", code: SKILL });
    await engine.client.register({ name: "guarded_http", code: SKILL });
    // Chromium resolves both names to loopback, as a rebound DNS answer would.
    browser = await launchChromium(["--host-resolver-rules=MAP attacker.test 127.0.0.1, MAP console.test 127.0.0.1"]);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await engine?.dispose();
  });

  it("in a browser: a rebound name gets no console, no session and no action; the configured name gets all three", async () => {
    const attacker = await browser.createBrowserContext();
    const page = await attacker.newPage();
    const refused = await page.goto(`http://attacker.test:${port}/console/skills/guarded/confirm?action=disable`);
    expect(refused?.status()).toBe(421);
    expect(await page.evaluate("document.body.innerText")).toContain("misdirected request");
    expect((await attacker.cookies()).map((c) => c.name)).toEqual([]);
    // The attacker's script, same-origin with what it loaded, posts the action anyway.
    const posted = await page.evaluate(`fetch("/console/skills/guarded/actions", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "action=disable&confirmed=yes&csrf=guess",
    }).then((r) => r.status)`);
    expect(posted).toBe(421);
    expect(await page.evaluate(`fetch("/metrics").then((r) => r.status)`)).toBe(421);
    await screenshot(page, "rebinding-refused");
    await attacker.close();
    expect((await engine.client.get("guarded")).skill?.disabled).toBe(false);

    const operator = await browser.createBrowserContext();
    const console = await operator.newPage();
    const opened = await console.goto(`http://console.test:${port}/console/skills/guarded/confirm?action=disable`);
    expect(opened?.status()).toBe(200);
    await Promise.all([console.waitForNavigation(), console.click("#confirm")]);
    expect(await console.$eval("#notice", (e) => e.textContent)).toContain("disabled");
    expect((await engine.client.get("guarded")).skill?.disabled).toBe(true);
    await operator.close();
  });

  it("over plain HTTP: a forged Host gets 421 before any session, a forged Origin 403; the configured names work", async () => {
    const rebound = { host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` };
    const page = await send(port, "GET", "/console/skills/guarded_http/confirm?action=disable", rebound);
    expect(page.status).toBe(421);
    expect(page.headers["set-cookie"]).toBeUndefined();
    expect(page.body).not.toContain("csrf");
    expect(page.body).toContain("SKILL_ENGINE_HTTP_ALLOWED_HOSTS");
    expect((await send(port, "GET", "/metrics", rebound)).status).toBe(421);
    expect((await send(port, "GET", "/metrics", { host: `console.test:${port}` })).status).toBe(200);
    // Probes answer any name: orchestrators probe by address.
    expect((await send(port, "GET", "/healthz", rebound)).status).toBe(200);

    // A real session, opened by loopback's own name.
    const { cookie, csrf } = sessionOf(
      await send(port, "GET", "/console/skills/guarded_http/confirm?action=disable", { host: `127.0.0.1:${port}` }),
    );
    const form = { csrf, action: "disable", confirmed: "yes" };
    const action = "/console/skills/guarded_http/actions";
    // Even with the session and its token, the rebound name may not act…
    expect((await send(port, "POST", action, { ...rebound, cookie }, form)).status).toBe(421);
    // …nor may a form whose Origin names another host, whatever the Host says.
    const foreign = await send(port, "POST", action, { host: `127.0.0.1:${port}`, origin: rebound.origin, cookie }, form);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toContain("may not act here");
    expect((await engine.client.get("guarded_http")).skill?.disabled).toBe(false);

    const done = await send(port, "POST", action, { host: `localhost:${port}`, origin: `http://localhost:${port}`, cookie }, form);
    expect(done.status).toBe(303);
    expect((await engine.client.get("guarded_http")).skill?.disabled).toBe(true);
  });
});
