/**
 * The content guard's rule set: precise signals of hostile intent in a Python skill.
 *
 * The sandbox (no network, read-only root, no capabilities, no-new-privileges) is the real
 * boundary; these rules are defence in depth and a clear early "no" for an agent. So each rule
 * aims at near-zero false positives on real code: it names a concrete act (`rm -r /`, exec of
 * decoded bytes, a socket wired to a shell), never a merely sensitive word. `dangerous` rules
 * reject the skill; `caution` rules only warn (the act is legitimate often enough, or it cannot
 * succeed in the sandbox anyway).
 *
 * Linear time: the guard scans untrusted input of up to 100 KB, and V8's regex engine
 * backtracks. Every pattern therefore starts with a literal or a narrow class (few start
 * positions), bounds every quantifier (`{0,N}`; only patterns anchored to the start of the text
 * may use `*`), and avoids adjacent quantified parts that can share characters, so each start
 * position costs a bounded amount of work. The tests check the quantifiers statically and time
 * every rule on 100 KB adversarial inputs. Co-occurrence conditions (`requires`, `unless`,
 * `near`) are evaluated once per file or in a bounded window.
 *
 * Rules see the code with comments and docstrings blanked (see `codeView` in content-guard.ts),
 * so "never run rm -rf /" in a comment is not a finding.
 */

/** What kind of harm a rule looks for. */
export type GuardCategory =
  | "destructive-command"
  | "code-injection"
  | "obfuscation"
  | "credential-exfiltration"
  | "path-traversal"
  | "destructive-sql"
  | "privilege-escalation"
  | "persistence"
  | "crypto-mining"
  | "reverse-shell";

/** `dangerous` rejects the skill; `caution` accepts it and reports a warning. */
export type GuardSeverity = "dangerous" | "caution";

/** Per-scan context handed to {@link GuardRule.accept}. */
export interface RuleContext {
  /** The text the rule is matched against (see {@link GuardRule.view}). */
  readonly text: string;
  /** Computes a per-scan value once (e.g. a set of names), however many matches ask for it. */
  memo<T>(key: string, compute: (text: string) => T): T;
  /** The secret names the skill declares (docs/security.md#declaring-and-delivering): the run is handed them. */
  readonly declaredSecrets: ReadonlySet<string>;
  /** The skill declares hosts its runs may reach (docs/security.md#declaring-hosts): talking to the network is its purpose. */
  readonly declaresNetwork: boolean;
}

/** One rule of the content guard. */
export interface GuardRule {
  /** Stable kebab-case id, quoted in rejections and warnings. */
  readonly id: string;
  readonly category: GuardCategory;
  readonly severity: GuardSeverity;
  /** What was found, why it matters, and what to do instead; addressed to the agent. */
  readonly message: string;
  /** A global (`g`) regex; see the module comment for the linear-time constraints. */
  readonly pattern: RegExp;
  /**
   * `code` (the default): the source with comments blanked, and docstrings too when the skill
   * cannot read its own source. `source`: the text verbatim.
   * @default "code"
   */
  readonly view?: "code" | "source";
  /** Every one of these must also match somewhere in the text (e.g. a socket for a `dup2`). */
  readonly requires?: readonly RegExp[];
  /** The rule stays silent when this matches anywhere (a dangerous twin reports instead). */
  readonly unless?: RegExp;
  /**
   * This must also match close by: in the `before` characters preceding the match (cut at the
   * start of its line when `sameLine`), the match itself, and the `after` characters following it.
   */
  readonly near?: { readonly pattern: RegExp; readonly before: number; readonly after: number; readonly sameLine?: boolean };
  /** A final check on the match, for conditions a linear regex cannot express. */
  readonly accept?: (match: RegExpExecArray, context: RuleContext) => boolean;
}

const raw = String.raw;
const rx = (source: string, flags = ""): RegExp => new RegExp(source, `g${flags}`);

// Shared fragments. Shell words may sit in one command string ("rm -rf /") or in a Python argv
// list (["rm", "-rf", "/"]), so the separator between words admits quotes and commas.
const SEP = raw`["',\s]{1,8}`;
/** The shell word ends here: whitespace, a quote, a shell operator, a closing bracket, the end. */
const END = raw`(?![^\s"';&|)\],])`;
const STR = raw`[rRbBuU]{0,2}`;
/** A path separator as written in source: `/`, or a backslash (doubled in a normal string literal). */
const PATH_SEP = raw`(?:/|\\{1,2})`;
/** A short single-line string literal (no backreferences, so fragments compose freely). */
const lit = (max: number): string => raw`${STR}(?:"[^"\n\r]{0,${max}}"|'[^'\n\r]{0,${max}}')`;
const SHELL = raw`(?:/(?:usr/)?bin/)?(?:(?:ba|z|da|k|tc|c)?sh|python[\d.]{0,4}|perl|ruby|node)\b`;
const SHELL_LIT = raw`${STR}["'](?:/(?:usr/)?bin/)?(?:ba|z|da|k)?sh["']`;
const SYSTEM_DIR = raw`(?:bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|srv|usr|var)`;
/** Block devices and kernel memory; never /dev/null, /dev/zero, /dev/stdout. */
const DEVICE = raw`/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|loop\d|mapper/|disk/|root\b|mem\b|kmem\b|port\b)`;
/** A call of the exec family; `re.compile(...)` and `x.eval(...)` are methods, not these. */
const EXEC_CALL = raw`(?<![\w.])(?:(?:builtins|__builtins__)\.)?(?:exec|eval|compile)\s{0,4}\(`;
/** Turns opaque data back into text or code. */
const DECODER = raw`(?:\b(?:b64decode|urlsafe_b64decode|b32decode|b16decode|b85decode|a85decode|decodebytes|decodestring|unhexlify|fromhex)\b|\bcodecs\.decode\(|\b(?:zlib|gzip|bz2|lzma)\.decompress\(|\b(?:marshal|pickle)\.loads\(|\ba2b_(?:base64|hex|uu|qp)\(|\.decode\(\s{0,4}["'](?:rot.?13|hex|base64|zlib|bz2|uu|unicode.escape))`;
/** A name built at run time so that a reader (or a scanner) cannot see it. */
const HIDDEN_NAME = raw`(?:chr\(\s{0,4}\d|bytes\.fromhex\(|bytes\(\s{0,4}\[|(?:base64|codecs|binascii|zlib)\.|["']{2}\s{0,4}\.join\(|${lit(80)}\s{0,4}(?:\[::-1\]|\+\s{0,4}${STR}["']|\.decode\(|\.replace\())`;
/** The file talks to the network: a secret read in such a file may be sent away. */
const NETWORK = rx(
  raw`\b(?:requests|httpx|aiohttp|urllib3|pycurl)\.\w|\burlopen\(|\bhttp\.client\b|\bHTTPS?Connection\(|\bsocket\.(?:socket|create_connection)\(|\bsmtplib\b|\bftplib\b|\b(?:curl|wget|nc)\s|\.sendall\(|\.sendto\(|\bparamiko\b|\bxmlrpc\b|\bwebsockets?\b`,
);
const SOCKET = rx(raw`\bsocket\.socket\(|\bsocket\(\s{0,4}(?:socket\.)?AF_INET|\bcreate_connection\(|\.connect\(\s{0,4}\(`);
/** Names of environment variables that hold secrets by convention. */
const SECRET_ENV = raw`(?:AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|AWS_ACCESS_KEY_ID|DATABASE_URL|[A-Z][A-Z0-9_]{0,40}_(?:SECRET_ACCESS_KEY|SECRET_KEY|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|PASSWORD|PASSWD|CREDENTIALS))(?![A-Z0-9_])`;
/** The variable a SECRET_ENV_READ match reads: the name it ends with (before a closing quote). */
const secretNameRead = (matched: string): string => /([A-Z0-9_]+)["']?$/.exec(matched)?.[1] ?? "";
const SECRET_ENV_READ = raw`(?:\benviron(?:\.get|\.pop|\.setdefault)?\s{0,4}[[(]|\bgetenv\(|\benvironb\[)\s{0,4}${STR}["']${SECRET_ENV}["']|\$\{?${SECRET_ENV}`;
/**
 * A write involving a path: open(..., "w"/"a"), write_text, shell redirection, tee, sed -i. Looked
 * for on the path's own line before it and a few lines after it (`p = "~/.bashrc"` then
 * `open(p, "a")`), not in earlier lines, which write other files.
 */
const WRITE_NEAR = {
  pattern: rx(
    raw`>>?\s{0,4}["']?[~$/]|\btee\b|\bopen\([^\n\r]{0,200}?["'][rbt+]{0,2}[wax][rbt+]{0,2}["']|,\s{0,4}(?:mode\s{0,4}=\s{0,4})?["'][rbt+]{0,2}[wax][rbt+]{0,2}["']|\.write_(?:text|bytes)\(|\.write\(|\bsymlink(?:_to)?\(|\bsed\s{1,4}-i|\b(?:cp|mv|install|ln)\s`,
  ),
  before: 200,
  after: 240,
  sameLine: true,
} as const;

/** Source encodings under which ASCII text reads the same as it does in UTF-8. */
const SAFE_SOURCE_ENCODING =
  /^(?:utf-?8(?:-.*)?|u8|utf|cp65001|(?:us-)?ascii|646|latin-?[1-9]|l[1-9]|iso-?8859-?\d{1,2}(?:-.*)?|iso-latin-1(?:-.*)?|(?:cp|windows-)125[0-8]|koi8-[rut])$/;

/** Where each name is first assigned decoded data (`code = base64.b64decode(...)`); computed once per scan. */
function decodedAssignments(text: string): Map<string, number> {
  const firstAt = new Map<string, number>();
  const assignment = rx(raw`(?<![\w.])([A-Za-z_]\w{0,40})\s{0,4}=(?!=)[^\n\r;]{0,200}?${DECODER}`);
  for (const match of text.matchAll(assignment)) {
    if (match[1] !== undefined && !firstAt.has(match[1])) firstAt.set(match[1], match.index);
  }
  return firstAt;
}

/** The content guard's rules, in report order. */
export const GUARD_RULES: readonly GuardRule[] = [
  // ── destructive-command ──────────────────────────────────────────────────────────────────
  {
    id: "destructive-rm-root",
    category: "destructive-command",
    severity: "dangerous",
    message:
      "recursive rm aimed at /, ~, $HOME, * or a system directory (or --no-preserve-root): it would wipe the filesystem. Delete only paths the skill created, e.g. inside tempfile.mkdtemp()",
    pattern: rx(
      raw`\brm((?:${SEP}-{1,2}[A-Za-z-]{1,20}){1,4})${SEP}(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?|(?:\./)?\*|/${SYSTEM_DIR}/?\*?)${END}|--no-preserve-root\b`,
    ),
    // Only recursive removal wipes a tree: a short option group with r/R, or --recursive.
    accept: (match) => match[1] === undefined || /(?<![-\w])-(?!-)[A-Za-z]{0,10}[rR]|--recursive\b/.test(match[1]),
  },
  {
    id: "destructive-rmtree-root",
    category: "destructive-command",
    severity: "dangerous",
    message:
      "shutil.rmtree() on /, the home directory or a system directory: it would delete everything under it. Remove only directories the skill created (e.g. a tempfile.TemporaryDirectory())",
    pattern: rx(
      raw`(?<![\w.])(?:shutil\.)?rmtree\(\s{0,4}(?:${STR}(?:"(?:/|~/?|/${SYSTEM_DIR}/?)"|'(?:/|~/?|/${SYSTEM_DIR}/?)')|os\.sep|os\.path\.expanduser\(\s{0,4}${STR}["']~/?["']\s{0,4}\)|(?:pathlib\.)?Path\.home\(\s{0,2}\)|(?:pathlib\.)?Path\(\s{0,4}${STR}["'](?:/|~/?)["']\s{0,4}\)(?:\.expanduser\(\s{0,2}\))?|os\.environ\[\s{0,4}["']HOME["']\s{0,4}\]|os\.(?:environ\.get|getenv)\(\s{0,4}["']HOME["']\s{0,4}\))\s{0,4}[,)]`,
    ),
  },
  {
    id: "destructive-mkfs",
    category: "destructive-command",
    severity: "dangerous",
    message: "mkfs/mke2fs/mkswap/wipefs on a /dev/ device: it would erase a disk. A skill has no business formatting devices",
    pattern: rx(raw`\b(?:mkfs(?:\.[a-z0-9]{1,8})?|mke2fs|mkswap|wipefs)\b[^\n\r]{0,80}?/dev/`),
  },
  {
    id: "destructive-block-device-write",
    category: "destructive-command",
    severity: "dangerous",
    message:
      "writes raw bytes to a block device or kernel memory (dd of=/dev/sd…, > /dev/sd…, open('/dev/sd…', 'w')): it would destroy a disk. Write to files in the working directory instead",
    pattern: rx(
      raw`\bof=${DEVICE}|>\s{0,4}${DEVICE}|\bopen\(\s{0,4}${STR}["']${DEVICE}[^"'\n\r]{0,20}["']\s{0,4},\s{0,4}(?:mode\s{0,4}=\s{0,4})?${STR}["'][rbt]{0,2}[wax+]`,
    ),
  },
  {
    id: "destructive-shred-device",
    category: "destructive-command",
    severity: "dangerous",
    message: "shred on a /dev/ block device: it would irrecoverably overwrite a disk. Shred only files the skill created",
    pattern: rx(raw`\bshred\b[^\n\r]{0,80}?${DEVICE}`),
  },
  {
    id: "destructive-fork-bomb",
    category: "destructive-command",
    severity: "dangerous",
    message:
      "a fork bomb (a shell function piping into itself in the background, or os.fork() in an endless loop): it exists only to exhaust the machine",
    pattern: rx(
      raw`\(\s{0,4}\)\s{0,4}\{\s{0,4}([\w:]{1,20})\s{0,4}\|\s{0,4}\1\s{0,4}&|\bwhile[ \t]{1,4}(?:True|1)[ \t]{0,4}:\s{0,40}(?:os\.)?fork\(\s{0,2}\)[ \t]{0,20}(?:[\n\r;]|$)`,
    ),
  },

  // ── code-injection ───────────────────────────────────────────────────────────────────────
  {
    id: "injection-exec-decoded",
    category: "code-injection",
    severity: "dangerous",
    message:
      "exec/eval/compile applied to decoded data (base64, hex, rot13, zlib, marshal, pickle): this hides the code that really runs. Ship the code as plain Python; to parse data use json.loads or ast.literal_eval",
    pattern: rx(raw`${EXEC_CALL}[^;)\n\r]{0,200}?${DECODER}`),
  },
  {
    id: "injection-exec-decoded-variable",
    category: "code-injection",
    severity: "dangerous",
    message:
      "exec/eval/compile of a variable that was assigned decoded data (base64, hex, zlib, marshal…): this hides the code that really runs. Ship the code as plain Python",
    pattern: rx(raw`${EXEC_CALL}\s{0,4}([A-Za-z_]\w{0,40})\s{0,4}[,).]`),
    // Only an assignment earlier in the file counts: an exec before it runs some other value
    // (zipimport has `exec(code, …)` long before an unrelated `code = marshal.loads(…)`).
    accept: (match, context) => {
      const assignedAt = match[1] === undefined ? undefined : context.memo("decoded", decodedAssignments).get(match[1]);
      return assignedAt !== undefined && assignedAt < match.index;
    },
  },
  {
    id: "injection-remote-code-exec",
    category: "code-injection",
    severity: "dangerous",
    message:
      "downloads code and runs it (curl/wget piped into a shell or interpreter, or exec of a fetched response): whatever the server sends would run. Put the code in the skill itself",
    pattern: rx(
      raw`\b(?:curl|wget)\b[^\n\r|;]{0,200}\|\s{0,4}(?:sudo\s{1,4})?${SHELL}|(?:\beval|\b(?:ba|z|da|k)?sh\s{1,4}-c)\s{1,4}["']?\$\(\s{0,4}(?:curl|wget)\b|\b(?:ba|z|da|k)?sh\s{1,4}<\(\s{0,4}(?:curl|wget)\b|${EXEC_CALL}[^;)\n\r]{0,160}?(?:\burlopen\(|\b(?:requests|httpx)\.(?:get|post|request)\(|\.recv\()`,
    ),
  },
  {
    id: "injection-decode-pipe-shell",
    category: "code-injection",
    severity: "dangerous",
    message:
      "decodes a blob and pipes it into a shell or interpreter (base64 -d | sh, xxd -r | bash): this hides the commands that really run. Write the commands out in plain text",
    pattern: rx(
      raw`\b(?:base64\s{1,4}(?:-d|--decode|-D)|xxd\s{1,4}-r(?:\s{1,4}-p)?|openssl\s{1,4}(?:base64|enc)\b[^\n\r|;]{0,40}?\s-d)\b[^\n\r|;]{0,120}\|\s{0,4}(?:sudo\s{1,4})?${SHELL}`,
    ),
  },
  {
    id: "injection-shellcode-exec",
    category: "code-injection",
    severity: "dangerous",
    message:
      "ctypes with executable memory (PROT_EXEC, PAGE_EXECUTE_READWRITE, VirtualAlloc): the pattern for running injected machine code. Skills must be plain Python",
    pattern: rx(raw`\bPROT_EXEC\b|\bPAGE_EXECUTE_READWRITE\b|\bVirtualAlloc(?:Ex)?\b`),
    requires: [rx(raw`\bctypes\b`)],
  },

  // ── obfuscation ──────────────────────────────────────────────────────────────────────────
  {
    id: "obfuscation-dunder-import-call",
    category: "obfuscation",
    severity: "dangerous",
    message:
      "__import__('os').system(...)-style call: an inline import that hides a command runner from readers. Import the module normally and say what command runs and why",
    pattern: rx(
      raw`\b__import__\(\s{0,4}${STR}["'](?:os|posix|subprocess|pty|socket|ctypes|shutil|builtins|commands)["']\s{0,4}\)\s{0,4}\.\s{0,4}(?:system|popen\d?|exec[lv]p?e?|spawn[lv]?p?e?|fork|forkpty|kill|call|run|Popen|check_output|check_call|getoutput|getstatusoutput|rmtree|dup2|setuid|CDLL|socket|create_connection|__dict__)\b`,
    ),
  },
  {
    id: "obfuscation-dynamic-import-name",
    category: "obfuscation",
    severity: "dangerous",
    message:
      "imports a module whose name is assembled at run time (chr codes, reversed or concatenated literals, decoded bytes): this hides what the skill uses. Import modules by their plain names",
    pattern: rx(raw`\b(?:__import__|import_module)\(\s{0,4}${HIDDEN_NAME}`),
  },
  {
    id: "obfuscation-builtins-lookup",
    category: "obfuscation",
    severity: "dangerous",
    message:
      "fetches exec/eval/__import__/system through __builtins__, builtins.__dict__ or getattr with a hidden name: this hides a code or command runner from readers. Call functions by their plain names",
    pattern: rx(
      raw`(?:\b__builtins__(?:\.__dict__)?|\bbuiltins\.__dict__|\bvars\(\s{0,4}(?:__builtins__|builtins)\s{0,4}\)|\bglobals\(\s{0,2}\)\s{0,4}\[\s{0,4}["']__builtins__["']\s{0,4}\])\s{0,4}\[\s{0,4}${STR}["'](?:exec|eval|compile|__import__|getattr)["']|\bgetattr\(\s{0,4}(?:__builtins__|builtins|os|posix|subprocess|pty|socket|sys\.modules\[[^\]\n\r]{1,40}\])\s{0,4},\s{0,4}(?:${HIDDEN_NAME}|${STR}["'](?:exec|eval|compile|__import__|system|popen|exec[lv]p?e?)["'])`,
    ),
  },
  {
    id: "obfuscation-exec-char-codes",
    category: "obfuscation",
    severity: "dangerous",
    message:
      "exec/eval of code spelled as character codes, byte lists, \\x escapes or a reversed string: this hides the code that really runs. Ship the code as plain Python",
    pattern: rx(
      raw`${EXEC_CALL}\s{0,4}(?:chr\(\s{0,4}\d|["']{2}\s{0,4}\.join\(\s{0,4}(?:map\(\s{0,4}chr\b|\[?\s{0,4}chr\()|(?:bytes|bytearray)\(\s{0,4}\[\s{0,4}\d|${lit(400)}\s{0,4}\[::-1\]|[A-Za-z_]\w{0,40}\s{0,4}\[::-1\]|${STR}["'](?:\\x[0-9a-fA-F]{2}){8}|${STR}["'](?:\\[0-7]{3}){8})`,
    ),
  },
  {
    id: "obfuscation-source-encoding",
    category: "obfuscation",
    severity: "dangerous",
    message:
      "declares a source encoding (# coding: …) under which Python would read different code than this text shows (utf-7, unicode_escape, multi-byte or EBCDIC codecs are known tricks). Save the skill as UTF-8 and drop the declaration",
    view: "source",
    // Python honours the declaration on line 1 or 2 only, which the anchor reproduces.
    pattern: rx(raw`^(?:[^\n\r]*(?:\r\n|\r|\n))?[ \t\f]*#[^\n\r]*?coding[:=][ \t]*([-\w.]+)`),
    accept: (match) => !SAFE_SOURCE_ENCODING.test((match[1] ?? "").toLowerCase().replace(/_/g, "-")),
  },
  {
    id: "obfuscation-encoded-blob",
    category: "obfuscation",
    severity: "caution",
    message:
      "a base64/hex-like run of 1024+ characters: opaque data that reviewers cannot read. If it is data, say what it is; if it is code, ship it as plain Python",
    // The lookbehind makes every run start matching once, at its first character.
    pattern: rx(raw`(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{1024}`),
  },

  // ── credential-exfiltration ──────────────────────────────────────────────────────────────
  {
    id: "credential-shadow-file",
    category: "credential-exfiltration",
    severity: "dangerous",
    message: "reads the system password hashes (/etc/shadow, /etc/gshadow, spwd): that is credential theft. A skill never needs them",
    pattern: rx(raw`/etc/g?shadow(?![\w.])|\bspwd\.getsp(?:nam|all)\(`),
  },
  {
    id: "credential-ssh-private-key",
    category: "credential-exfiltration",
    severity: "dangerous",
    message: "touches an SSH private key (~/.ssh/id_rsa, id_ed25519, …): that is credential theft. A skill never needs private keys",
    pattern: rx(
      raw`\.ssh[/\\]{1,2}(?:id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?|identity)(?![\w.])|\.ssh["']\s{0,4}[,/]\s{0,4}${STR}["']id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?["']`,
    ),
  },
  {
    id: "credential-cloud-config",
    category: "credential-exfiltration",
    severity: "dangerous",
    message:
      "touches cloud or registry credentials (~/.aws/credentials, gcloud, azure tokens, ~/.docker/config.json, ~/.kube/config, .git-credentials, /run/secrets): that is credential theft. Skills receive what they need as parameters",
    pattern: rx(
      raw`\.aws[/\\]{1,2}(?:credentials|config)(?![\w.])|\.aws["']\s{0,4}[,/]\s{0,4}${STR}["']credentials["']|\.config[/\\]{1,2}gcloud\b|\bapplication_default_credentials\.json\b|\.azure[/\\]{1,2}(?:accessTokens\.json|msal_token_cache)|\.docker[/\\]{1,2}config\.json\b|\.kube[/\\]{1,2}config(?![\w.])|\.git-credentials\b|/(?:var/)?run/secrets/`,
    ),
  },
  {
    id: "credential-cloud-metadata",
    category: "credential-exfiltration",
    severity: "dangerous",
    message:
      "addresses a cloud instance-metadata service (169.254.169.254, metadata.google.internal): it hands out the host's cloud credentials. A skill never needs it",
    pattern: rx(raw`\b169\.254\.169\.254\b|\bmetadata\.google\.internal\b|\bfd00:ec2::254\b|\b100\.100\.100\.200\b`),
  },
  {
    id: "credential-env-secret-exfil",
    category: "credential-exfiltration",
    severity: "dangerous",
    message:
      "reads a secret from the environment (AWS_SECRET_ACCESS_KEY, *_TOKEN, *_API_KEY, *_PASSWORD…) in code that also talks to the network: the pattern of credential exfiltration. Take what the skill needs as a parameter and do not send it anywhere",
    pattern: rx(SECRET_ENV_READ),
    requires: [NETWORK],
    // A skill that declares both the secret and the hosts it may reach is handed the one to send to
    // the others: only those hosts are reachable. An undeclared secret-looking name is still a finding.
    accept: (match, context) => !(context.declaresNetwork && context.declaredSecrets.has(secretNameRead(match[0]))),
  },
  {
    id: "credential-env-secret-read",
    category: "credential-exfiltration",
    severity: "caution",
    message:
      "reads a secret from the environment (AWS_SECRET_ACCESS_KEY, *_TOKEN, *_API_KEY, *_PASSWORD…) that the skill does not declare: the sandbox passes only declared secrets, so this finds nothing there. Declare it in secrets (docs/security.md#declaring-and-delivering) or take what the skill needs as a parameter",
    pattern: rx(SECRET_ENV_READ),
    unless: NETWORK,
    // A declared secret is what the run is handed: reading it is the point. Sending it away is
    // still credential-env-exfil's finding.
    accept: (match, context) => !context.declaredSecrets.has(secretNameRead(match[0])),
  },
  {
    id: "credential-environ-exfil",
    category: "credential-exfiltration",
    severity: "dangerous",
    message:
      "passes the whole environment (os.environ) into a network call or payload: the pattern of credential exfiltration. Send only the data the skill produced",
    pattern: rx(
      raw`\b(?:post|put|patch|send|sendall|sendto|urlopen|request|Request|urlencode|dumps)\([^;\n\r]{0,160}?(?:\bdict\(\s{0,4}os\.environ\s{0,4}\)|\bos\.environ\.copy\(\s{0,2}\)|\bos\.environ\s{0,4}[,)]|\bstr\(\s{0,4}os\.environ\s{0,4}\))`,
    ),
    requires: [NETWORK],
  },

  // ── path-traversal ───────────────────────────────────────────────────────────────────────
  {
    id: "path-traversal-sensitive",
    category: "path-traversal",
    severity: "dangerous",
    message:
      "climbs out with ../../ towards a sensitive location (etc/passwd, etc/shadow, root/, proc/self/, .ssh/, .aws/, a home directory, the Docker socket): a path-traversal attack. Use paths inside the working directory",
    pattern: rx(
      raw`(?:\.\.${PATH_SEP}){2,16}(?:etc${PATH_SEP}(?:passwd|g?shadow|sudoers|crontab|ssh)|root${PATH_SEP}|proc${PATH_SEP}(?:self|1)${PATH_SEP}|home${PATH_SEP}[^/\\"'\s]{1,32}${PATH_SEP}\.|\.ssh${PATH_SEP}|\.aws${PATH_SEP}|var${PATH_SEP}run${PATH_SEP}docker)`,
    ),
  },
  {
    id: "path-traversal-deep",
    category: "path-traversal",
    severity: "caution",
    message:
      "a relative path climbing five or more directories (../../../../../): skills should stay inside their working directory; build paths from a known base instead",
    pattern: rx(raw`(?<!\.\.${PATH_SEP})(?:\.\.${PATH_SEP}){5}|["']\.\.${PATH_SEP}["']\s{0,4}\*\s{0,4}(?:[5-9]|[1-9]\d)\b`),
  },

  // ── destructive-sql ── caution: the sandbox reaches no database server, so SQL can only touch
  // a scratch SQLite file the skill created; agents still hear about it in case that was not meant.
  {
    id: "sql-drop-database",
    category: "destructive-sql",
    severity: "caution",
    message:
      "DROP DATABASE/SCHEMA in SQL: destroys a whole database. Make sure this only ever targets a scratch database the skill created",
    pattern: rx(raw`\bDROP\s{1,8}(?:DATABASE|SCHEMA)\b`, "i"),
  },
  {
    id: "sql-drop-table",
    category: "destructive-sql",
    severity: "caution",
    message:
      "DROP TABLE without IF EXISTS in SQL: destroys a table and its data. Make sure this only targets tables the skill created (DROP TABLE IF EXISTS in setup code is not reported)",
    pattern: rx(raw`\bDROP\s{1,8}TABLE\s{1,8}(?!IF\s{1,8}EXISTS\b)[\w"\x60[{]`, "i"),
  },
  {
    id: "sql-truncate-table",
    category: "destructive-sql",
    severity: "caution",
    message: "TRUNCATE TABLE in SQL: deletes every row. Make sure this only targets tables the skill created",
    pattern: rx(raw`\bTRUNCATE\s{1,8}TABLE\b`, "i"),
  },
  {
    id: "sql-delete-all-rows",
    category: "destructive-sql",
    severity: "caution",
    message: "DELETE FROM without a WHERE clause: deletes every row. Add a WHERE clause unless emptying a scratch table is the point",
    pattern: rx(raw`\bDELETE\s{1,8}FROM\s{1,8}[\w."\x60[\]{}]{1,64}\s{0,4}(?:;|["']|$)`, "i"),
  },

  // ── privilege-escalation ─────────────────────────────────────────────────────────────────
  {
    id: "privesc-sudo",
    category: "privilege-escalation",
    severity: "caution",
    message:
      "runs a command through sudo: the sandbox has no sudo and blocks privilege gain (no-new-privileges), so this fails. Skills run unprivileged; do the work without root",
    pattern: rx(raw`(?<=["'])sudo(?=["'\s])|(?:&&|\|\||[;|])\s{0,4}sudo\s`),
  },
  {
    id: "privesc-setuid-bit",
    category: "privilege-escalation",
    severity: "dangerous",
    message:
      "sets the setuid/setgid bit (chmod u+s, chmod 4755, os.chmod(…, 0o4755 / S_ISUID)): the classic way to plant a root backdoor. Skills never need it",
    pattern: rx(
      raw`\bchmod${SEP}(?:-[A-Za-z]{1,4}${SEP}){0,2}(?:[ugoa]{0,3}\+[rwxXt]{0,4}s|0?[2467][0-7]{3})(?!\w)|\bchmod\(\s{0,4}[^;\n\r]{0,160}?(?:\b0o?[2467][0-7]{3}\b|\bS_IS[UG]ID\b)`,
    ),
  },
  {
    id: "privesc-world-writable-system",
    category: "privilege-escalation",
    severity: "dangerous",
    message:
      "makes / or a system path world-writable (chmod 777 /etc/…, os.chmod('/usr/…', 0o777)): it lets anyone replace system files. Change permissions only on files the skill created",
    pattern: rx(
      raw`\bchmod${SEP}(?:-[A-Za-z]{1,4}${SEP}){0,2}(?:0?[0-7]{2}[2367]|(?:a|o|go|ugo)?\+[rwxX]{0,2}w[rwxX]{0,2})${SEP}/(?:${SYSTEM_DIR}(?:/[^\s"';&|]{0,80})?)?${END}|\bchmod\(\s{0,4}${STR}["']/(?:${SYSTEM_DIR}(?:/[^"'\n\r]{0,80})?)?["']\s{0,4},\s{0,4}(?:0o?[0-7]{2}[2367]\b|stat\.S_I(?:RWXO|WOTH)\b)`,
    ),
  },
  {
    id: "privesc-setuid-root",
    category: "privilege-escalation",
    severity: "dangerous",
    message:
      "switches to uid/gid 0 (os.setuid(0), os.setresuid(0, …)): an attempt to become root. Skills run unprivileged; dropping privileges to a non-zero id is fine",
    pattern: rx(raw`(?<![\w.])(?:os\.|posix\.)?set(?:e|re|res)?[ug]id\(\s{0,4}0\s{0,4}[,)]`),
  },
  {
    id: "privesc-sudoers",
    category: "privilege-escalation",
    severity: "dangerous",
    message: "touches sudo's policy (/etc/sudoers, NOPASSWD:, visudo): an attempt to grant root. Skills never need it",
    pattern: rx(raw`/etc/sudoers\b|\bNOPASSWD\s{0,4}:|\bvisudo\b`),
  },
  {
    id: "privesc-account-file-write",
    category: "privilege-escalation",
    severity: "dangerous",
    message:
      "writes the system account files (/etc/passwd, /etc/shadow, /etc/group) or adds a uid-0/admin-group user: an attempt to create a root account. Skills never manage users",
    pattern: rx(
      raw`(?:>>?|\btee${SEP}(?:-a${SEP})?)\s{0,4}/etc/(?:passwd|g?shadow|group)\b|\bopen\(\s{0,4}${STR}["']/etc/(?:passwd|g?shadow|group)["']\s{0,4},\s{0,4}(?:mode\s{0,4}=\s{0,4})?${STR}["'][rbt]{0,2}[wax+]|\b(?:useradd|usermod|adduser)\b[^\n\r]{0,80}?(?:-u\s{0,4}0\b|\s-o\b|-a?G\s{1,4}(?:sudo|wheel|root|docker|adm)\b)`,
    ),
  },
  {
    id: "privesc-container-escape",
    category: "privilege-escalation",
    severity: "dangerous",
    message:
      "uses a known container-escape route (the Docker socket, nsenter, /proc/1/root, cgroup release_agent, core_pattern, sysrq): an attempt to break out of the sandbox",
    pattern: rx(
      raw`\bdocker\.sock\b|\bnsenter\b|/proc/1/root\b|/proc/sysrq-trigger\b|\brelease_agent\b|/proc/sys/kernel/core_pattern\b|/sys/kernel/uevent_helper\b|\bmount${SEP}-t${SEP}cgroup`,
    ),
  },

  // ── persistence ──────────────────────────────────────────────────────────────────────────
  {
    id: "persistence-crontab",
    category: "persistence",
    severity: "dangerous",
    message:
      "installs or replaces cron jobs (crontab -e/-r, crontab <file>, … | crontab -, python-crontab's CronTab()): code that keeps running after the skill ends. Skills must not schedule themselves; listing with crontab -l is not reported",
    pattern: rx(
      raw`\bcrontab${SEP}(?:-u${SEP}[\w.-]{1,32}${SEP})?(?:-[er]\b|-(?=["';|&)\s]|$)|(?!-)[\w~$]{0,60}[./][\w~./$]{0,60}${END})|\|\s{0,4}crontab\b|\bCronTab\(`,
    ),
  },
  {
    id: "persistence-cron-file",
    category: "persistence",
    severity: "dangerous",
    message:
      "writes a system cron file (/etc/crontab, /etc/cron.d/, /etc/cron.daily/…, /var/spool/cron): code that keeps running after the skill ends. Skills must not schedule themselves",
    pattern: rx(raw`/etc/(?:ana)?crontab\b|/etc/cron\.(?:d|hourly|daily|weekly|monthly)\b|/var/spool/cron\b`),
    near: WRITE_NEAR,
  },
  {
    id: "persistence-shell-startup",
    category: "persistence",
    severity: "dangerous",
    message:
      "writes a shell start-up file (~/.bashrc, ~/.profile, ~/.zshrc, /etc/profile, /etc/environment…): code that runs in every future login. Skills must not modify start-up files",
    pattern: rx(
      raw`(?<=["'/~\s])\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv)(?![\w.-])|/etc/(?:profile(?![\w.-])|bash\.bashrc\b|environment\b)|\.config/fish/config\.fish\b`,
    ),
    near: WRITE_NEAR,
  },
  {
    id: "persistence-systemd-unit",
    category: "persistence",
    severity: "dangerous",
    message:
      "writes a systemd unit (/etc/systemd/system, ~/.config/systemd/user, /lib/systemd/system): a service that outlives the skill. Skills must not install services",
    pattern: rx(raw`/etc/systemd/(?:system|user)\b|\.config/systemd/user\b|/(?:usr/)?lib/systemd/(?:system|user)\b`),
    near: WRITE_NEAR,
  },
  {
    id: "persistence-service-enable",
    category: "persistence",
    severity: "dangerous",
    message:
      "enables a boot-time service (systemctl enable/link/preset/daemon-reload, update-rc.d, chkconfig … on): a service that outlives the skill. Skills must not install services",
    pattern: rx(
      raw`\bsystemctl${SEP}(?:--user${SEP})?(?:enable|link|preset|daemon-reload)\b|\bupdate-rc\.d${SEP}[\w.-]{1,40}${SEP}(?:defaults|enable)\b|\bchkconfig${SEP}[\w.-]{1,40}${SEP}on\b`,
    ),
  },
  {
    id: "persistence-authorized-keys",
    category: "persistence",
    severity: "dangerous",
    message: "touches SSH authorized_keys: adding a key there plants a permanent login backdoor. Skills never need it",
    pattern: rx(raw`\bauthorized_keys2?\b`),
  },
  {
    id: "persistence-boot-hooks",
    category: "persistence",
    severity: "dangerous",
    message:
      "writes a boot or session hook (/etc/rc.local, /etc/init.d/, /etc/ld.so.preload, /etc/profile.d/, XDG autostart): code that runs automatically later. Skills must not install hooks",
    pattern: rx(raw`/etc/rc\.local\b|/etc/init\.d/|/etc/ld\.so\.preload\b|/etc/profile\.d/|/etc/xdg/autostart\b|\.config/autostart\b`),
    near: WRITE_NEAR,
  },
  {
    id: "persistence-python-startup",
    category: "persistence",
    severity: "dangerous",
    message:
      "puts sitecustomize.py, usercustomize.py or a .pth file into site-packages: Python runs them at every start-up, so this plants code in every later Python process. Skills must not modify the interpreter",
    pattern: rx(raw`\b(?:site|user)customize\.py\b|(?<=[\w-])\.pth["']`),
    // pip writes a sitecustomize.py into its private build directory; only site-packages is persistence.
    near: {
      pattern: rx(raw`\bget(?:user)?sitepackages\(|\bUSER_SITE\b|["'](?:purelib|platlib)["']|\b(?:site|dist)-packages\b`),
      before: 400,
      after: 240,
    },
  },

  // ── crypto-mining ────────────────────────────────────────────────────────────────────────
  {
    id: "mining-stratum-url",
    category: "crypto-mining",
    severity: "dangerous",
    message: "a stratum+tcp:// mining-pool URL: the skill would mine cryptocurrency on our hardware",
    pattern: rx(raw`\bstratum\d?\+(?:tcp|ssl|tls|udp)://`, "i"),
  },
  {
    id: "mining-miner-binary",
    category: "crypto-mining",
    severity: "dangerous",
    message: "names a cryptocurrency miner (xmrig, minerd, cpuminer, cgminer, ethminer…): the skill would mine on our hardware",
    pattern: rx(
      raw`\b(?:xmrig|minerd|cpuminer|cgminer|bfgminer|ethminer|nbminer|phoenixminer|lolminer|nanominer|xmr-stak|ccminer|t-rex-miner)\b`,
      "i",
    ),
  },
  {
    id: "mining-pool-host",
    category: "crypto-mining",
    severity: "dangerous",
    message: "names a mining pool or miner option (supportxmr, nanopool, nicehash, --donate-level…): the skill would mine on our hardware",
    pattern: rx(
      raw`--donate-level\b|\b(?:supportxmr|minexmr|moneroocean|nanopool|hashvault|nicehash|f2pool|2miners|herominers|unmineable|c3pool)\b`,
      "i",
    ),
  },
  {
    id: "mining-algorithm-name",
    category: "crypto-mining",
    severity: "caution",
    message:
      "names a proof-of-work mining algorithm (cryptonight, randomx, kawpow, ethash, equihash): fine for study code, but mining on the sandbox is not allowed",
    pattern: rx(raw`\b(?:cryptonight(?:[-_][a-z0-9]{1,10})?|randomx|kawpow|ethash|equihash)\b`, "i"),
  },

  // ── reverse-shell ────────────────────────────────────────────────────────────────────────
  {
    id: "reverse-shell-dev-tcp",
    category: "reverse-shell",
    severity: "dangerous",
    message: "uses bash's /dev/tcp or /dev/udp (e.g. bash -i >& /dev/tcp/host/port): the classic one-line reverse shell",
    pattern: rx(raw`/dev/(?:tcp|udp)/`),
  },
  {
    id: "reverse-shell-netcat",
    category: "reverse-shell",
    severity: "dangerous",
    message:
      "wires a shell to the network with netcat/socat/telnet (nc -e /bin/sh, ncat --sh-exec, mkfifo … | nc, socat exec:): a reverse shell",
    pattern: rx(
      raw`\b(?:nc|ncat|netcat)(?:\.(?:traditional|openbsd))?\b[^\n\r|;&]{0,80}?(?:\s|["'],\s{0,4}["'])(?:-[A-Za-z]{0,4}[ec]|--(?:sh-)?exec)[\s=,"']{1,6}(?:/[\w/]{0,20}/)?(?:(?:ba|z|da|k)?sh|python[\d.]{0,4}|perl|cmd(?:\.exe)?)\b|\bmkfifo\b[^\n\r]{0,160}?\|\s{0,4}(?:nc|ncat|netcat|telnet|openssl${SEP}s_client)\b|\bsocat\b[^\n\r]{0,160}?\b(?:exec|EXEC|system|SYSTEM):|\btelnet\b[^\n\r]{0,80}?\|\s{0,4}(?:/bin/)?(?:ba)?sh\b`,
    ),
  },
  {
    id: "reverse-shell-socket-stdio",
    category: "reverse-shell",
    severity: "dangerous",
    message:
      "connects a socket to a process's stdin/stdout (os.dup2(s.fileno(), …) or stdin=s.fileno()) in code that also opens a socket and starts a shell: a reverse shell",
    pattern: rx(
      raw`\bdup2\(\s{0,4}[\w.]{1,60}\.fileno\(\s{0,2}\)\s{0,4},|\b(?:stdin|stdout|stderr)\s{0,4}=\s{0,4}[\w.]{1,60}\.fileno\(\s{0,2}\)`,
    ),
    requires: [SOCKET, rx(raw`\bpty\.spawn\(|${SHELL_LIT}|["']-i["']`)],
  },
  {
    id: "reverse-shell-pty-spawn",
    category: "reverse-shell",
    severity: "dangerous",
    message: "spawns an interactive shell with pty.spawn in code that also opens a socket: a reverse shell",
    pattern: rx(raw`(?<![\w.])(?:pty\.)?spawn\(\s{0,4}\[?\s{0,4}${SHELL_LIT}`),
    requires: [SOCKET],
  },
  {
    id: "reverse-shell-oneliner",
    category: "reverse-shell",
    severity: "dangerous",
    message:
      "a Perl/PHP/Ruby/PowerShell socket one-liner (use Socket;, fsockopen, TCPSocket.new, Net.Sockets.TCPClient): the usual body of a reverse shell",
    pattern: rx(raw`\bfsockopen\(|\buse\s{1,4}Socket\s{0,4};|\bTCPSocket\.(?:new|open)\(|\bNet\.Sockets\.TCPClient\b`),
  },
];
