import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const FRONT_TOKEN = "front-desk-token-0123456789";
/** User ids a delegate made up: they match no grant and no user anywhere. */
const MADE_UP_USERS = ["made-up-user-7f3a", "made-up-user-91c2", "made-up-user-d04e"];

/**
 * /metrics carries bounded label values only (docs/operations.md#metrics): a delegate names any user
 * id it likes, so who a call was for goes to the call's log line, never into a label.
 */
describe("metrics: no agent or user identities in labels", () => {
  let engine: TestEngine;
  const lines: Array<{ msg?: string; method?: string; agent?: string; user?: string }> = [];

  beforeAll(async () => {
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `front:delegate=${FRONT_TOKEN}` },
      logs: { write: (line) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
    });
    for (const user of MADE_UP_USERS) {
      const client: TestClient = connect(engine.app.port, FRONT_TOKEN, undefined, { "x-user-id": user });
      try {
        await client.list();
      } finally {
        client.close();
      }
    }
  });

  afterAll(async () => {
    await engine?.dispose();
  });

  it("counts delegated calls by method only, and logs the agent and the user of each", async () => {
    const response = await fetch(`http://127.0.0.1:${engine.app.metricsPort}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('skill_engine_delegated_calls_total{method="ListSkills"} 3');
    for (const user of MADE_UP_USERS) expect(text).not.toContain(user);
    // No series of the service's own names an agent or a user.
    const own = text.split("\n").filter((line) => line.startsWith("skill_engine_"));
    expect(own.filter((line) => /[{,](agent|user)="/.test(line))).toEqual([]);

    const calls = lines.filter((line) => line.msg === "rpc" && line.method === "ListSkills");
    expect(calls.map((line) => [line.agent, line.user])).toEqual(MADE_UP_USERS.map((user) => ["front", user]));
  });
});
