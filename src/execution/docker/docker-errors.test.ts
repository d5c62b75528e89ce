import { describe, expect, it } from "vitest";
import { InvalidArgumentError, SandboxUnavailableError } from "../../errors/index.js";
import { fromDockerError, isAlreadyGone } from "./docker-errors.js";

const context = { image: "skill-engine-sandbox:latest", action: "start a sandbox container" };

describe("fromDockerError", () => {
  it("maps an unreachable engine to UNAVAILABLE with what to do", () => {
    const error = fromDockerError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED", syscall: "connect" }), context);
    expect(error.kind).toBe("unavailable");
    expect(error.message).toMatch(/cannot be reached.*npm run setup/);
    expect((error as SandboxUnavailableError).fault).toBe("engine-unreachable");
  });

  it("maps a missing sandbox image to UNAVAILABLE naming the image", () => {
    const error = fromDockerError({ statusCode: 404, json: { message: "No such image: skill-engine-sandbox:latest" } }, context);
    expect(error.kind).toBe("unavailable");
    expect(error.message).toContain("skill-engine-sandbox:latest is missing");
    expect((error as SandboxUnavailableError).fault).toBe("image-missing");
  });

  it("maps a container removed from outside to an infrastructure fault, not an internal error", () => {
    const error = fromDockerError({ statusCode: 404, json: { message: "No such container: 0123abcd" } }, context);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as SandboxUnavailableError).fault).toBe("container-lost");
  });

  it("maps a full or read-only disk under the sandbox directory to an infrastructure fault", () => {
    for (const code of ["ENOSPC", "EDQUOT", "EROFS"]) {
      const error = fromDockerError(Object.assign(new Error(`${code}: no space, mkdir '/x'`), { code, path: "/x" }), context);
      expect(error.kind).toBe("unavailable");
      expect((error as SandboxUnavailableError).fault).toBe("host-disk-full");
      expect(error.message).toContain("SKILL_ENGINE_SANDBOX_DIR");
    }
  });

  it("keeps filesystem errors apart from engine errors", () => {
    const error = fromDockerError(
      Object.assign(new Error("EACCES: permission denied, mkdir '/x'"), { code: "EACCES", path: "/x" }),
      context,
    );
    expect(error.kind).toBe("internal");
  });

  it("passes service errors through untouched", () => {
    const original = new InvalidArgumentError("payload", "bad");
    expect(fromDockerError(original, context)).toBe(original);
  });
});

describe("isAlreadyGone", () => {
  it("treats already removed or already stopped containers as success", () => {
    expect(isAlreadyGone({ statusCode: 404 })).toBe(true);
    expect(isAlreadyGone({ statusCode: 409, json: { message: "removal of container x is already in progress" } })).toBe(true);
    expect(isAlreadyGone({ statusCode: 409, json: { message: "Container x is not running" } })).toBe(true);
    expect(isAlreadyGone({ statusCode: 500 })).toBe(false);
  });
});
