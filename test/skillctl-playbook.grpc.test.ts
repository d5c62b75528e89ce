import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";
import { skillctl } from "./support/skillctl.js";

describe("skillctl lessons and skillctl playbook against a real service", () => {
  let engine: TestEngine;
  let port: number;
  beforeAll(async () => {
    engine = await startTestEngine();
    port = engine.app.port;
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  it("adds, lists, shows, verifies, pins, prints the playbook, deletes and restores a lesson", async () => {
    const challenge = path.join(engine.home, "challenge.txt");
    await writeFile(challenge, "Validator: the output must list every pod that restarted more than three times today.\n");
    const refused = await skillctl(
      port,
      ...["lessons", "add", "--trigger", "When the output must list every pod that restarted", "--do", "Filter by restart count."],
      ...["--domain", "shell", "--challenge-file", challenge],
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("INVALID_ARGUMENT: generalization guard: trigger");

    const added = await skillctl(
      port,
      ...["lessons", "add", "--trigger", "When debugging a Kubernetes pod that keeps restarting", "--avoid", "Restarting it again."],
      ...["--do", "Read the previous container's logs and the pod's events first.", "--domain", "debugging", "--confidence", "0.8"],
    );
    expect(added.code, added.stderr).toBe(0);
    const id = /added (lsn_[0-9a-f]+)/.exec(added.stdout)?.[1] ?? "";
    expect(id).not.toBe("");

    const listed = await skillctl(port, "lessons", "list", "--scope", "today");
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+0\\.400\\s+active`));

    const verified = await skillctl(port, "lessons", "verify", id, "--original", "fail", "--with-lesson", "pass");
    expect(verified.stdout).toContain(`${id}: verified`);
    expect((await skillctl(port, "lessons", "pin", id)).stdout).toContain("pinned: yes");

    const context = await skillctl(port, "playbook", "my", "pod", "is", "in", "a", "restart", "loop", "on", "Kubernetes");
    expect(context.code).toBe(0);
    expect(context.stdout).toBe(
      "### SKILL PLAYBOOK:\n" +
        "- When: When debugging a Kubernetes pod that keeps restarting\n" +
        "  Avoid: Restarting it again.\n" +
        "  Do: Read the previous container's logs and the pod's events first.\n",
    );
    const json = JSON.parse((await skillctl(port, "--json", "lessons", "show", id)).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ id, state: "LESSON_STATE_ACTIVE", verified: true, pinned: true, retrievals: 1 });

    expect((await skillctl(port, "lessons", "prune", "--dry-run")).stdout).toBe("nothing to prune\n");
    expect((await skillctl(port, "lessons", "delete", id)).stdout).toContain("state:       deleted");
    // The same query that found it: only the deletion can make the answer empty.
    const none = await skillctl(port, "playbook", "my", "pod", "is", "in", "a", "restart", "loop", "on", "Kubernetes");
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain("no lesson qualifies");
    expect((await skillctl(port, "lessons", "restore", id)).stdout).toContain("state:       active");
    expect((await skillctl(port, "lessons", "frobnicate")).stderr).toContain("unknown lessons action 'frobnicate'");
  });
});
