import { describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY } from "../control/index.js";
import { loadConfig } from "./load-config.js";

describe("loadConfig: whose outcome reports count (docs/learning.md#whose-reports-count)", () => {
  it("defaults to a quorum of 3 agents and 3 own reports, the health policy's defaults", () => {
    const policy = loadConfig({ HOME: "/home/agent" }).healthPolicy;
    expect(policy).toMatchObject({ reportQuorum: 3, ownRouteMinReports: 3 });
    expect(policy).toEqual(DEFAULT_HEALTH_POLICY);
  });

  it("reads both from the environment and refuses values below 1", () => {
    expect(
      loadConfig({ HOME: "/home/agent", SKILL_ENGINE_REPORT_QUORUM: "5", SKILL_ENGINE_OWN_ROUTE_MIN_REPORTS: "1" }).healthPolicy,
    ).toMatchObject({ reportQuorum: 5, ownRouteMinReports: 1 });
    expect(() => loadConfig({ SKILL_ENGINE_REPORT_QUORUM: "0" })).toThrow(/SKILL_ENGINE_REPORT_QUORUM/);
    expect(() => loadConfig({ SKILL_ENGINE_OWN_ROUTE_MIN_REPORTS: "0" })).toThrow(/SKILL_ENGINE_OWN_ROUTE_MIN_REPORTS/);
  });
});
