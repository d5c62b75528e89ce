import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

/** Debian's Chromium (apt-get install chromium; scripts/ensure-test-tools.sh installs it). No browser is downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Where the browser tests write their screenshots: git-ignored, kept after the run for a reviewer. */
export const SCREENSHOTS = path.resolve("test-output", "console");

/** `extraArgs`: more Chromium switches, e.g. `--host-resolver-rules=MAP attacker.test 127.0.0.1` to play a DNS rebinding. */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  await mkdir(SCREENSHOTS, { recursive: true });
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // The test runs as root in a container: Chromium's own sandbox needs user namespaces it may not have.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", ...extraArgs],
  });
}

/** A full-page screenshot under {@link SCREENSHOTS}. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) as `${string}.png`, fullPage: true });
}
