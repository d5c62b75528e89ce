import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PermissionDeniedError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import { SecretStore } from "./secret-store.js";
import { type SkillSecretDeclaration, SecretsService, usedBy } from "./secrets-service.js";

const alice: Caller = { agentId: "alice", admin: false, authenticated: true };
const admin: Caller = { agentId: "ops", admin: true, authenticated: true };

describe("usedBy", () => {
  it("lists, for each name, the skills that declare it, sorted and once each", () => {
    const declarations: SkillSecretDeclaration[] = [
      { skill: "weather", secrets: ["API_KEY", "REGION"] },
      { skill: "ticket", secrets: ["API_KEY"] },
      { skill: "plain", secrets: [] },
      { skill: "ticket", secrets: ["API_KEY"] },
    ];
    expect(usedBy(["API_KEY", "REGION", "UNUSED"], declarations)).toEqual(
      new Map([
        ["API_KEY", ["ticket", "weather"]],
        ["REGION", ["weather"]],
      ]),
    );
  });
});

describe("SecretsService", () => {
  let root: string;
  let service: SecretsService;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "secrets-service-"));
    const store = await SecretStore.open({ home: root, keyFile: path.join(root, "secrets.key") });
    // The skills each caller can see: alice sees "weather" only.
    service = new SecretsService(store, {
      declaredFor: ({ caller }) => (caller.agentId === "alice" ? [{ skill: "weather", secrets: ["API_KEY"] }] : []),
    });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("answers the caller's own secrets with the visible skills that declare them", async () => {
    expect(await service.set({ name: "API_KEY", value: "sk-12345" }, { caller: alice })).toMatchObject({
      name: "API_KEY",
      usedBy: ["weather"],
    });
    await service.set({ name: "OTHER", value: "sk-67890" }, { caller: alice });
    expect(service.list({ caller: alice }).map(({ name, usedBy: users }) => ({ name, users }))).toEqual([
      { name: "API_KEY", users: ["weather"] },
      { name: "OTHER", users: [] },
    ]);
    expect(service.list({ caller: admin })).toEqual([]);
    await service.delete({ name: "OTHER" }, { caller: alice });
    expect(service.list({ caller: alice }).map((s) => s.name)).toEqual(["API_KEY"]);
  });

  it("rotates the key for admins only", async () => {
    await service.set({ name: "API_KEY", value: "sk-12345" }, { caller: alice });
    await expect(service.rotateKey({ caller: alice })).rejects.toBeInstanceOf(PermissionDeniedError);
    expect(await service.rotateKey({ caller: admin })).toEqual({ rotated: 1 });
  });
});
