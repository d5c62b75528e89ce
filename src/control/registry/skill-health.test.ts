import { describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, evaluateHealth, type HealthInput, quantile, retirementReasons, windowRate } from "./skill-health.js";

const policy = DEFAULT_HEALTH_POLICY;
const healthy: HealthInput = { status: "active", protected: false, failureCount: 0, window: { samples: 0, successes: 0 } };
const window = (successes: number, samples = 20) => ({ samples, successes });

describe("consecutive failures", () => {
  it("2 consecutive failures keep a skill active, 3 degrade it", () => {
    expect(evaluateHealth({ ...healthy, failureCount: 2 }, policy).status).toBe("active");
    const degraded = evaluateHealth({ ...healthy, failureCount: 3 }, policy);
    expect(degraded).toMatchObject({ status: "degraded", reason: "3 consecutive failed invocations" });
  });

  it("a success (failure count back to 0) makes a degraded skill active again", () => {
    expect(evaluateHealth({ ...healthy, status: "degraded", failureCount: 0 }, policy).status).toBe("active");
  });
});

describe("rolling window", () => {
  it("judges the rate only once the window holds enough samples", () => {
    expect(windowRate(window(0, 19), policy)).toBeUndefined();
    expect(windowRate(window(5, 20), policy)).toBe(0.25);
    expect(evaluateHealth({ ...healthy, window: window(0, 19) }, policy).status).toBe("active");
  });

  it("deprecates below 30% and not at or above it (29% vs 31%)", () => {
    const wide = { ...policy, windowSize: 100, minWindowSamples: 100 };
    expect(evaluateHealth({ ...healthy, window: window(29, 100) }, wide).status).toBe("deprecated");
    expect(evaluateHealth({ ...healthy, window: window(31, 100) }, wide).status).toBe("active");
    expect(evaluateHealth({ ...healthy, window: window(30, 100) }, wide).status).toBe("active");
    // Over the default window of 20: 5/20 = 25% deprecates, 6/20 = 30% does not.
    expect(evaluateHealth({ ...healthy, window: window(5) }, policy).reason).toBe(
      "success rate 25% over the last 20 invocations is below 30%",
    );
    expect(evaluateHealth({ ...healthy, window: window(6) }, policy).status).toBe("active");
  });

  it("warns below 40% and not at 40%", () => {
    expect(evaluateHealth({ ...healthy, window: window(7) }, policy).warning).toBe(
      "low reliability: success rate 35% over the last 20 invocations is below 40%",
    );
    expect(evaluateHealth({ ...healthy, window: window(8) }, policy).warning).toBe("");
  });

  it("a protected skill is never deprecated, but still degrades and still carries the warning", () => {
    const pinned = evaluateHealth({ ...healthy, protected: true, failureCount: 5, window: window(0) }, policy);
    expect(pinned.status).toBe("degraded");
    expect(pinned.warning).not.toBe("");
  });

  it("deprecation outranks degradation, and a recovered window makes the skill active again", () => {
    expect(evaluateHealth({ ...healthy, failureCount: 4, window: window(2) }, policy).status).toBe("deprecated");
    expect(evaluateHealth({ ...healthy, status: "deprecated", window: window(12) }, policy).status).toBe("active");
  });

  it("never changes a retired or deleted skill", () => {
    expect(evaluateHealth({ ...healthy, status: "retired", window: window(0) }, policy).status).toBe("retired");
    expect(evaluateHealth({ ...healthy, status: "deleted", failureCount: 9 }, policy).status).toBe("deleted");
  });
});

describe("retirement rule", () => {
  const skill = { status: "active" as const, protected: false, usageCount: 0, failureCount: 0 };

  it("never retires a system skill: an admin retires or deletes it explicitly", () => {
    expect(retirementReasons({ ...skill, failureCount: 9, usageCount: 50, system: true }, policy)).toEqual([]);
  });

  it("retires at failure_count ≥ 3, naming every clause that matched", () => {
    expect(retirementReasons({ ...skill, failureCount: 2 }, policy)).toEqual([]);
    expect(retirementReasons({ ...skill, failureCount: 3, usageCount: 50 }, policy)).toEqual(["failure_count 3 ≥ 3"]);
    expect(retirementReasons({ ...skill, failureCount: 5, usageCount: 9 }, policy)).toEqual([
      "failure_count 5 ≥ 3",
      "failure_count 5 ≥ 5 and usage_count 9 < 10",
    ]);
    expect(retirementReasons({ ...skill, failureCount: 5, usageCount: 10 }, policy)).toEqual(["failure_count 5 ≥ 3"]);
  });

  it("keeps both clauses apart when the first is configured away", () => {
    const second = { ...policy, retireAtFailures: 100 };
    expect(retirementReasons({ ...skill, failureCount: 5, usageCount: 9 }, second)).toEqual(["failure_count 5 ≥ 5 and usage_count 9 < 10"]);
    expect(retirementReasons({ ...skill, failureCount: 5, usageCount: 10 }, second)).toEqual([]);
  });

  it("never retires a protected, retired or deleted skill", () => {
    expect(retirementReasons({ ...skill, failureCount: 9, protected: true }, policy)).toEqual([]);
    expect(retirementReasons({ ...skill, failureCount: 9, status: "retired" }, policy)).toEqual([]);
    expect(retirementReasons({ ...skill, failureCount: 9, status: "deleted" }, policy)).toEqual([]);
  });
});

describe("quantile", () => {
  it("uses the nearest rank", () => {
    expect(quantile([], 0.5)).toBeUndefined();
    expect(quantile([3, 1, 2], 0.5)).toBe(2);
    expect(
      quantile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        0.95,
      ),
    ).toBe(95);
  });
});
