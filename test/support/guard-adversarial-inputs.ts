/**
 * 100 KB inputs built to make backtracking regexes explode, for the content guard: runs of one
 * character or token that many patterns start on and can extend. The guard's test checks what it
 * finds in them; npm run bench times them next to a benign file of the same size.
 */
const SIZE = 100 * 1024;

/** `unit` repeated to exactly 100 KB. */
export function fill(unit: string): string {
  return unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
}

export const ADVERSARIAL_GUARD_INPUTS: Readonly<Record<string, string>> = {
  letters: fill("a"),
  spaces: fill(" "),
  newlines: fill("\n"),
  hashes: fill("#"),
  quotes: fill('"'),
  "single quotes": fill("'"),
  backslashes: fill("\\"),
  braces: fill("{"),
  "f-string fields": fill('f"{'),
  parens: fill("("),
  traversal: fill("../"),
  "rm flags": fill("rm -r -f "),
  "exec calls": fill("exec("),
  assignments: fill("a=a="),
  "chmod words": fill("chmod "),
  "curl words": fill("curl x "),
  "nc words": fill("nc -e "),
  "base64 run": fill("QUJD"),
  "base64 runs just under the blob size": fill(`${"Q".repeat(1023)}-`),
  "fork-bomb prefix": fill("(){ :|"),
  "environ reads": fill('os.environ["A_'),
  "sql words": fill("DROP TABLE "),
  "import calls": fill('__import__("'),
  "getattr calls": fill("getattr(os, "),
  "dup2 calls": fill("dup2(s.fileno(), "),
  docstrings: fill('"""x"""\n'),
};
