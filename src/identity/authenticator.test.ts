import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidArgumentError, PermissionDeniedError, UnauthenticatedError } from "../errors/index.js";
import { Authenticator } from "./authenticator.js";
import { LOCAL_CALLER } from "./caller.js";
import { sha256Hex, TokenListError } from "./token-list.js";

const logger = pino({ level: "silent" });
const ALICE = "alice-token-0123456789";
const OPS = "ops-token-abcdefghijkl";
const DESK = "desk-token-0123456789";

function refusal(work: () => unknown): UnauthenticatedError {
  try {
    work();
  } catch (error) {
    if (error instanceof UnauthenticatedError) return error;
    throw error;
  }
  throw new Error("expected UNAUTHENTICATED");
}

describe("Authenticator", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skill-engine-auth-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("without tokens, every call is the local agent with the admin role, whatever it sends", async () => {
    const auth = await Authenticator.load({ tokensFile: undefined, inlineTokens: undefined }, logger);
    expect(auth.enabled).toBe(false);
    expect(auth.authenticate(undefined)).toEqual(LOCAL_CALLER);
    expect(auth.authenticate("Bearer whatever")).toEqual(LOCAL_CALLER);
    expect(LOCAL_CALLER).toEqual({ agentId: "local", admin: true, authenticated: false });
  });

  it("with tokens, maps a bearer token to its agent and refuses anything else with UNAUTHENTICATED", async () => {
    const auth = await Authenticator.load({ tokensFile: undefined, inlineTokens: `alice=${ALICE},ops:admin=${OPS}` }, logger);
    expect(auth.authenticate(`Bearer ${ALICE}`)).toEqual({ agentId: "alice", admin: false, authenticated: true });
    expect(auth.authenticate(`bearer  ${OPS} `)).toEqual({ agentId: "ops", admin: true, authenticated: true });

    expect(refusal(() => auth.authenticate(undefined)).message).toMatch(
      /requires a token: send the metadata "authorization: Bearer <token>"/,
    );
    expect(refusal(() => auth.authenticate("")).kind).toBe("unauthenticated");
    expect(refusal(() => auth.authenticate(ALICE)).message).toBe('the authorization metadata must be "Bearer <token>"');
    expect(refusal(() => auth.authenticate(`Basic ${ALICE}`)).message).toBe('the authorization metadata must be "Bearer <token>"');
    expect(refusal(() => auth.authenticate(`Bearer ${ALICE}x`)).message).toBe("the bearer token is not valid (unknown or revoked)");
    expect(refusal(() => auth.authenticate(`Bearer ${ALICE} extra`)).kind).toBe("unauthenticated");
  });

  it("lets only delegating agents act for an end user (x-user-id), and checks the user id", async () => {
    const auth = await Authenticator.load(
      { tokensFile: undefined, inlineTokens: `alice=${ALICE},desk:delegate=${DESK},ops:admin=${OPS}` },
      logger,
    );
    const desk = auth.authenticate(`Bearer ${DESK}`);
    expect(auth.actingFor(desk, "user-1")).toEqual({ agentId: "desk", admin: false, authenticated: true, userId: "user-1" });
    expect(auth.actingFor(desk, undefined)).toEqual(desk);
    expect(auth.actingFor(desk, "")).toEqual(desk);
    for (const caller of [auth.authenticate(`Bearer ${ALICE}`), auth.authenticate(`Bearer ${OPS}`)]) {
      expect(() => auth.actingFor(caller, "user-1")).toThrow(PermissionDeniedError);
    }
    expect(() => auth.actingFor(desk, "two words")).toThrow(InvalidArgumentError);
    // Without tokens the one local agent may act for users (nothing to delegate from).
    const open = await Authenticator.load({ tokensFile: undefined, inlineTokens: undefined }, logger);
    expect(open.actingFor(LOCAL_CALLER, "user-1").userId).toBe("user-1");
  });

  it("reads a tokens file, and reload() picks up added and revoked tokens", async () => {
    const file = path.join(dir, "tokens.json");
    await writeFile(file, JSON.stringify({ tokens: [{ agent: "alice", token_sha256: sha256Hex(ALICE) }] }), { mode: 0o600 });
    const auth = await Authenticator.load({ tokensFile: file, inlineTokens: undefined }, logger);
    expect(auth.authenticate(`Bearer ${ALICE}`).agentId).toBe("alice");
    expect(() => auth.authenticate(`Bearer ${OPS}`)).toThrow(UnauthenticatedError);

    await writeFile(file, JSON.stringify({ tokens: [{ agent: "ops", token: OPS, admin: true }] }));
    expect(await auth.reload()).toEqual({ agents: 1 });
    expect(auth.authenticate(`Bearer ${OPS}`)).toEqual({ agentId: "ops", admin: true, authenticated: true });
    expect(() => auth.authenticate(`Bearer ${ALICE}`)).toThrow(/not valid/);
  });

  it("a reload of a broken file keeps the previous tokens in force", async () => {
    const file = path.join(dir, "tokens.json");
    await writeFile(file, JSON.stringify({ tokens: [{ agent: "alice", token: ALICE }] }));
    await chmod(file, 0o600);
    const auth = await Authenticator.load({ tokensFile: file, inlineTokens: undefined }, logger);
    await writeFile(file, "{ not json");
    await expect(auth.reload()).rejects.toBeInstanceOf(TokenListError);
    expect(auth.authenticate(`Bearer ${ALICE}`).agentId).toBe("alice");
  });

  it("refuses to start on a missing file or one token given to two agents across both sources", async () => {
    await expect(Authenticator.load({ tokensFile: path.join(dir, "missing.json"), inlineTokens: undefined }, logger)).rejects.toThrow(
      /missing\.json:\n {2}- cannot be read: ENOENT/,
    );
    const file = path.join(dir, "tokens.json");
    await writeFile(file, JSON.stringify({ tokens: [{ agent: "alice", token: ALICE }] }));
    await expect(Authenticator.load({ tokensFile: file, inlineTokens: `bob=${ALICE}` }, logger)).rejects.toThrow(
      'the same token is listed for "alice" and "bob"',
    );
  });
});
