import { afterAll, describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../errors/index.js";
import { normalizeSkillCode } from "./normalize-code.js";
import { CPythonSyntaxChecker, type PythonSyntaxChecker, type SyntaxVerdict } from "./python-syntax.js";
import { requireDebianPython } from "../../../test/support/require-debian-python.js";

const SKILL = `import json
import sys


def main() -> None:
    """Greet whoever the payload names."""
    payload = json.loads(sys.argv[1])
    name = payload.get("name", "world")
    if len(name) < 64 and name != "":
        print(f"Hello, {name}!")


if __name__ == "__main__":
    main()
`;

/** Counts parses, to hold normalization to "one parse for clean code". */
class CountingChecker implements PythonSyntaxChecker {
  parses = 0;
  constructor(private readonly inner: PythonSyntaxChecker) {}
  check(code: string): Promise<SyntaxVerdict> {
    this.parses++;
    return this.inner.check(code);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const SKILL_ENTITIES = SKILL.match(/[&<>"']/g)?.length ?? 0;
const SKILL_LINES = SKILL.split("\n").length - 1;

const escapeHtml = (code: string) =>
  code.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

requireDebianPython();

describe("normalizeSkillCode", () => {
  const python = new CPythonSyntaxChecker();
  afterAll(() => python.close());

  async function normalize(raw: string) {
    const checker = new CountingChecker(python);
    const result = await normalizeSkillCode(raw, checker);
    return { ...result, parses: checker.parses };
  }

  async function diagnosis(raw: string): Promise<string> {
    const error: unknown = await normalizeSkillCode(raw, python).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).field).toBe("code");
    return (error as InvalidArgumentError).message;
  }

  describe("clean code", () => {
    const tricky = {
      "an entity in a string": 'print("1 &lt; 2", "&amp;", "&#39;")\n',
      "a CDATA closer in a comment": "x = [[1]]  # ]]> closes nothing here\n",
      "CDATA markers in strings": 'XML = "<![CDATA[" + "body" + "]]>"\n',
      "triple backticks in a docstring": 'def f():\n    """Use it like this:\n\n```python\nf()\n```\n    """\n    return 1\n',
      "\\n escapes in strings": 'print("a\\nb", \'c\\td\', r"\\n")\nlines = text.split("\\n")\n',
      "a one-liner with \\n in a string": 'print("line one\\nline two")',
      "an escaped quote in a string": 'print("say \\"hi\\"")\n',
      "a leading blank line and indented continuation": "\nx = (\n    1,\n)\n",
      "CRLF line endings": "import os\r\nprint(os.sep)\r\n",
      "a typical skill": SKILL,
    };
    for (const [name, code] of Object.entries(tricky)) {
      it(`returns code with ${name} byte for byte, after one parse`, async () => {
        expect(await normalize(code)).toMatchObject({ code, normalizations: [], parses: 1 });
      });
    }

    it("leaves valid code that does nothing alone when no repair makes a program of it", async () => {
      const comment = "# TODO: write the skill\n";
      expect(await normalize(comment)).toMatchObject({ code: comment, normalizations: [] });
      const docstring = '"""Nothing here yet; see &lt;docs&gt;."""\n';
      expect(await normalize(docstring)).toMatchObject({ code: docstring, normalizations: [] });
    });
  });

  describe("CDATA envelopes", () => {
    it("strips an envelope", async () => {
      expect(await normalize(`<![CDATA[${SKILL}]]>`)).toMatchObject({
        code: SKILL,
        normalizations: ["stripped a CDATA envelope"],
        parses: 2,
      });
    });

    it("strips an envelope with whitespace around it, keeping the code's own whitespace", async () => {
      const result = await normalize(`\n  <![CDATA[\n${SKILL}]]>  \n`);
      expect(result.code).toBe(`\n${SKILL}`);
      expect(result.normalizations).toEqual(["stripped a CDATA envelope"]);
    });

    it("strips an envelope inside a leaked tool-call tag", async () => {
      const raw = `<invoke name="create_skill">\n<parameter name="python_code"><![CDATA[${SKILL}]]></parameter>\n</invoke>`;
      expect(await normalize(raw)).toMatchObject({ code: SKILL, normalizations: ["stripped a CDATA envelope"] });
    });

    it("rejoins a ]]> that an XML writer split across two sections", async () => {
      const code = 'END = "]]>"\nprint(END)\n';
      const raw = `<![CDATA[${code.replace("]]>", "]]]]><![CDATA[>")}]]>`;
      expect(await normalize(raw)).toMatchObject({ code, normalizations: ["stripped a CDATA envelope"] });
    });

    it("drops a stray closer whose opener was eaten", async () => {
      expect(await normalize(`${SKILL}]]>\n`)).toMatchObject({ code: `${SKILL}\n`, normalizations: ["removed a stray CDATA closer ]]>"] });
    });

    it("strips a leaked tag without CDATA", async () => {
      const result = await normalize(`<parameter name="code">${SKILL}</parameter>`);
      expect(result).toMatchObject({ code: SKILL, normalizations: ["stripped leaked XML tags (<parameter> </parameter>)"] });
    });
  });

  describe("HTML entities", () => {
    it("decodes named and numeric entities, counting them", async () => {
      const code =
        "import sys\nname = sys.argv[1] if len(sys.argv) > 1 else \"world\"\nif len(name) < 64 and name != '':\n    print(name)\n";
      const raw = code
        .replace("> 1", "&gt; 1")
        .replace('"world"', "&quot;world&#x22;")
        .replace("< 64", "&#60; 64")
        .replace("!= ''", "!= &#39;&apos;");
      expect(await normalize(raw)).toMatchObject({ code, normalizations: ["decoded 6 HTML entities"], parses: 2 });
    });

    it("decodes exactly once, so code that shows an entity keeps it", async () => {
      const code = 'html = "&lt;b&gt;"\nif 1 < 2:\n    print(html)\n';
      expect(await normalize(escapeHtml(code))).toMatchObject({ code, normalizations: ["decoded 5 HTML entities"] });
    });

    it("decodes twice when the code was escaped twice", async () => {
      const code = "if 1 < 2 and 3 > 2:\n    print('ok')\n";
      const result = await normalize(escapeHtml(escapeHtml(code)));
      expect(result.code).toBe(code);
      expect(result.normalizations).toHaveLength(2);
    });
  });

  describe("markdown fences", () => {
    for (const tag of ["python", "py", "python3", ""]) {
      it(`extracts a \`\`\`${tag} block`, async () => {
        const result = await normalize("```" + tag + "\n" + SKILL + "```");
        expect(result).toMatchObject({
          code: SKILL,
          normalizations: [`extracted code from a markdown fence (${tag || "no language tag"})`],
          parses: 2,
        });
      });
    }

    it("extracts a ~~~ block with prose before and after", async () => {
      const raw = `Sure! Here is the skill:\n\n~~~python\n${SKILL}~~~\n\nCall it with {"name": "Ada"}.\n`;
      expect(await normalize(raw)).toMatchObject({ code: SKILL, normalizations: ["extracted code from a markdown fence (python)"] });
    });

    it("prefers the python-tagged block to a larger shell example", async () => {
      const shell = "```bash\n" + 'python3 skill.py \'{"name": "Ada"}\'\n'.repeat(30) + "```\n";
      const raw = `Run it:\n${shell}\nThe code:\n\`\`\`python\n${SKILL}\`\`\`\n`;
      const result = await normalize(raw);
      expect(result.code).toBe(SKILL);
      expect(result.normalizations).toEqual(["extracted code from a markdown fence (python; block 2 of 2)"]);
    });

    it("takes the block that parses when the largest python block does not", async () => {
      const raw = "```python\n" + SKILL + "def broken(:\n```\n\nFixed:\n```python\n" + SKILL + "```\n";
      const result = await normalize(raw);
      expect(result.code).toBe(SKILL);
      expect(result.normalizations).toEqual(["extracted code from a markdown fence (python; block 2 of 2)"]);
    });

    it("keeps fences inside the code's own docstrings", async () => {
      const code = 'def f():\n    """Example:\n\n```\nf()\n```\n    """\n    return 1\n';
      const result = await normalize("```python\n" + code + "```\n");
      expect(result.code).toBe(code);
    });

    it("handles a fence closed at the end of the last code line, or never closed", async () => {
      const inline = await normalize("```python\n" + SKILL.trimEnd() + "```\nHope this helps!");
      expect(inline.code).toBe(SKILL.trimEnd());
      const unclosed = await normalize("```python\n" + SKILL);
      expect(unclosed).toMatchObject({
        code: SKILL,
        normalizations: ["extracted code from a markdown fence (python; the fence was never closed)"],
      });
    });

    it("removes the indentation of a fence nested in a list", async () => {
      const indented = SKILL.split("\n")
        .map((line) => (line ? `   ${line}` : line))
        .join("\n");
      const result = await normalize(`1. Save this:\n\n   \`\`\`python\n${indented}   \`\`\`\n`);
      expect(result.code).toBe(SKILL);
    });
  });

  describe("escaped newlines", () => {
    it("decodes a JSON string literal, though Python would accept it as a string", async () => {
      const result = await normalize(JSON.stringify(SKILL));
      expect(result).toMatchObject({
        code: SKILL,
        normalizations: ["decoded a JSON string literal (the whole code was one JSON-encoded string)"],
        parses: 2,
      });
    });

    it("undoes JSON string escaping without the quotes", async () => {
      const code = 'import re\nprint(re.sub(r"\\s+", " ", "a\\tb"), "x\\ny")\n';
      const result = await normalize(JSON.stringify(code).slice(1, -1));
      expect(result.code).toBe(code);
      expect(result.normalizations).toEqual(["undid JSON string escaping (2 literal \\n escapes became newlines)"]);
    });

    it("turns literal \\n into newlines but leaves \\n inside string literals alone", async () => {
      const code = 'import sys\n\n\ndef main():\n    """Print two lines."""\n    sys.stdout.write("a\\nb\\n")  # one write\n\n\nmain()\n';
      const result = await normalize(code.replaceAll("\n", "\\n"));
      expect(result.code).toBe(code);
      expect(result.normalizations).toEqual(["turned 9 literal \\n escapes into newlines"]);
    });

    it("repairs a one-line shebang script, which Python reads as a lone comment", async () => {
      const code = "#!/usr/bin/env python3\nimport sys\nprint(sys.argv[1])\n";
      const result = await normalize(code.replaceAll("\n", "\\n"));
      expect(result).toMatchObject({ code, normalizations: ["turned 3 literal \\n escapes into newlines"] });
    });

    it("keeps a \\n that a comment mentions, guided by the parser", async () => {
      const code = "import sys\n# split the input on \\n and strip\nlines = sys.argv[1].split()\nprint(lines)\n";
      const result = await normalize(code.replaceAll("\n", "\\n"));
      expect(result.code).toBe(code);
      expect(result.normalizations).toEqual(["turned 4 literal \\n escapes into newlines (keeping 1 escape in comments)"]);
    });

    it("turns \\r\\n and \\t outside strings into real characters", async () => {
      const code = "if True:\r\n\tprint('x')\r\n";
      const result = await normalize("if True:\\r\\n\\tprint('x')\\r\\n");
      expect(result.code).toBe(code);
    });

    it("undoes escaped quotes when the whole code was JSON-escaped", async () => {
      const code = 'print("hi")\nprint("there")\n';
      expect((await normalize('print(\\"hi\\")\\nprint(\\"there\\")\\n')).code).toBe(code);
    });
  });

  describe("combinations", () => {
    it("finds a fence inside CDATA", async () => {
      const result = await normalize(`<![CDATA[\n\`\`\`python\n${SKILL}\`\`\`\n]]>`);
      expect(result.code).toBe(SKILL);
      expect(result.normalizations).toEqual(["stripped a CDATA envelope", "extracted code from a markdown fence (python)"]);
    });

    it("decodes entities inside a fence", async () => {
      const result = await normalize("```python\n" + escapeHtml(SKILL) + "```\n");
      expect(result.code).toBe(SKILL);
      expect(result.normalizations).toEqual([`decoded ${SKILL_ENTITIES} HTML entities`, "extracted code from a markdown fence (python)"]);
    });

    it("decodes entities inside CDATA", async () => {
      const result = await normalize(`<![CDATA[${escapeHtml(SKILL)}]]>`);
      expect(result.code).toBe(SKILL);
      expect(result.normalizations).toHaveLength(2);
    });

    it("undoes escaped newlines and entities together", async () => {
      const result = await normalize(escapeHtml(SKILL).replaceAll("\n", "\\n"));
      expect(result.code).toBe(SKILL);
      expect(result.normalizations).toEqual([
        `decoded ${SKILL_ENTITIES} HTML entities`,
        `turned ${SKILL_LINES} literal \\n escapes into newlines`,
      ]);
    });

    it("extracts a fence from JSON-encoded text", async () => {
      const result = await normalize(JSON.stringify(`Here you go:\n\`\`\`python\n${SKILL}\`\`\``));
      expect(result.code).toBe(SKILL);
    });

    it("removes indentation common to every line", async () => {
      const indented = SKILL.split("\n")
        .map((line) => (line ? `    ${line}` : line))
        .join("\n");
      expect(await normalize(indented)).toMatchObject({
        code: SKILL,
        normalizations: ["removed 4 spaces of indentation common to every line"],
      });
    });
  });

  describe("deliveries whose escaped form still parses", () => {
    // Entities only inside strings and comments: the fenced, escaped code is valid Python as it is.
    const meant = `import json
# keeps a < b, the entity &lt; and a CDATA closer ]]> as written
def wrap(s):
    return "<b>" + s.replace("&", "&amp;") + "</b>]]>"
print(json.dumps({"html": wrap("a & b")}))
`;

    it("decodes a fenced, entity-escaped delivery once when no raw <, > or & appears anywhere", async () => {
      const escaped = meant.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
      const { code, normalizations } = await normalize("```python\n" + escaped + "```\n");
      expect(code).toBe(meant);
      expect(normalizations).toEqual([
        "extracted code from a markdown fence (python)",
        expect.stringMatching(/^decoded \d+ HTML entities \(no raw <, > or & anywhere: the code was entity-escaped\)$/),
      ]);
    });

    it("keeps entities in a fenced delivery that also holds a raw <, > or &: real code", async () => {
      const real = 'print("1 &lt; 2" if 1 < 2 else "")\n';
      expect((await normalize("```python\n" + real + "```\n")).code).toBe(real);
    });

    it("decodes a JSON string body with raw quotes as a whole: doubled backslashes are halved", async () => {
      const code = 'import json\nparts = "a\\nb".split("\\n")\nprint(json.dumps({"parts": parts, "tab": \'x\\ty\', "bs": "c\\\\d"}))\n';
      const delivered = code.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
      expect(delivered).not.toContain("\n");
      const { code: stored, normalizations } = await normalize(delivered);
      expect(stored).toBe(code);
      expect(normalizations).toEqual([expect.stringContaining("undid JSON string escaping as a whole")]);
    });
  });

  describe("diagnoses", () => {
    it("names a CDATA wrapper left unclosed", async () => {
      expect(await diagnosis(`<parameter name="code"><![CDATA[${SKILL}`)).toBe(
        "code: is wrapped in a CDATA section that is never closed (<![CDATA[ without a matching ]]>): " +
          "the tool-call wrapper leaked into the code, or the stream was cut off; send the plain Python source",
      );
    });

    it("names HTML entities that do not decode to valid code, with the error after decoding", async () => {
      expect(await diagnosis("import os\nif 1 &lt; 2 &amp;&amp; 3 &gt; 2:\n    print(&quot;x&quot;)\n")).toBe(
        "code: contains 6 HTML entities (such as &lt; or &amp;) and is still not valid Python after decoding them: " +
          "invalid syntax at line 2, column 11; send raw source with literal <, > and & characters",
      );
    });

    it("names a stream cut off inside a triple-quoted string", async () => {
      const raw = "import os\n".repeat(11) + 'HELP = """Usage:\n  run it\n';
      expect(await diagnosis(raw)).toBe(
        "code: ends inside an unterminated triple-quoted string starting at line 12: the stream was probably cut off; send the complete source",
      );
    });

    it("names a stream cut off inside brackets, a string, a block or a statement", async () => {
      expect(await diagnosis("import json\nprint(json.dumps({'a': [1, 2,\n")).toBe(
        "code: ends with '[' at line 2, column 24 never closed: the stream was probably cut off; send the complete source",
      );
      expect(await diagnosis("import os\nprint('hello")).toMatch(
        /^code: ends inside an unterminated string starting at line 2, column 7: the stream was probably cut off/,
      );
      expect(await diagnosis("import os\ndef main():\n")).toMatch(/^code: ends before the body of a block \(expected an indented block/);
      expect(await diagnosis("x = 1 +\n")).toMatch(/^code: ends in the middle of a statement \(invalid syntax at line 1, column 8\)/);
    });

    it("says where a truncation is once a fence was removed", async () => {
      expect(await diagnosis("```python\nimport os\ndef main():\n    print((1,\n")).toBe(
        "code: ends with '(' at line 3, column 11 never closed: the stream was probably cut off; send the complete source " +
          "(positions refer to the code after: extracted code from a markdown fence (python; the fence was never closed))",
      );
    });

    it("names escaped-newline confusion", async () => {
      expect(await diagnosis("import os\\ndef f(:\\n    return 1\\n")).toBe(
        "code: holds 3 literal \\n escapes instead of line breaks and is still not valid Python after turning them into newlines: " +
          "invalid syntax at line 2, column 7; send the source with real line breaks, not a JSON-escaped string",
      );
    });

    it("otherwise reports the parser's own message and position", async () => {
      expect(await diagnosis("import os\n\ndef f(x):\n    return x +* 2\n")).toBe(
        "code: is not valid Python: invalid syntax at line 4, column 15",
      );
      expect(await diagnosis("```python\nimport os\nx = = 1\n```\n")).toBe(
        "code: is not valid Python: invalid syntax at line 2, column 5 (positions refer to the code after: extracted code from a markdown fence (python))",
      );
    });

    it("stays fast on hostile 100 KB inputs", async () => {
      const size = 100 * 1024;
      const hostile = {
        "a fence line with a long info string": "```" + "a".repeat(size) + "`\nx = = 1\n",
        "a fence line of spaces": "```" + " ".repeat(size) + "x`\n",
        "thousands of tags": "<a>".repeat(size / 3) + "x = = 1",
        "thousands of closing tags": "x = = 1" + "</a> ".repeat(size / 5),
        "thousands of CDATA closers": "x = = 1" + "]]>  ".repeat(size / 5) + "x",
        "thousands of fences": "```python\nx = = 1\n```\n".repeat(size / 20),
        "thousands of entities": "x = &lt;&amp;&#39;\n".repeat(size / 20),
        "thousands of escapes": "x = '\\n' # \\n\\t\\\"".repeat(size / 20),
        "a long whitespace run in a fence": "```python\n" + " ".repeat(size) + "x\n",
      };
      for (const [name, raw] of Object.entries(hostile)) {
        // Bounded work, asserted by counting parses (deterministic), never by the clock.
        const checker = new CountingChecker(python);
        const started = performance.now();
        await normalizeSkillCode(raw, checker).catch(() => undefined);
        console.log(`${name}: ${checker.parses} parses, ${(performance.now() - started).toFixed(0)} ms`);
        expect(checker.parses, name).toBeLessThanOrEqual(41);
      }
    });

    it("gives up quickly on input the parser cannot handle", async () => {
      const checker = new CountingChecker(python);
      await expect(normalizeSkillCode("-".repeat(200_000) + "1", checker)).rejects.toThrow(
        /^code: could not be parsed: the code is too complex/,
      );
      expect(checker.parses).toBeLessThanOrEqual(2);
    });
  });
});
