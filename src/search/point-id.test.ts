import { describe, expect, it } from "vitest";
import { SKILL_POINT_NAMESPACE, skillPointId } from "./point-id.js";

describe("skillPointId", () => {
  it("is RFC 9562 UUIDv5 (checked against the RFC's DNS-namespace example)", () => {
    expect(skillPointId("www.example.com", "6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe("2ed6657d-e927-568b-95e1-2665a8aea6a2");
  });

  it("derives the namespace itself as documented", () => {
    expect(skillPointId("skill-engine/acquired_skill", "6ba7b811-9dad-11d1-80b4-00c04fd430c8")).toBe(SKILL_POINT_NAMESPACE);
  });

  it("is deterministic, distinct per name and a valid v5 UUID", () => {
    expect(skillPointId("parse_csv")).toBe(skillPointId("parse_csv"));
    expect(skillPointId("parse_csv")).not.toBe(skillPointId("parse_csvs"));
    expect(skillPointId("parse_csv")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
