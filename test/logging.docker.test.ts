import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const ALICE_TOKEN = "alice-log-token-0123456789";
const CODE_MARKER = "CODE_MARKER_7f3a";
const PAYLOAD_MARKER = "PAYLOAD_MARKER_91c2";

/** The code carries a marker in a string literal and the payload one in its value: neither may be logged. */
const ECHO = `import json, sys
label = "${CODE_MARKER}"
args = json.loads(sys.argv[1])
print(json.dumps({"label": label, "echo": args.get("text", "")}))
`;

type LogLine = Record<string, unknown>;

describe("the service's logs: one JSON line per call with request id, agent, skill and version; never code, payloads or tokens", () => {
  const lines: string[] = [];
  let engine: TestEngine;
  let alice: TestClient;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `alice=${ALICE_TOKEN}` },
      logs: { write: (line) => void lines.push(line) },
    });
    alice = connect(engine.app.port, ALICE_TOKEN);
  });
  afterAll(async () => {
    alice?.close();
    await engine?.dispose();
  });

  const parsed = (): LogLine[] => lines.map((line) => JSON.parse(line) as LogLine);
  const rpcLines = (method: string): LogLine[] => parsed().filter((l) => l.msg === "rpc" && l.method === method);

  it("says at start-up that tokens are required, naming the agents", () => {
    expect(parsed()).toContainEqual(
      expect.objectContaining({ msg: "bearer tokens required on every SkillEngine call", agents: ["alice"], tokens: 1 }),
    );
  });

  it("logs each call with its request id, the agent, the skill and the version that ran", async () => {
    await alice.register({ name: "echo_marker", code: ECHO, testPayload: JSON.stringify({ text: PAYLOAD_MARKER }) });
    const invoked = await alice.invoke("echo_marker", JSON.stringify({ text: PAYLOAD_MARKER }));
    expect(invoked.result?.stdout).toContain(PAYLOAD_MARKER);

    const [registerLine] = rpcLines("RegisterSkill");
    expect(registerLine).toMatchObject({ level: 30, code: "OK", agent: "alice", skill: "echo_marker", version: 1 });
    const [invokeLine] = rpcLines("InvokeSkill");
    expect(invokeLine).toMatchObject({ code: "OK", agent: "alice", skill: "echo_marker", version: 1 });
    expect(invokeLine?.requestId).toEqual(expect.stringMatching(/^[\w.:-]{8,}$/));
    expect(invokeLine?.requestId).not.toBe(registerLine?.requestId);
    // The service's own lines of a call carry the same request id.
    expect(parsed()).toContainEqual(
      expect.objectContaining({
        msg: "skill registered",
        requestId: registerLine?.requestId,
        agent: "alice",
        skill: "echo_marker",
        version: 1,
      }),
    );
  });

  it("logs a refused call as a warning without the token it carried", async () => {
    const intruder = connect(engine.app.port, "intruder-token-0123456789");
    try {
      expect((await rpcError(intruder.list())).code).toBe(status.UNAUTHENTICATED);
    } finally {
      intruder.close();
    }
    expect(rpcLines("ListSkills").some((l) => l.code === "UNAUTHENTICATED")).toBe(false);
    expect(parsed()).toContainEqual(
      expect.objectContaining({ msg: "rpc refused: no valid token", level: 40, method: "ListSkills", code: "UNAUTHENTICATED" }),
    );
  });

  it("never writes skill code, payloads or tokens at info level", () => {
    const all = lines.join("\n");
    expect(all).not.toContain(CODE_MARKER);
    expect(all).not.toContain(PAYLOAD_MARKER);
    expect(all).not.toContain(ALICE_TOKEN);
    expect(all).not.toContain("intruder-token");
  });
});
