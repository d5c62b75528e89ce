import { describe, expect, it } from "vitest";
import { PermissionDeniedError, SkillNotFoundError } from "../errors/index.js";
import { httpErrorOf, isLoopback } from "./http-status.js";

describe("isLoopback", () => {
  it("accepts 127.0.0.0/8 and ::1, in both notations, and nothing else", () => {
    for (const address of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"]) expect(isLoopback(address)).toBe(true);
    for (const address of ["10.0.0.1", "::ffff:10.0.0.1", "1270.0.0.1", "127.0.0.1.example", "fe80::1", undefined]) {
      expect(isLoopback(address)).toBe(false);
    }
  });
});

describe("httpErrorOf", () => {
  it("maps the domain's error kinds as the RPCs map them to gRPC statuses", () => {
    expect(httpErrorOf(new SkillNotFoundError("x"))).toMatchObject({ status: 404, unexpected: false });
    expect(httpErrorOf(new PermissionDeniedError("bob", "not yours")).status).toBe(403);
    expect(httpErrorOf(new Error("boom"))).toMatchObject({ status: 500, unexpected: true });
  });
});
