import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../errors/index.js";
import { environmentId } from "./environment-id.js";
import { normalizePackageDeclarations, normalizeRequirements, normalizeSystemPackages } from "./package-declarations.js";

function refusal(work: () => unknown): InvalidArgumentError {
  try {
    work();
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error;
    throw error;
  }
  throw new Error("expected an InvalidArgumentError");
}

describe("requirements", () => {
  it("normalises names (PEP 503), extras and specifiers, sorts and de-duplicates", () => {
    expect(
      normalizeRequirements([
        "PyYAML==6.0.1",
        "python_dateutil >= 2.8",
        "Requests[Security,socks] >=2.0, <3",
        "pyyaml==6.0.1",
        "zope.interface",
        "foo~=1.4.2",
        "bar==1.*",
        "baz===weird-1.0",
      ]),
    ).toEqual([
      "bar==1.*",
      "baz===weird-1.0",
      "foo~=1.4.2",
      "python-dateutil>=2.8",
      "pyyaml==6.0.1",
      "requests[security,socks]<3,>=2.0",
      "zope-interface",
    ]);
  });

  it.each([
    ["-r /etc/passwd", "installer options"],
    ["--index-url=http://evil.example/simple", "installer options"],
    ["pkg @ https://evil.example/pkg.whl", "direct reference"],
    ["https://evil.example/pkg.whl", "direct reference"],
    ["./local/pkg", "a path"],
    ["/tmp/pkg.whl", "a path"],
    ["pkg==1.0 --hash=sha256:abcd", "installer options"],
    ["pkg==1.0 #sha256=abcd", "hash"],
    ["pkg==1.0\n--index-url http://x", "printable ASCII"],
    ["pkg\t==1.0", "printable ASCII"],
    ["pkg\u00a0==1.0", "printable ASCII"],
    ["pkg; python_version < '3.8'", "environment marker"],
    ["pkg (>=1.0)", "parentheses"],
    ["pkg=1.0", "not a version specifier"],
    ["pkg==not a version", "not a PEP 440 version"],
    ["pkg~=1", "at least two parts"],
    ["pkg>=1.*", "not a PEP 440 version"],
    ["", "is empty"],
    ["   ", "not a requirement"],
  ])("refuses %j (%s)", (text, rule) => {
    const error = refusal(() => normalizeRequirements(["ok-pkg", text]));
    expect(error.field).toBe("requirements[1]");
    expect(error.message).toContain(rule);
  });

  it("refuses more than 64 requirements and one longer than 200 characters", () => {
    expect(refusal(() => normalizeRequirements(Array.from({ length: 65 }, (_, i) => `p${i}`))).message).toContain("at most 64");
    expect(refusal(() => normalizeRequirements([`a${"b".repeat(200)}`])).message).toContain("longer than 200");
  });
});

describe("Debian packages", () => {
  it("accepts Debian names, sorted and de-duplicated", () => {
    expect(normalizeSystemPackages(["python3-yaml", "libstdc++6", "python3-numpy", "python3-yaml", "g++"])).toEqual([
      "g++",
      "libstdc++6",
      "python3-numpy",
      "python3-yaml",
    ]);
  });

  it.each([
    ["Python3-Yaml", "not a Debian package name"],
    ["-o", "not a Debian package name"],
    ["a", "not a Debian package name"],
    ["python3-yaml=6.0", "not a Debian package name"],
    ["python3-yaml/bookworm", "not a Debian package name"],
    ["python3-yaml-", "removal"],
    ["pkg name", "not a Debian package name"],
    [`p${"x".repeat(63)}`, "not a Debian package name"],
  ])("refuses %j (%s)", (name, rule) => {
    const error = refusal(() => normalizeSystemPackages(["python3-yaml", name]));
    expect(error.field).toBe("system_packages[1]");
    expect(error.message).toContain(rule);
  });

  it("refuses more than 32", () => {
    expect(refusal(() => normalizeSystemPackages(Array.from({ length: 33 }, (_, i) => `pkg${i}`))).field).toBe("system_packages");
  });
});

describe("environment ids", () => {
  it("are the same for the same set however it was written, and differ by image and by set", () => {
    const a = normalizePackageDeclarations({ requirements: ["PyYAML==6.0.1", "attrs"], systemPackages: ["python3-numpy"] });
    const b = normalizePackageDeclarations({ requirements: ["attrs", "pyyaml==6.0.1", "attrs"], systemPackages: ["python3-numpy"] });
    expect(environmentId("sha256:image-1", a)).toBe(environmentId("sha256:image-1", b));
    expect(environmentId("sha256:image-1", a)).toMatch(/^[0-9a-f]{32}$/);
    expect(environmentId("sha256:image-2", a)).not.toBe(environmentId("sha256:image-1", a));
    const c = normalizePackageDeclarations({ requirements: ["attrs", "pyyaml==6.0.1"] });
    expect(environmentId("sha256:image-1", c)).not.toBe(environmentId("sha256:image-1", a));
    // A requirement moved to the other list is a different set.
    expect(environmentId("sha256:i", normalizePackageDeclarations({ requirements: ["python3-numpy"] }))).not.toBe(
      environmentId("sha256:i", normalizePackageDeclarations({ systemPackages: ["python3-numpy"] })),
    );
  });
});
