import type { Candidate } from "./normalize-repair.js";

const CDATA_OPEN = "<![CDATA[";
const CDATA_CLOSE = "]]>";

/**
 * The content of a CDATA envelope, kept verbatim (whitespace inside the envelope is the code's;
 * Python ignores leading blank lines). Text outside it (leaked XML tags, prose) is dropped, and
 * adjacent sections are joined as XML does, which also undoes the `]]]]><![CDATA[>` split an XML
 * writer uses for a `]]>` in the code. A lone closer is dropped too; a lone opener is not, as it
 * suggests a cut-off stream (see the diagnosis).
 */
export function stripCdata(text: string): Candidate[] {
  const open = text.indexOf(CDATA_OPEN);
  const close = text.lastIndexOf(CDATA_CLOSE);
  if (open >= 0 && close > open) {
    const sections = text.slice(open + CDATA_OPEN.length, close);
    const joined = sections.replace(/\]\]>(\s*)<!\[CDATA\[/g, "$1");
    return [{ kind: "cdata", text: joined, note: "stripped a CDATA envelope" }];
  }
  if (open < 0 && close >= 0) {
    const stray = /\]\]>((?:\s*<\/[A-Za-z_][\w.:-]*\s*>)*\s*)$/.exec(text);
    if (stray) return [{ kind: "cdata", text: text.slice(0, stray.index) + (stray[1] ?? ""), note: "removed a stray CDATA closer ]]>" }];
  }
  return [];
}

export const LEADING_CDATA = /^\s*(?:<[^<>!]*>\s*)*<!\[CDATA\[/;
const LEADING_TAG = /^\s*<([A-Za-z_][\w.:-]*)(?:\s[^<>]*)?>/;
const TRAILING_TAG = /<\/([A-Za-z_][\w.:-]*)\s*>\s*$/;

/** Tool-call wrappers nest two or three deep; more tags than this are a document, not a wrapper. */
const MAX_WRAPPER_TAGS = 8;

/** Tool-call XML around the code, e.g. `<parameter name="code">…</parameter>`; no Python line starts with `<`. */
export function stripXmlTags(text: string): Candidate[] {
  let inner = text;
  const names: string[] = [];
  for (let n = 0, match = LEADING_TAG.exec(inner); match && n < MAX_WRAPPER_TAGS; n++, match = LEADING_TAG.exec(inner)) {
    names.push(`<${match[1]}>`);
    inner = inner.slice(match[0].length);
  }
  for (let n = 0, match = TRAILING_TAG.exec(inner); match && n < MAX_WRAPPER_TAGS; n++, match = TRAILING_TAG.exec(inner)) {
    names.push(`</${match[1]}>`);
    inner = inner.slice(0, match.index);
  }
  if (names.length === 0) return [];
  return [{ kind: "tags", text: inner, note: `stripped leaked XML tags (${[...new Set(names)].join(" ")})` }];
}
