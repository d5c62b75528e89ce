import { describe, expect, it } from "vitest";
import { deprecationRisk, type RiskInput } from "./deprecation-risk.js";
import { DEFAULT_HEALTH_POLICY } from "./skill-health.js";

const healthy = (window: boolean[], over: Partial<RiskInput> = {}): RiskInput => ({
  status: "active",
  protected: false,
  failureCount: 0,
  usageCount: 100,
  healthWarning: "",
  window,
  ...over,
});

describe("deprecationRisk", () => {
  it("counts the failures that take a full window of successes below 40% and 30%", () => {
    const risk = deprecationRisk(healthy(Array<boolean>(20).fill(true)), DEFAULT_HEALTH_POLICY);
    // The streak rule comes first: 3 failures in a row degrade (and make it eligible for retirement).
    expect(risk.next).toEqual({ threshold: "degraded", failures: 3 });
    // 15 failures leave 5 successes in 20 (25% < 30%); 14 leave exactly 30%, which is not below.
    expect(risk.untilDeprecated).toBe(15);
  });

  it("needs the window to fill before the rate is judged", () => {
    const risk = deprecationRisk(healthy([]), DEFAULT_HEALTH_POLICY);
    expect(risk.untilDeprecated).toBe(20);
  });

  it("says when the active version has no run yet, so a view need not show every untouched skill's same distances", () => {
    expect(deprecationRisk(healthy([], { usageCount: 0 }), DEFAULT_HEALTH_POLICY).noRuns).toBe(true);
    expect(deprecationRisk(healthy([true]), DEFAULT_HEALTH_POLICY).noRuns).toBe(false);
    // Failures already counted against it (a grantee's runs of a pinned version, say) mean it has run.
    expect(deprecationRisk(healthy([], { failureCount: 1 }), DEFAULT_HEALTH_POLICY).noRuns).toBe(false);
  });

  it("is close to deprecation for a window already near 30%", () => {
    // 7 successes (the oldest) and 13 failures: 35%, warned. Each failure pushes a success out:
    // one more makes 6/20 = 30% (not below), two make 5/20 = 25%.
    const window = [...Array<boolean>(7).fill(true), ...Array<boolean>(13).fill(false)];
    const risk = deprecationRisk(healthy(window, { healthWarning: "low reliability" }), DEFAULT_HEALTH_POLICY);
    expect(risk.untilDeprecated).toBe(2);
  });

  it("says a protected skill is never deprecated, and a skill already eligible for retirement needs no failure", () => {
    const risk = deprecationRisk(
      healthy(Array<boolean>(20).fill(false), { protected: true, status: "degraded", failureCount: 20, healthWarning: "low reliability" }),
      DEFAULT_HEALTH_POLICY,
    );
    expect(risk.untilDeprecated).toBeUndefined();
    expect(risk.next).toBeUndefined();
    const unprotected = deprecationRisk(healthy([true], { status: "degraded", failureCount: 3 }), DEFAULT_HEALTH_POLICY);
    expect(unprotected.next).toEqual({ threshold: "retirement", failures: 0 });
  });

  it("has nothing to say about retired and deleted skills", () => {
    expect(deprecationRisk(healthy([], { status: "retired" }), DEFAULT_HEALTH_POLICY)).toEqual({
      next: undefined,
      untilDeprecated: undefined,
      noRuns: true,
    });
  });
});
