import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Visibility } from "../src/gen/skillengine/v1/skills.js";
import { launchChromium, screenshot } from "./support/browser.js";
import { connect, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const ALICE_TOKEN = "alice-token-0123456789";
const BOB_TOKEN = "bob-token-0123456789abc";

/** A name that is markup: the page must show it as text. */
const MARKUP_NAME = '<img src=x onerror="document.title=1">.txt';

/** Writes files under /sandbox/out as the payload asks: a few of known sizes, or 70 small ones. */
const WRITES_FILES = `import json, sys
args = json.loads(sys.argv[1])
out = "/sandbox/out/"
if args.get("many"):
    for i in range(70):
        with open(out + "f%02d.txt" % i, "w") as f:
            f.write("0123456789")
else:
    with open(out + "big.bin", "wb") as f:
        f.write(b"x" * (3 << 19))
    with open(out + args["name"], "w") as f:
        f.write("hello")
print(json.dumps({"ok": True}))
`;

/** The console's recent runs (docs/console.md#recent-runs) in a real browser, against a real service, containers and registry. */
describe("the console shows a skill's recent runs and the files each returned", () => {
  let engine: TestEngine;
  let browser: Browser;
  let base: string;
  let alice: TestClient;
  let bob: TestClient;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: { SKILL_ENGINE_CONSOLE: "on", SKILL_ENGINE_TOKENS: `alice=${ALICE_TOKEN},bob=${BOB_TOKEN}` },
    });
    base = `http://127.0.0.1:${engine.app.metricsPort}`;
    alice = connect(engine.app.port, ALICE_TOKEN);
    bob = connect(engine.app.port, BOB_TOKEN);
    const registered = await alice.register({
      name: "writes_files",
      code: WRITES_FILES,
      testPayload: '{"many": true}',
      visibility: Visibility.VISIBILITY_PUBLIC,
    });
    expect(registered.test?.success, JSON.stringify(registered.test)).toBe(true);
    for (const [client, payload] of [
      [alice, { name: MARKUP_NAME }],
      [alice, { many: true }],
      [bob, { name: "bobs-report.txt" }],
    ] as const) {
      const response = await client.invoke("writes_files", JSON.stringify(payload));
      expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    }
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    alice?.close();
    bob?.close();
    await engine?.dispose();
  });

  async function skillPageAs(token: string): Promise<Page> {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.goto(`${base}/console/login`);
    await page.type("#token", token);
    await Promise.all([page.waitForNavigation(), page.click("#sign-in")]);
    await page.goto(`${base}/console/skills/writes_files`);
    return page;
  }

  const rowsOf = (page: Page) =>
    page.$$eval("#runs tbody tr", (rows) =>
      rows.map((row) => ({
        cells: [...row.querySelectorAll("td")].map((td) => td.textContent?.replace(/\s+/g, " ").trim() ?? ""),
        files: [...row.querySelectorAll("div.file")].map((d) => d.getAttribute("data-path")),
      })),
    );

  it("shows the owner every caller's runs, newest first, with each file's name and size, escaped", async () => {
    const page = await skillPageAs(ALICE_TOKEN);
    const rows = await rowsOf(page);
    expect(rows.map((r) => r.cells[3])).toEqual(["bob", "alice", "alice"]);
    const [bobs, many, first] = rows;
    expect(bobs?.files).toEqual(["big.bin", "bobs-report.txt"]);
    // The markup in a file name is text: no image was made, the script never ran.
    expect(first?.files).toEqual([MARKUP_NAME, "big.bin"]);
    expect(first?.cells[6]).toBe(`${MARKUP_NAME} 5 B big.bin 1.5 MiB`);
    expect(await page.$("#runs img")).toBeNull();
    expect(await page.title()).not.toBe("1");
    // 64 files are listed by name; the page counts the other 6 and their bytes.
    expect(many?.files).toHaveLength(64);
    expect(many?.files[0]).toBe("f00.txt");
    expect(many?.cells[6]).toMatch(/f63\.txt 10 B and 6 more files \(60 B\)$/);
    await screenshot(page, "recent-runs-owner");
  });

  it("shows anybody else only their own runs of a shared skill", async () => {
    const page = await skillPageAs(BOB_TOKEN);
    expect(await page.$eval("#runs p", (p) => p.textContent)).toContain("of your own runs");
    const rows = await rowsOf(page);
    expect(rows.map((r) => r.files)).toEqual([["big.bin", "bobs-report.txt"]]);
    // No caller column: the only caller is the viewer.
    expect(await page.$$eval("#runs thead th", (ths) => ths.map((th) => th.textContent))).not.toContain("Caller");
  });
});
