import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, screenshot } from "./support/browser.js";
import { SkillStatus, Visibility } from "../src/gen/skillengine/v1/skills.js";
import { connect, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const ADMIN_TOKEN = "admin-token-0123456789";
const ALICE_TOKEN = "alice-token-0123456789";
const BOB_TOKEN = "bob-token-0123456789abc";

const V1 = `import json, sys
args = json.loads(sys.argv[1])
if args.get("fail"):
    raise ValueError("asked to fail")
print(json.dumps({"sum": args.get("a", 0) + args.get("b", 0)}))
`;
const V2 = V1.replace('"sum": args.get("a", 0) + args.get("b", 0)', '"sum": args.get("a", 0) + args.get("b", 0), "version": 2');
const PUBLIC = `import json, sys
print(json.dumps({"ok": True}))
`;

/** Submits a form built in the page (as a forged or hand-made form would be) and returns the answer's HTTP status. */
async function postForm(page: Page, action: string, fields: Record<string, string>): Promise<number> {
  const [response] = await Promise.all([
    page.waitForNavigation(),
    // Run in the page as script text: the test's own types know no DOM.
    page.evaluate(`(() => {
      const form = document.createElement("form");
      form.method = "post";
      form.action = ${JSON.stringify(action)};
      for (const [name, value] of Object.entries(${JSON.stringify(fields)})) {
        const input = document.createElement("input");
        input.type = "hidden";
        input.name = name;
        input.value = value;
        form.appendChild(input);
      }
      document.body.appendChild(form);
      form.submit();
    })()`),
  ]);
  return response?.status() ?? 0;
}

/**
 * The console (docs/console.md) in a real browser: Debian's Chromium driven by puppeteer-core,
 * against a real service with bearer tokens, real containers and a real registry.
 */
describe("operator console in a browser", () => {
  let engine: TestEngine;
  let browser: Browser;
  let base: string;
  let alice: TestClient;
  let bob: TestClient;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_CONSOLE: "on",
        SKILL_ENGINE_TOKENS: `root:admin=${ADMIN_TOKEN},alice=${ALICE_TOKEN},bob=${BOB_TOKEN}`,
      },
    });
    base = `http://127.0.0.1:${engine.app.metricsPort}`;
    alice = connect(engine.app.port, ALICE_TOKEN);
    bob = connect(engine.app.port, BOB_TOKEN);
    // alice: a private skill with two versions and a history of successes and failures; a public one.
    await alice.register({ name: "adder", code: V1, testPayload: '{"a":1,"b":2}' });
    for (const payload of ['{"a":1}', '{"fail":true}', '{"a":2}']) await alice.invoke("adder", payload);
    await alice.register({ name: "adder", code: V2, testPayload: '{"a":1,"b":2}' });
    for (const payload of ['{"a":3}', '{"a":4}']) await alice.invoke("adder", payload);
    await alice.register({ name: "alice_public", code: PUBLIC, visibility: Visibility.VISIBILITY_PUBLIC });
    // bob: a private skill alice must not see.
    await bob.register({ name: "bobs_secret", code: PUBLIC });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    alice?.close();
    bob?.close();
    await engine?.dispose();
  });

  async function signIn(token: string): Promise<Page> {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.goto(`${base}/console/`);
    expect(page.url()).toBe(`${base}/console/login`);
    await page.type("#token", token);
    await Promise.all([page.waitForNavigation(), page.click("#sign-in")]);
    expect(page.url()).toBe(`${base}/console/library`);
    return page;
  }

  it("refuses a wrong token and keeps the session in an HttpOnly, SameSite=Strict cookie", async () => {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.goto(`${base}/console/login`);
    await page.type("#token", "not-a-token-at-all-xx");
    await Promise.all([page.waitForNavigation(), page.click("#sign-in")]);
    expect(await page.$eval("#login-error", (e) => e.textContent)).toContain("not valid");
    await page.type("#token", ADMIN_TOKEN);
    await Promise.all([page.waitForNavigation(), page.click("#sign-in")]);
    const cookie = (await context.cookies()).find((c) => c.name === "se_console");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/console", session: true });
    // Only a random session id: the token never reaches the browser's cookie jar.
    expect(cookie?.value).not.toContain(ADMIN_TOKEN);
    await context.close();
  });

  it("shows an admin the whole library, filters it, and draws a skill's timeline", async () => {
    const page = await signIn(ADMIN_TOKEN);
    const names = await page.$$eval("#library tbody tr", (rows) => rows.map((r) => r.getAttribute("data-skill")));
    expect(names).toEqual(["adder", "alice_public", "bobs_secret"]);
    // The window's sparkline: 2 invocations of the active version (v2), both successes.
    expect(await page.$eval('tr[data-skill="adder"] svg.spark', (e) => e.getAttribute("aria-label"))).toContain("2 of the last 2");
    await screenshot(page, "library-admin");

    await page.goto(`${base}/console/library?owner=bob`);
    expect(await page.$$eval("#library tbody tr", (rows) => rows.map((r) => r.getAttribute("data-skill")))).toEqual(["bobs_secret"]);

    await page.goto(`${base}/console/skills/adder`);
    await page.waitForSelector('#timeline[data-drawn="true"] canvas');
    // Drawn, not just present: the chart's canvas has painted pixels.
    const painted = (await page.evaluate(`(() => {
      const canvas = document.querySelector("#timeline canvas");
      const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
      return n;
    })()`)) as number;
    expect(painted).toBeGreaterThan(100);
    const timeline = JSON.parse(await page.$eval("#timeline-data", (e) => e.textContent ?? "")) as {
      invocations: number[];
      perVersion: Array<{ version: number }>;
      overall: Array<number | null>;
    };
    expect(timeline.invocations.reduce((a, b) => a + b, 0)).toBe(5);
    expect(timeline.perVersion.map((v) => v.version)).toEqual([1, 2]);
    expect(timeline.overall.at(-1)).toBe(80); // 4 of today's 5 succeeded
    expect(await page.$$eval("#durations tbody tr", (rows) => rows.length)).toBe(2);
    expect(await page.$("#actions")).not.toBeNull();
    await screenshot(page, "skill-admin");

    // Diff two versions.
    await page.select('#diff-form select[name="from"]', "1");
    await page.select('#diff-form select[name="to"]', "2");
    await Promise.all([page.waitForNavigation(), page.click("#diff-form button")]);
    const added = await page.$$eval("#diff .add", (lines) => lines.map((l) => l.textContent));
    const removed = await page.$$eval("#diff .del", (lines) => lines.map((l) => l.textContent));
    expect(added.some((l) => l?.includes('"version": 2'))).toBe(true);
    expect(removed.some((l) => l?.startsWith("-") && l.includes('"sum"'))).toBe(true);
    expect(await page.$$eval("#diff .file", (lines) => lines.map((l) => l.textContent))).toEqual(["--- adder v1", "+++ adder v2"]);
    // Unchanged lines around the change, one per line.
    expect(await page.$$eval("#diff .context", (lines) => lines.map((l) => l.textContent))).toContain(" args = json.loads(sys.argv[1])");
    await screenshot(page, "diff");
  });

  it("asks for confirmation before an owner action, and refuses one without the CSRF token", async () => {
    const page = await signIn(ALICE_TOKEN);
    await page.goto(`${base}/console/skills/adder`);
    await Promise.all([page.waitForNavigation(), page.click('a[data-action="protect"]')]);
    expect(await page.$eval("#confirm-text", (e) => e.textContent)).toContain("Protect adder");
    expect((await alice.get("adder")).skill?.protected).toBe(false); // nothing happened yet
    await screenshot(page, "confirm-protect");
    await Promise.all([page.waitForNavigation(), page.click("#confirm")]);
    expect(await page.$eval("#notice", (e) => e.textContent)).toBe("adder is protected.");
    expect((await alice.get("adder")).skill?.protected).toBe(true);

    // The same POST from this signed-in browser, but without the form's token: refused.
    const status = await postForm(page, "/console/skills/adder/actions", { action: "unprotect", confirmed: "yes" });
    expect(status).toBe(403);
    expect((await alice.get("adder")).skill?.protected).toBe(true);

    // Roll back to v1 through its confirmation step.
    await page.goto(`${base}/console/skills/adder/confirm?action=rollback&version=1`);
    await Promise.all([page.waitForNavigation(), page.click("#confirm")]);
    expect(await page.$eval("#notice", (e) => e.textContent)).toBe("adder is at v1 again.");
    expect((await alice.get("adder")).skill?.version).toBe(1);
  });

  it("shows an agent only what the API lets it see, and the endpoints refuse the rest", async () => {
    const page = await signIn(BOB_TOKEN);
    const names = await page.$$eval("#library tbody tr", (rows) => rows.map((r) => r.getAttribute("data-skill")));
    expect(names).toEqual(["alice_public", "bobs_secret"]);
    await screenshot(page, "library-agent");

    // Another agent's private skill: the same answer as a name that does not exist.
    const hidden = await page.goto(`${base}/console/skills/adder`);
    expect(hidden?.status()).toBe(404);
    const diff = await page.goto(`${base}/console/skills/adder/diff?from=1&to=2`);
    expect(diff?.status()).toBe(404);

    // Another agent's public skill: visible, without the owner's actions.
    await page.goto(`${base}/console/skills/alice_public`);
    expect(await page.$("#facts")).not.toBeNull();
    expect(await page.$("#actions")).toBeNull();

    // And the action endpoint itself refuses, with bob's own valid CSRF token.
    const csrf = await page.$eval('header input[name="csrf"]', (e) => e.getAttribute("value") ?? "");
    await page.goto(`${base}/console/skills/alice_public`);
    expect(await postForm(page, "/console/skills/alice_public/actions", { csrf, action: "retire", confirmed: "yes" })).toBe(403);
    expect(await page.$eval("#error", (e) => e.textContent)).toContain("alice");
    expect((await alice.get("alice_public")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    expect(await postForm(page, "/console/skills/adder/actions", { csrf, action: "retire", confirmed: "yes" })).toBe(404);

    // Catalog and playbook: bob's view.
    await page.goto(`${base}/console/catalog`);
    expect(await page.$$eval("#catalog tbody tr", (rows) => rows.map((r) => r.getAttribute("data-skill")))).toEqual([
      "alice_public",
      "bobs_secret",
    ]);
    await screenshot(page, "catalog-agent");
    await page.goto(`${base}/console/playbook`);
    expect(await page.$("#playbook-empty")).not.toBeNull();
    await Promise.all([page.waitForNavigation(), page.click("#prune-dry-run")]);
    expect(await page.$eval("#prune-summary", (e) => e.textContent)).toContain("would archive 0 lessons");
    await screenshot(page, "playbook-prune-dry-run");
  });

  it("answers nobody without a session: pages redirect to sign-in, actions are refused", async () => {
    const get = await fetch(`${base}/console/library`, { redirect: "manual" });
    expect(get.status).toBe(303);
    expect(get.headers.get("location")).toBe("/console/login");
    const post = await fetch(`${base}/console/skills/adder/actions`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "action=retire&confirmed=yes",
    });
    expect(post.status).toBe(401);
    expect((await alice.get("adder")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    // A sign-in posted from elsewhere (no login cookie to match its token) opens no session, even with a good token.
    const forged = await fetch(`${base}/console/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: ADMIN_TOKEN, csrf: "guessed" }).toString(),
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.getSetCookie().some((c) => c.startsWith("se_console="))).toBe(false);
    // The metrics port still serves what it served before.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});

/** No tokens configured: the console is the local agent's (an admin), with no sign-in, on loopback. */
describe("operator console without tokens", () => {
  let engine: TestEngine;
  let browser: Browser;

  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_CONSOLE: "on" } });
    await engine.client.register({ name: "local_skill", code: PUBLIC });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await engine?.dispose();
  });

  it("opens a session for the local agent at once, and its actions still need the CSRF token and the confirmation", async () => {
    const base = `http://127.0.0.1:${engine.app.metricsPort}`;
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.goto(`${base}/console/`);
    expect(page.url()).toBe(`${base}/console/library`);
    expect(await page.$eval("header .who", (e) => e.textContent)).toContain("local (admin)");
    expect(await page.$$eval("#library tbody tr", (rows) => rows.map((r) => r.getAttribute("data-skill")))).toEqual(["local_skill"]);
    const login = await page.goto(`${base}/console/login`);
    expect(login?.url()).toBe(`${base}/console/library`);

    await page.goto(`${base}/console/skills/local_skill`);
    expect(await postForm(page, "/console/skills/local_skill/actions", { action: "retire", confirmed: "yes" })).toBe(403);
    await page.goto(`${base}/console/skills/local_skill/confirm?action=retire`);
    const csrf = await page.$eval('#confirm-form input[name="csrf"]', (e) => e.getAttribute("value") ?? "");
    expect(await postForm(page, "/console/skills/local_skill/actions", { csrf, action: "retire" })).toBe(400);
    expect((await engine.client.get("local_skill")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    await page.goto(`${base}/console/skills/local_skill/confirm?action=retire`);
    await Promise.all([page.waitForNavigation(), page.click("#confirm")]);
    expect(await page.$eval("#notice", (e) => e.textContent)).toContain("retired");
    expect((await engine.client.get("local_skill")).skill?.status).toBe(SkillStatus.SKILL_STATUS_RETIRED);
    await screenshot(page, "skill-local-retired");
  });
});
