import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
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
    // The data drawn, not just the axes and grid: only the overall series paints green (#2e7d32;
    // the grid is grey, the version marks blue, the per-version series other hues). Today's one
    // value, 80 %, is a point in the upper half of the chart.
    const series = (await page.evaluate(`(() => {
      const canvas = document.querySelector("#timeline canvas");
      const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      let count = 0;
      let ySum = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] > 0 && data[i + 1] - Math.max(data[i], data[i + 2]) >= 30) {
          count++;
          ySum += Math.floor(i / 4 / canvas.width);
        }
      }
      return { count, meanY: count ? ySum / count : -1, height: canvas.height };
    })()`)) as { count: number; meanY: number; height: number };
    expect(series.count).toBeGreaterThanOrEqual(20);
    expect(series.meanY).toBeGreaterThan(0);
    expect(series.meanY).toBeLessThan(series.height / 2);
    const timeline = JSON.parse(await page.$eval("#timeline-data", (e) => e.textContent ?? "")) as {
      invocations: number[];
      perVersion: Array<{ version: number }>;
      overall: Array<number | null>;
    };
    expect(timeline.invocations.reduce((a, b) => a + b, 0)).toBe(5);
    expect(timeline.perVersion.map((v) => v.version)).toEqual([1, 2]);
    expect(timeline.overall.at(-1)).toBe(80); // 4 of today's 5 succeeded
    expect(await page.$$eval("#durations tbody tr", (rows) => rows.length)).toBe(2);
    // The window's samples by source: both of v2's invocations judged by their exit code.
    const sources = await page.$$eval("#outcome-sources tbody tr", (rows) =>
      rows.map((r) => [r.getAttribute("data-source"), ...[...r.querySelectorAll("td")].slice(1, 4).map((c) => c.textContent?.trim())]),
    );
    expect(sources).toEqual([
      ["exit_code", "2", "2", "100%"],
      ["explicit", "0", "0", "–"],
      ["implicit", "0", "0", "–"],
    ]);
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

  it("lists an owner's grants, switches a skill off and on through confirmation, and refuses the switch to anybody else", async () => {
    await alice.call(alice.raw.grantSkill, { name: "adder", granteeAgent: "carol", granteeUser: "", version: 0 });
    const page = await signIn(ALICE_TOKEN);
    await page.goto(`${base}/console/skills/adder`);
    expect(await page.$$eval("#grants tbody tr", (rows) => rows.map((r) => r.getAttribute("data-grantee")))).toEqual(["carol"]);
    expect(await page.$eval('#grants tr[data-grantee="carol"]', (e) => e.textContent)).toContain("follows the active version");

    await page.goto(`${base}/console/skills/alice_public`);
    expect(await page.$eval("#grants", (e) => e.textContent)).toContain("No grant");
    await Promise.all([page.waitForNavigation(), page.click('a[data-action="disable"]')]);
    expect(await page.$eval("#confirm-text", (e) => e.textContent)).toContain("Disable alice_public");
    expect((await alice.get("alice_public")).skill?.disabled).toBe(false); // nothing happened yet
    await Promise.all([page.waitForNavigation(), page.click("#confirm")]);
    expect(await page.$eval("#notice", (e) => e.textContent)).toBe("alice_public is disabled; Enable switches it back on.");
    expect(await page.$eval("#enabled", (e) => e.textContent)).toContain("switched off by alice");
    expect((await alice.get("alice_public")).skill?.disabled).toBe(true);
    await screenshot(page, "skill-disabled");

    // bob sees the skill, but neither its grants nor the switch; the endpoint refuses him with his own CSRF token.
    const bobPage = await signIn(BOB_TOKEN);
    await bobPage.goto(`${base}/console/skills/alice_public`);
    expect(await bobPage.$("#facts")).not.toBeNull();
    expect(await bobPage.$("#grants")).toBeNull();
    expect(await bobPage.$('a[data-action="enable"], a[data-action="disable"]')).toBeNull();
    const csrf = await bobPage.$eval('header input[name="csrf"]', (e) => e.getAttribute("value") ?? "");
    expect(await postForm(bobPage, "/console/skills/alice_public/actions", { csrf, action: "enable", confirmed: "yes" })).toBe(403);
    expect((await alice.get("alice_public")).skill?.disabled).toBe(true);
    await bobPage.goto(`${base}/console/skills/adder`);
    expect(await postForm(bobPage, "/console/skills/adder/actions", { csrf, action: "disable", confirmed: "yes" })).toBe(404);
    expect((await alice.get("adder")).skill?.disabled).toBe(false);

    await page.goto(`${base}/console/skills/alice_public/confirm?action=enable`);
    await Promise.all([page.waitForNavigation(), page.click("#confirm")]);
    expect(await page.$eval("#notice", (e) => e.textContent)).toBe("alice_public is enabled.");
    expect((await alice.get("alice_public")).skill?.disabled).toBe(false);
  });

  it("shows an agent's candidates with their sessions, and promotes one through its confirmation into the library", async () => {
    const toolCalls = [
      { tool: "adder", arguments: '{"a":1,"b":2}' },
      { tool: "alice_public", arguments: "{}" },
      { tool: "adder", arguments: '{"a":3,"b":4}' },
    ];
    for (const sessionKey of ["morning", "noon", "evening"]) await alice.call(alice.raw.recordSession, { sessionKey, toolCalls });
    const page = await signIn(ALICE_TOKEN);
    await page.goto(`${base}/console/candidates`);
    const rows = await page.$$eval("#candidates tbody tr", (trs) =>
      trs.map((r) => ({
        id: r.getAttribute("data-candidate") ?? "",
        cells: [...r.querySelectorAll("td")].map((c) => c.textContent?.replace(/\s+/g, " ").trim()),
      })),
    );
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row?.cells[2]).toBe("adder → alice_public → adder");
    expect(row?.cells[3]).toBe("3");
    expect(row?.cells[4]?.split(", ").sort()).toEqual(["evening", "morning", "noon"]);
    expect(row?.cells[5]).toBe("candidate");
    await screenshot(page, "candidates");

    // Another agent's candidate is nobody else's to see or act on.
    const bobPage = await signIn(BOB_TOKEN);
    await bobPage.goto(`${base}/console/candidates`);
    expect(await bobPage.$("#candidates-empty")).not.toBeNull();
    const csrf = await bobPage.$eval('header input[name="csrf"]', (e) => e.getAttribute("value") ?? "");
    expect((await bobPage.goto(`${base}/console/candidates/confirm?id=${row?.id}&action=dismiss`))?.status()).toBe(404);
    expect(await postForm(bobPage, "/console/candidates/actions", { csrf, id: row?.id ?? "", action: "dismiss", confirmed: "yes" })).toBe(
      404,
    );
    // alice's own POST without the confirmation step is refused too.
    const aliceCsrf = await page.$eval('header input[name="csrf"]', (e) => e.getAttribute("value") ?? "");
    expect(await postForm(page, "/console/candidates/actions", { csrf: aliceCsrf, id: row?.id ?? "", action: "promote" })).toBe(400);

    await page.goto(`${base}/console/candidates`);
    await Promise.all([page.waitForNavigation(), page.click('a[data-action="promote"]')]);
    expect(await page.$eval("#confirm-text", (e) => e.textContent)).toContain(`Promote candidate ${row?.id}`);
    await page.type("#promote-name", "add_twice");
    await page.type("#promote-description", "Adds twice, with a public call between.");
    await Promise.all([page.waitForNavigation(), page.click("#confirm")]);
    expect(await page.$eval("#notice", (e) => e.textContent?.replace(/\s+/g, " ").trim())).toBe(
      `Candidate ${row?.id} is promoted: add_twice.`,
    );
    expect(await page.$eval(`tr[data-candidate="${row?.id}"] td:nth-child(6)`, (e) => e.textContent?.replace(/\s+/g, " ").trim())).toBe(
      "promoted → add_twice",
    );
    const promoted = (await alice.get("add_twice")).skill;
    expect(promoted?.description).toBe("Adds twice, with a public call between.");

    // A second pattern, dismissed through its confirmation: it stays listed as dismissed, with no action left.
    const again = [
      { tool: "alice_public", arguments: "{}" },
      { tool: "alice_public", arguments: '{"x":1}' },
      { tool: "alice_public", arguments: "{}" },
    ];
    for (const sessionKey of ["one", "two", "three"]) await alice.call(alice.raw.recordSession, { sessionKey, toolCalls: again });
    await page.goto(`${base}/console/candidates`);
    const second = await page.$eval('a[data-action="dismiss"]', (a) => a.closest("tr")?.getAttribute("data-candidate") ?? "");
    expect(second).not.toBe(row?.id);
    await Promise.all([page.waitForNavigation(), page.click('a[data-action="dismiss"]')]);
    expect(await page.$eval("#confirm-text", (e) => e.textContent)).toContain(`Dismiss candidate ${second}`);
    await Promise.all([page.waitForNavigation(), page.click("#confirm")]);
    expect(await page.$eval("#notice", (e) => e.textContent?.trim())).toBe(`Candidate ${second} is dismissed.`);
    expect(await page.$(`tr[data-candidate="${second}"] a.action`)).toBeNull();

    await page.goto(`${base}/console/library?kind=composed`);
    expect(await page.$$eval("#library tbody tr", (trs) => trs.map((r) => r.getAttribute("data-skill")))).toEqual(["add_twice"]);
    await screenshot(page, "library-promoted");
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

/** Skill folders (docs/skill-sources.md): the Sources page shows each with its status and why it is refused. */
describe("operator console: skill folders", () => {
  let engine: TestEngine;
  let browser: Browser;
  let dir: string;
  let skills: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "console-sources-"));
    skills = path.join(dir, "skills");
    await mkdir(path.join(skills, "review"), { recursive: true });
    await writeFile(
      path.join(skills, "review", "SKILL.md"),
      "---\nname: code_review\ndescription: A checklist for reviewing a pull request.\n---\nRead the diff twice.\n",
    );
    // A folder with a symbolic link: the safety check blocks it.
    await mkdir(path.join(skills, "sneaky"));
    await writeFile(
      path.join(skills, "sneaky", "SKILL.md"),
      "---\nname: sneaky\ndescription: Reads what it should not.\n---\nSee passwd.\n",
    );
    await symlink("/etc/passwd", path.join(skills, "sneaky", "passwd"));
    engine = await startTestEngine({
      env: { SKILL_ENGINE_CONSOLE: "on", SKILL_ENGINE_SKILL_DIRS: skills, SKILL_ENGINE_SKILL_WATCH: "off" },
    });
    await engine.client.call(engine.client.raw.rescanSkillDirs, {});
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("lists each discovered folder with its status and the reason it is blocked, and filters the library by folder kind", async () => {
    const base = `http://127.0.0.1:${engine.app.metricsPort}`;
    const page = await (await browser.createBrowserContext()).newPage();
    await page.goto(`${base}/console/sources`);
    const rows = await page.$$eval("#sources tbody tr", (trs) =>
      trs.map((r) => ({
        folder: r.getAttribute("data-folder"),
        status: r.getAttribute("data-status"),
        name: r.querySelector("td:nth-child(3)")?.textContent?.trim(),
        reason: r.querySelector("td.reason")?.textContent?.trim(),
      })),
    );
    // A blocked folder is never read as a skill, so it has no name: the folder says which one it is.
    expect(rows.map((r) => [r.status, path.basename(r.folder ?? ""), r.name])).toEqual([
      ["ready", "review", "code_review"],
      ["blocked", "sneaky", "–"],
    ]);
    expect(rows[0]?.reason).toBe("");
    expect(rows[1]?.reason).toMatch(/symbolic link/);
    expect(await page.$eval("#sources-count", (e) => e.textContent)).toContain("1 ready, 1 blocked");
    await screenshot(page, "sources");

    // The catalog merges the folders as GetCatalog does: the folder skill, and the blocked folder as a row of its own.
    await page.goto(`${base}/console/catalog`);
    const catalog = await page.$$eval("#catalog tbody tr", (trs) =>
      trs.map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent?.replace(/\s+/g, " ").trim())),
    );
    expect(catalog.map((cells) => [cells[0], cells[2], path.basename(cells[8] ?? "")])).toEqual([
      ["code_review", "ready", "review"],
      ["–", "blocked", "sneaky"],
    ]);
    await screenshot(page, "catalog-folders");

    await page.goto(`${base}/console/library?kind=instructions`);
    expect(await page.$$eval("#library tbody tr", (trs) => trs.map((r) => r.getAttribute("data-skill")))).toEqual(["code_review"]);
    expect(await page.$eval('tr[data-skill="code_review"] td:nth-child(3)', (e) => e.textContent?.trim())).toBe("instructions");
    await page.goto(`${base}/console/library?kind=directory`);
    expect(await page.$("#library-empty")).not.toBeNull();
  });
});
