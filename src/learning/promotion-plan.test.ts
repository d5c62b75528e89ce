import { describe, expect, it } from "vitest";
import { promotionPlan } from "./promotion-plan.js";

describe("promotion plan", () => {
  it("makes each value position a parameter named from its key, with the example values as the test payload", () => {
    const plan = promotionPlan(
      [
        { tool: "geo", shape: "{city:string}" },
        { tool: "hemisphere", shape: "{lat:number}" },
        { tool: "echo", shape: "{city:string}" },
      ],
      [{ city: "Oslo" }, { lat: 59.9 }, { city: "Lima" }],
    );
    expect(plan.steps.map((s) => [s.id, s.skill, JSON.parse(s.args)])).toEqual([
      ["s1_geo", "geo", { city: "{{params.city_1}}" }],
      ["s2_hemisphere", "hemisphere", { lat: "{{params.lat}}" }],
      ["s3_echo", "echo", { city: "{{params.city_3}}" }],
    ]);
    expect(JSON.parse(plan.testPayload)).toEqual({ city_1: "Oslo", lat: 59.9, city_3: "Lima" });
    expect(JSON.parse(plan.parametersSchema)).toEqual({
      type: "object",
      properties: { city_1: { type: "string" }, lat: { type: "number" }, city_3: { type: "string" } },
      required: ["city_1", "lat", "city_3"],
    });
  });
});
