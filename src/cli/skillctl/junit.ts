/** A minimal JUnit XML writer (the subset CI servers read: testsuite, testcase, failure). */

export interface JUnitCase {
  name: string;
  classname: string;
  /** Seconds. */
  time: number;
  /** Present when the case failed. */
  failure?: { message: string; body?: string };
}

/** Removes characters XML 1.0 cannot carry at all (control characters, lone surrogates, U+FFFE/F). */
function stripInvalidXmlChars(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "\uFFFD");
}

/** Escapes text for an attribute value or element content (quotes included, so it is safe in both). */
export function escapeXml(text: string): string {
  return stripInvalidXmlChars(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")
    .replace(/\r/g, "&#13;")
    .replace(/\n/g, "&#10;")
    .replace(/\t/g, "&#9;");
}

/** Element content keeps its line breaks readable; only the markup characters are escaped. */
function escapeXmlText(text: string): string {
  return stripInvalidXmlChars(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\r/g, "&#13;");
}

export function junitXml(suiteName: string, cases: readonly JUnitCase[], timestamp = new Date()): string {
  const failures = cases.filter((c) => c.failure !== undefined).length;
  const total = cases.reduce((sum, c) => sum + c.time, 0);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escapeXml(suiteName)}" tests="${cases.length}" failures="${failures}" errors="0" time="${total.toFixed(3)}">`,
    `  <testsuite name="${escapeXml(suiteName)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0" time="${total.toFixed(3)}" timestamp="${timestamp.toISOString()}">`,
  ];
  for (const c of cases) {
    const open = `    <testcase classname="${escapeXml(c.classname)}" name="${escapeXml(c.name)}" time="${c.time.toFixed(3)}"`;
    if (c.failure === undefined) {
      lines.push(`${open}/>`);
      continue;
    }
    lines.push(`${open}>`);
    const body = c.failure.body ? escapeXmlText(c.failure.body) : "";
    lines.push(`      <failure message="${escapeXml(c.failure.message)}" type="SkillTestFailure">${body}</failure>`);
    lines.push("    </testcase>");
  }
  lines.push("  </testsuite>", "</testsuites>", "");
  return lines.join("\n");
}
