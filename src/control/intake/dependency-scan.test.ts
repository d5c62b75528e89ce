import { describe, expect, it } from "vitest";
import {
  declaredProvider,
  localModulesOf,
  missingDependencyWarnings,
  normalizeDistributionName,
  requirementName,
  type DependencyScanInput,
} from "./dependency-scan.js";
import { debianFormOf, IMPORT_ALIASES, providerOf } from "./import-aliases.js";
import { missingModuleCause, missingModuleOf } from "./missing-module.js";
import type { ImportedModule } from "./python-syntax.js";

const NOTHING = { requirements: [], systemPackages: [] } as const;

function imported(module: string, line: number, extra: Partial<ImportedModule> = {}): ImportedModule {
  return { module, line, stdlib: false, optional: false, ...extra };
}

function scan(imports: ImportedModule[], input: Partial<Omit<DependencyScanInput, "imports">> = {}) {
  return missingDependencyWarnings({ ...NOTHING, localModules: [], ...input, imports });
}

describe("the alias table: which package provides a module", () => {
  it("names the distribution and the Debian package of the common modules whose names differ", () => {
    const expected: Record<string, [string, string | undefined]> = {
      yaml: ["PyYAML", "python3-yaml"],
      PIL: ["Pillow", "python3-pil"],
      cv2: ["opencv-python-headless", "python3-opencv"],
      sklearn: ["scikit-learn", "python3-sklearn"],
      bs4: ["beautifulsoup4", "python3-bs4"],
      dateutil: ["python-dateutil", "python3-dateutil"],
      "google.protobuf": ["protobuf", "python3-protobuf"],
      Crypto: ["pycryptodome", undefined],
      jwt: ["PyJWT", "python3-jwt"],
      fitz: ["PyMuPDF", "python3-fitz"],
      skimage: ["scikit-image", "python3-skimage"],
      OpenSSL: ["pyOpenSSL", "python3-openssl"],
    };
    for (const [module, [pip, debian]] of Object.entries(expected)) {
      expect(providerOf(module), module).toEqual({ module, pip: expect.arrayContaining([pip]), debian });
      expect(providerOf(module).pip[0], module).toBe(pip);
    }
    expect(Object.keys(IMPORT_ALIASES).length).toBeGreaterThanOrEqual(40);
  });

  it("matches the longest listed prefix of a dotted name, and falls back to the module's own name", () => {
    expect(providerOf("google.protobuf.json_format")).toMatchObject({ module: "google.protobuf", pip: ["protobuf"] });
    expect(providerOf("PIL.Image")).toMatchObject({ module: "PIL", pip: ["Pillow"] });
    expect(providerOf("google.cloud.storage")).toEqual({ module: "google", pip: ["google"], debian: "python3-google" });
    expect(providerOf("typing_extensions")).toEqual({
      module: "typing_extensions",
      pip: ["typing_extensions"],
      debian: "python3-typing-extensions",
    });
    // Not fooled by the prototype of a plain object.
    expect(providerOf("constructor")).toEqual({ module: "constructor", pip: ["constructor"], debian: "python3-constructor" });
    expect(debianFormOf("Levenshtein.fuzz")).toBe("python3-levenshtein");
  });
});

describe("what a declared package provides", () => {
  it("normalises distribution names as PEP 503 does and reads the name of a PEP 508 specifier", () => {
    expect(normalizeDistributionName("Python_Dateutil")).toBe("python-dateutil");
    expect(normalizeDistributionName("ruamel.yaml")).toBe("ruamel-yaml");
    expect(normalizeDistributionName("a-._b")).toBe("a-b");
    expect(requirementName("PyYAML==6.0.1")).toBe("PyYAML");
    expect(requirementName("  requests[socks] >= 2.31 ; python_version > '3.8'")).toBe("requests");
    expect(requirementName("pkg @ file:///wheels/pkg-1.0-py3-none-any.whl")).toBe("pkg");
    expect(requirementName("==1.0")).toBe("");
  });

  it("a requirement provides the module when it names the alias's distribution or the module itself, normalised", () => {
    const yaml = providerOf("yaml");
    expect(declaredProvider(yaml, { requirements: ["pyyaml>=6"], systemPackages: [] })).toBe("pyyaml");
    expect(declaredProvider(yaml, { requirements: ["PyYAML==6.0.1"], systemPackages: [] })).toBe("PyYAML");
    expect(declaredProvider(yaml, { requirements: ["yaml"], systemPackages: [] })).toBe("yaml");
    expect(declaredProvider(yaml, { requirements: ["ruamel.yaml"], systemPackages: [] })).toBeUndefined();
    expect(declaredProvider(providerOf("dateutil"), { requirements: ["Python_Dateutil>=2.8"], systemPackages: [] })).toBe(
      "Python_Dateutil",
    );
    expect(declaredProvider(providerOf("cv2"), { requirements: ["opencv-python"], systemPackages: [] })).toBe("opencv-python");
    expect(declaredProvider(providerOf("typing_extensions"), { requirements: ["typing-extensions"], systemPackages: [] })).toBe(
      "typing-extensions",
    );
  });

  it("a Debian package provides it when it is the alias's Debian form or python3-<module>", () => {
    expect(declaredProvider(providerOf("yaml"), { requirements: [], systemPackages: ["python3-yaml"] })).toBe("python3-yaml");
    expect(declaredProvider(providerOf("PIL"), { requirements: [], systemPackages: ["python3-pil:amd64"] })).toBe("python3-pil:amd64");
    expect(declaredProvider(providerOf("sklearn"), { requirements: [], systemPackages: ["python3-sklearn"] })).toBe("python3-sklearn");
    expect(declaredProvider(providerOf("numpy"), { requirements: [], systemPackages: ["python3-numpy=1:1.24.2-1"] })).toBe(
      "python3-numpy=1:1.24.2-1",
    );
    expect(declaredProvider(providerOf("yaml"), { requirements: [], systemPackages: ["python3-numpy"] })).toBeUndefined();
    // Debian's python3-pycryptodome installs Cryptodome, not Crypto.
    expect(declaredProvider(providerOf("Crypto"), { requirements: [], systemPackages: ["python3-pycryptodome"] })).toBeUndefined();
    expect(declaredProvider(providerOf("Cryptodome"), { requirements: [], systemPackages: ["python3-pycryptodome"] })).toBe(
      "python3-pycryptodome",
    );
  });

  it("a skill's own modules are its .py files' stems and the folders that hold them", () => {
    expect([...localModulesOf(["helper.py", "SKILL.md", "scripts/main.py", "lib/util/text.py", "data/x.json"])].sort()).toEqual([
      "helper",
      "lib",
      "main",
      "scripts",
      "text",
      "util",
    ]);
  });
});

describe("the scan's warnings", () => {
  it("warn once per undeclared module, naming it, its line and what to declare", () => {
    const warnings = scan([
      imported("json", 1, { stdlib: true }),
      imported("yaml", 2),
      imported("PIL.Image", 3),
      imported("yaml.constructor", 9),
    ]);
    expect(warnings).toEqual([
      {
        ruleId: "missing-dependency",
        category: "dependencies",
        severity: "warning",
        message:
          'imports "yaml", which no declared package provides: declare requirements ["PyYAML"] (or system_packages ["python3-yaml"]); see docs/packages.md',
        line: 2,
      },
      {
        ruleId: "missing-dependency",
        category: "dependencies",
        severity: "warning",
        message:
          'imports "PIL", which no declared package provides: declare requirements ["Pillow"] (or system_packages ["python3-pil"]); see docs/packages.md',
        line: 3,
      },
    ]);
  });

  it("name only the requirement when Debian has no package for the module, and quote the file of a folder", () => {
    const [warning] = scan([imported("pptx", 4)], { file: "scripts/slides.py" });
    expect(warning?.message).toBe(
      'scripts/slides.py imports "pptx", which no declared package provides: declare requirements ["python-pptx"]; see docs/packages.md',
    );
    expect(warning?.line).toBe(4);
  });

  it("stay silent for the standard library, optional imports, the skill's own modules and declared packages", () => {
    const imports = [
      imported("os.path", 1, { stdlib: true }),
      imported("ujson", 2, { optional: true }),
      imported("helper", 3),
      imported("yaml", 4),
      imported("numpy", 5),
      imported("google.protobuf.json_format", 6),
    ];
    expect(
      scan(imports, {
        localModules: new Set(["helper"]),
        requirements: ["PyYAML==6.0.1", "protobuf>=4"],
        systemPackages: ["python3-numpy"],
      }),
    ).toEqual([]);
    expect(scan(imports).map((w) => w.line)).toEqual([3, 4, 5, 6]);
  });
});

describe("a test run that failed on a missing module", () => {
  const run = (errorSummary: string, extra: { timedOut?: boolean; oomKilled?: boolean } = {}) => ({
    errorSummary,
    timedOut: false,
    oomKilled: false,
    ...extra,
  });

  it("is recognised by its one-line cause only", () => {
    expect(missingModuleOf(run("ModuleNotFoundError: No module named 'yaml'"))).toBe("yaml");
    expect(missingModuleOf(run("ModuleNotFoundError: No module named 'google.protobuf'"))).toBe("google.protobuf");
    // As the entry script's traceback gives it: led by the skill's own line.
    expect(missingModuleOf(run("line 3: ModuleNotFoundError: No module named 'yaml'"))).toBe("yaml");
    expect(missingModuleOf(run("line x: ModuleNotFoundError: No module named 'yaml'"))).toBeUndefined();
    expect(missingModuleOf(run("ImportError: cannot import name 'x' from 'json'"))).toBeUndefined();
    expect(missingModuleOf(run("RuntimeError: need yaml: No module named 'yaml'"))).toBeUndefined();
    expect(missingModuleOf(run("ModuleNotFoundError: No module named 'yaml'", { timedOut: true }))).toBeUndefined();
  });

  it("answers with the module and the field to declare it in", () => {
    expect(missingModuleCause("yaml", NOTHING)).toBe(
      'the test run failed: module "yaml" is not installed in the sandbox; declare it in requirements (PyYAML) or ' +
        "system_packages (python3-yaml) — the sandbox has Python's standard library only (docs/packages.md)",
    );
    expect(missingModuleCause("pptx", { requirements: ["PyYAML"], systemPackages: [] })).toBe(
      'the test run failed: module "pptx" is not installed in the sandbox; declare it in requirements (python-pptx) — ' +
        "the sandbox has Python's standard library and the declared packages only (docs/packages.md)",
    );
    expect(missingModuleCause("yaml.cyaml", { requirements: ["PyYAML==6.0.1"], systemPackages: [] })).toBe(
      'the test run failed: module "yaml.cyaml" could not be imported although PyYAML, which provides "yaml", is declared; ' +
        "check the module's name against the package's version (docs/packages.md)",
    );
  });
});
