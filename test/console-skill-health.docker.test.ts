import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SkillStatus } from "../src/gen/skillengine/v1/skills.js";
import { launchChromium, screenshot } from "./support/browser.js";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

const SECRET_NAME = "DIVIDER_TOKEN";
const SECRET_VALUE = "s3cr3t-divider-value-0123456789";

/** Fails with a ZeroDivisionError on d = 0, after writing its secret to stderr (which must come back redacted). */
const DIVIDER = `import json, os, sys
args = json.loads(sys.argv[1])
print("token " + os.environ["${SECRET_NAME}"], file=sys.stderr)
print(json.dumps({"q": 10 / args["d"]}))
`;
const UNTOUCHED = `import json, sys
print(json.dumps({"ok": True}))
`;

/**
 * What a skill's page and the catalog say about its health (docs/console.md), in a real browser
 * against a real service, containers and registry: the kind in one vocabulary, the code, why it last
 * failed, its health beside "ready", no distances for a skill with no runs, the real RPC names, and
 * the navigation on error pages.
 */
describe("the console shows a skill's code, last error and health", () => {
  let engine: TestEngine;
  let browser: Browser;
  let base: string;
  let dir: string;
  /** The one-line cause InvokeSkill gave the last failure. */
  let lastSummary = "";

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "console-health-"));
    const skills = path.join(dir, "skills");
    await mkdir(path.join(skills, "review"), { recursive: true });
    await writeFile(
      path.join(skills, "review", "SKILL.md"),
      "---\nname: code_review\ndescription: A checklist for reviewing a pull request.\n---\nRead the diff twice.\n",
    );
    engine = await startTestEngine({
      env: { SKILL_ENGINE_CONSOLE: "on", SKILL_ENGINE_SKILL_DIRS: skills, SKILL_ENGINE_SKILL_WATCH: "off" },
    });
    base = `http://127.0.0.1:${engine.app.metricsPort}`;
    const { client } = engine;
    await client.call(client.raw.rescanSkillDirs, {});
    await client.call(client.raw.setSecret, { name: SECRET_NAME, value: SECRET_VALUE });
    const registered = await client.register({ name: "divider", code: DIVIDER, testPayload: '{"d": 2}', secrets: [SECRET_NAME] }, 120_000);
    expect(registered.test?.success, JSON.stringify(registered.test)).toBe(true);
    await client.register({ name: "untouched", code: UNTOUCHED }, 120_000);
    // Three failures in a row degrade it (docs/skill-lifecycle.md#consecutive-failures).
    for (let i = 0; i < 3; i++) {
      const response = await client.invoke("divider", '{"d": 0}', 120_000);
      lastSummary = response.result?.errorSummary ?? "";
      expect(lastSummary).toMatch(/ZeroDivisionError: division by zero$/);
    }
    expect((await client.get("divider")).skill?.status).toBe(SkillStatus.SKILL_STATUS_DEGRADED);
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  async function open(url: string): Promise<{ page: Page; status: number }> {
    const page = await (await browser.createBrowserContext()).newPage();
    const response = await page.goto(`${base}${url}`);
    return { page, status: response?.status() ?? 0 };
  }

  const text = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent?.replace(/\s+/g, " ").trim() ?? "");

  it("shows a degraded skill's last error: the one-line cause and its stderr's end, redacted", async () => {
    const { page } = await open("/console/skills/divider");
    expect(await text(page, "#facts")).toContain("degraded");
    expect(await text(page, "#last-error-cause")).toBe(lastSummary);
    const stderr = await page.$eval("#last-error-stderr", (e) => e.textContent ?? "");
    expect(stderr).toContain("token [secret:DIVIDER_TOKEN]");
    expect(stderr).toMatch(/ZeroDivisionError: division by zero\n?$/);
    expect(await page.content()).not.toContain(SECRET_VALUE);
    // The code its runs use, as text.
    expect(await page.$eval("#code", (e) => e.textContent)).toBe(DIVIDER);
    expect(await text(page, "#code-section p")).toBe("v1, the Python program: 4 lines.");
    await screenshot(page, "skill-last-error");
  });

  it("says plainly that a skill has no runs, where every untouched skill used to show the same distances", async () => {
    const { page } = await open("/console/skills/untouched");
    expect(await text(page, "#risk")).toBe("no runs yet");
    expect(await text(page, "#last-error")).toContain("No failed run yet");
    const library = (await open("/console/library")).page;
    expect(await text(library, 'tr[data-skill="untouched"] td:nth-child(9)')).toBe("no runs yet");
    // A skill with runs still shows how far the next threshold is.
    expect(await text(library, 'tr[data-skill="divider"] td:nth-child(9)')).not.toBe("no runs yet");
  });

  it("names the outcome RPC that exists", async () => {
    const { page } = await open("/console/skills/untouched");
    const html = await page.content();
    expect(html).toContain("RecordSkillOutcome");
    expect(html).not.toContain("ReportOutcome");
  });

  it("gives a folder skill the kind the library and GetSkill give it, and shows its SKILL.md as its code", async () => {
    const { page } = await open("/console/skills/code_review");
    const kind = await page.$$eval("#facts tr", (rows) =>
      rows
        .find((r) => r.querySelector("th")?.textContent === "Kind")
        ?.querySelector("td")
        ?.textContent?.trim(),
    );
    expect(kind).toBe("instructions");
    expect((await engine.client.get("code_review")).kind).toBe("instructions");
    const library = (await open("/console/library")).page;
    expect(await text(library, 'tr[data-skill="code_review"] td:nth-child(3)')).toBe("instructions");
    expect(await page.$eval("#code", (e) => e.textContent)).toContain("Read the diff twice.");
  });

  it("lists a degraded skill's health beside its load status in the catalog", async () => {
    const { page } = await open("/console/catalog");
    const rows = await page.$$eval("#catalog tbody tr", (trs) =>
      trs.map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent?.replace(/\s+/g, " ").trim())),
    );
    const divider = rows.find((cells) => cells[0] === "divider");
    expect(divider?.[2]).toBe("ready");
    expect(divider?.[3]).toMatch(/^degraded \(.+\)$/);
    expect(rows.find((cells) => cells[0] === "untouched")?.[3]).toBe("active");
    expect(await text(page, "#catalog-count")).toContain("Health: 1 degraded.");
    await screenshot(page, "catalog-health");
  });

  it("keeps the layout's navigation on error pages", async () => {
    const { page, status } = await open("/console/nowhere");
    expect(status).toBe(404);
    expect(await text(page, "#error")).toContain("nothing at /console/nowhere");
    expect(await page.$$eval("header a", (links) => links.map((a) => a.getAttribute("href")))).toEqual([
      "/console/library",
      "/console/catalog",
      "/console/sources",
      "/console/candidates",
      "/console/playbook",
    ]);
    // A skill that does not exist, and a static file that does not (answered before any session).
    const missing = await open("/console/skills/no_such_skill");
    expect(missing.status).toBe(404);
    expect(await missing.page.$('header a[href="/console/library"]')).not.toBeNull();
    const asset = await open("/console/static/nope.css");
    expect(asset.status).toBe(404);
    expect(await asset.page.$('header a[href="/console/catalog"]')).not.toBeNull();
    await screenshot(page, "error-404");
  });
});
