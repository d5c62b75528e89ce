/**
 * Which package provides a module whose import name differs from its package's name
 * (docs/packages.md#the-alias-table). The dependency scan and the missing-module cause use it to
 * say what to declare; a module not listed here is assumed to come from the pip distribution of
 * its own name and the Debian package `python3-<module>`.
 */
export interface ImportAlias {
  /** pip distributions that provide the module; the first is the one suggested. */
  readonly pip: readonly [string, ...string[]];
  /**
   * The Debian 12 package that provides it; `null` when Debian has none (its package of that name
   * installs the module under another name, or there is none). Absent: `python3-<module>`.
   */
  readonly debian?: string | null;
}

/**
 * Keyed by the import name, dotted where only a subpackage says which package it is
 * (`google.protobuf`). Debian names were checked against bookworm's archive.
 */
export const IMPORT_ALIASES: Readonly<Record<string, ImportAlias>> = {
  // The import name differs from the distribution's.
  yaml: { pip: ["PyYAML"] },
  PIL: { pip: ["Pillow"], debian: "python3-pil" },
  cv2: {
    pip: ["opencv-python-headless", "opencv-python", "opencv-contrib-python-headless", "opencv-contrib-python"],
    debian: "python3-opencv",
  },
  sklearn: { pip: ["scikit-learn"] },
  skimage: { pip: ["scikit-image"] },
  bs4: { pip: ["beautifulsoup4"] },
  dateutil: { pip: ["python-dateutil"] },
  "google.protobuf": { pip: ["protobuf"], debian: "python3-protobuf" },
  // Debian's python3-pycryptodome installs the module as Cryptodome, never as Crypto.
  Crypto: { pip: ["pycryptodome", "pycrypto"], debian: null },
  Cryptodome: { pip: ["pycryptodomex"], debian: "python3-pycryptodome" },
  jwt: { pip: ["PyJWT"] },
  dotenv: { pip: ["python-dotenv"] },
  magic: { pip: ["python-magic"] },
  serial: { pip: ["pyserial"] },
  usb: { pip: ["pyusb"] },
  attr: { pip: ["attrs"] },
  OpenSSL: { pip: ["pyOpenSSL"], debian: "python3-openssl" },
  docx: { pip: ["python-docx"] },
  pptx: { pip: ["python-pptx"], debian: null },
  fitz: { pip: ["PyMuPDF"] },
  git: { pip: ["GitPython"] },
  zmq: { pip: ["pyzmq"] },
  psycopg2: { pip: ["psycopg2-binary", "psycopg2"] },
  MySQLdb: { pip: ["mysqlclient"], debian: "python3-mysqldb" },
  pymysql: { pip: ["PyMySQL"] },
  nacl: { pip: ["PyNaCl"] },
  dns: { pip: ["dnspython"], debian: "python3-dnspython" },
  websocket: { pip: ["websocket-client"] },
  ldap: { pip: ["python-ldap"] },
  gi: { pip: ["PyGObject"] },
  cairo: { pip: ["pycairo"] },
  Bio: { pip: ["biopython"], debian: "python3-biopython" },
  Levenshtein: { pip: ["python-Levenshtein", "Levenshtein"], debian: "python3-levenshtein" },
  unidecode: { pip: ["Unidecode"] },
  markdown_it: { pip: ["markdown-it-py"], debian: "python3-markdown-it" },
  bson: { pip: ["pymongo"] },
  pytz: { pip: ["pytz"], debian: "python3-tz" },
  slugify: { pip: ["python-slugify"] },
  // The same name on both sides (listed so that the common ones are known, not guessed).
  lxml: { pip: ["lxml"] },
  numpy: { pip: ["numpy"] },
  pandas: { pip: ["pandas"] },
  requests: { pip: ["requests"] },
  scipy: { pip: ["scipy"] },
  matplotlib: { pip: ["matplotlib"] },
  jinja2: { pip: ["Jinja2"] },
  markdown: { pip: ["Markdown"] },
  pypdf: { pip: ["pypdf"] },
  PyPDF2: { pip: ["PyPDF2"], debian: "python3-pypdf2" },
  openpyxl: { pip: ["openpyxl"] },
  xlsxwriter: { pip: ["XlsxWriter"] },
  charset_normalizer: { pip: ["charset-normalizer"] },
  "ruamel.yaml": { pip: ["ruamel.yaml"], debian: "python3-ruamel.yaml" },
  orjson: { pip: ["orjson"], debian: null },
};

/** The dotted prefixes of `module`, longest first: `a.b.c`, `a.b`, `a`. */
function prefixes(module: string): string[] {
  const parts = module.split(".");
  return parts.map((_, i) => parts.slice(0, parts.length - i).join("."));
}

/** What provides a module, as the scan and the missing-module cause name it. */
export interface ModuleProvider {
  /** The name the finding quotes: the alias table's key when one matched, else the top-level module. */
  readonly module: string;
  /** pip distributions that provide it; the first is suggested. */
  readonly pip: readonly [string, ...string[]];
  /** The Debian package that provides it, or undefined when Debian has none. */
  readonly debian: string | undefined;
}

/** The Debian form of a module: `python3-` and the top-level module in lower case, `_` as `-`. */
export function debianFormOf(module: string): string {
  return `python3-${(module.split(".")[0] ?? module).toLowerCase().replace(/_/g, "-")}`;
}

/**
 * Which packages provide `module` (a dotted import name): the alias table's entry for its
 * longest listed prefix; otherwise the distribution named like its top-level module and
 * `python3-<module>`.
 */
export function providerOf(module: string): ModuleProvider {
  for (const prefix of prefixes(module)) {
    const alias = Object.hasOwn(IMPORT_ALIASES, prefix) ? IMPORT_ALIASES[prefix] : undefined;
    if (alias) {
      const debian = alias.debian === undefined ? debianFormOf(prefix) : (alias.debian ?? undefined);
      return { module: prefix, pip: alias.pip, debian };
    }
  }
  const top = module.split(".")[0] ?? module;
  return { module: top, pip: [top], debian: debianFormOf(top) };
}
