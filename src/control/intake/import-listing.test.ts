import { afterAll, describe, expect, it } from "vitest";
import { requireDebianPython } from "../../../test/support/require-debian-python.js";
import { CPythonSyntaxChecker, type ImportedModule, MAX_LISTED_IMPORTS } from "./python-syntax.js";

requireDebianPython();

/** The dependency scan's input comes from the intake parser itself (docs/packages.md#the-dependency-scan). */
describe("the parser process lists the code's imports", () => {
  const checker = new CPythonSyntaxChecker();
  afterAll(() => checker.close());

  async function importsOf(code: string): Promise<readonly ImportedModule[]> {
    const verdict = await checker.check(code);
    if (!verdict.ok) throw new Error(`expected ${JSON.stringify(code)} to parse: ${verdict.message}`);
    return verdict.imports ?? [];
  }

  it("lists `import a.b` and `from a.b import c` as written, each once at its first line, relative imports left out", async () => {
    const code = [
      "from __future__ import annotations", // 1
      "import os.path, yaml", // 2
      "from google.protobuf import json_format", // 3
      "from . import sibling", // 4
      "from .pkg import thing", // 5
      "import numpy as np", // 6
      "def f():", // 7
      "    import PIL.Image", // 8
      "    import yaml", // 9
      "class C:", // 10
      "    if True:", // 11
      "        from bs4 import BeautifulSoup", // 12
      "",
    ].join("\n");
    expect(await importsOf(code)).toEqual([
      { module: "__future__", line: 1, stdlib: true, optional: false },
      { module: "os.path", line: 2, stdlib: true, optional: false },
      { module: "yaml", line: 2, stdlib: false, optional: false },
      { module: "google.protobuf", line: 3, stdlib: false, optional: false },
      { module: "numpy", line: 6, stdlib: false, optional: false },
      { module: "PIL.Image", line: 8, stdlib: false, optional: false },
      { module: "bs4", line: 12, stdlib: false, optional: false },
    ]);
  });

  it("tells the standard library apart with the interpreter's own sys.stdlib_module_names", async () => {
    const imports = await importsOf("import tomllib, _thread, distutils, json, sqlite3.dbapi2\nimport pip, setuptools, requests\n");
    expect(Object.fromEntries(imports.map((i) => [i.module, i.stdlib]))).toEqual({
      tomllib: true,
      _thread: true,
      distutils: true,
      json: true,
      "sqlite3.dbapi2": true,
      pip: false,
      setuptools: false,
      requests: false,
    });
  });

  it("marks imports whose every occurrence has an ImportError fallback as optional", async () => {
    const code = `try:
    import ujson as json
except ImportError:
    import json
try:
    import numpy
    from lxml import etree
except (ValueError, ModuleNotFoundError):
    numpy = None
try:
    import yaml
except builtins.ImportError:
    yaml = None
try:
    import requests
except ValueError:
    pass
import numpy
`;
    const imports = await importsOf(code);
    expect(imports.map((i) => [i.module, i.line, i.optional])).toEqual([
      ["ujson", 2, true],
      ["json", 4, false],
      ["numpy", 6, false], // imported again, unguarded, at the end
      ["lxml", 7, true],
      ["yaml", 11, true],
      ["requests", 15, false],
    ]);
  });

  it("lists at most MAX_LISTED_IMPORTS names, the first ones by line", async () => {
    const code = Array.from({ length: MAX_LISTED_IMPORTS + 50 }, (_, i) => `import pkg_${i}\n`).join("");
    const imports = await importsOf(code);
    expect(imports).toHaveLength(MAX_LISTED_IMPORTS);
    expect(imports.at(-1)).toEqual({ module: `pkg_${MAX_LISTED_IMPORTS - 1}`, line: MAX_LISTED_IMPORTS, stdlib: false, optional: false });
  });

  it("lists nothing for code that does not parse, and keeps the checker's verdicts as they were", async () => {
    expect(await checker.check("import yaml\nx = = 1\n")).toEqual({
      ok: false,
      message: "invalid syntax",
      line: 2,
      column: 5,
      atEndOfInput: false,
    });
    expect(await checker.check("# only a comment\n")).toEqual({ ok: true, inert: true, imports: [] });
  });
});
