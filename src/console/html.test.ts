import { describe, expect, it } from "vitest";
import { markup, jsonBlock, trusted } from "./html.js";

describe("markup", () => {
  it("escapes every interpolated value, in text and in attributes", () => {
    const name = `<script>alert("x")</script>&'`;
    expect(markup`<a title="${name}">${name}</a>`.text).toBe(
      '<a title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</a>',
    );
  });

  it("keeps nested markup, joins arrays and drops empty values", () => {
    const items = ["a<", "b"].map((x) => markup`<li>${x}</li>`);
    expect(markup`<ul>${items}${undefined}${false}${0}</ul>`.text).toBe("<ul><li>a&lt;</li><li>b</li>0</ul>");
    expect(markup`${trusted("<b>")}`.text).toBe("<b>");
  });

  it("writes JSON that cannot close its script block", () => {
    const block = jsonBlock("d", { s: "</script><!--" }).text;
    expect(block).not.toContain("</script><");
    expect(JSON.parse(block.slice(block.indexOf(">") + 1, block.lastIndexOf("<")))).toEqual({ s: "</script><!--" });
  });
});
