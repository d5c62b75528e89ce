import type { CommandSpec } from "./command-options.js";

/** skillctl's operator commands: the sandbox, the indexes, the environments of packages and the runtimes. */
export const OPERATOR_COMMANDS: Record<string, CommandSpec> = {
  "wipe-sandbox": {
    positionals: [0, 0],
    options: [],
    usage: "wipe-sandbox\n      Removes every run directory; loses no skill, cuts off runs in flight (admin only).",
  },
  rebuild: {
    positionals: [0, 0],
    options: [],
    usage:
      "rebuild\n" +
      "      Reconciles the canonical store with the registry, rewrites every skill's mirror file and re-indexes every\n" +
      "      skill for routing, without a restart (admin only). Prints skills indexed, repairs and duration.",
  },
  envs: {
    positionals: [0, 1],
    options: ["missing-only"],
    usage:
      "envs\n" +
      "      The environments of packages (docs/packages.md#operators): id, status, size, skill versions using it,\n" +
      "      locked files and declarations (--json: every locked file).\n" +
      "envs rebuild [--missing-only]\n" +
      "      Installs the environments again from their locks (--missing-only: those whose directory is gone), one\n" +
      "      at a time (admin only). Prints each one rebuilt, skipped or failed with its cause; exit code 1 on a failure.",
  },
  runtimes: {
    positionals: [0, 0],
    options: [],
    usage:
      "runtimes\n" +
      "      What environment builds depend on: the sandbox image's Python against the installer's, whether the\n" +
      "      package index or wheelhouse answers, whether Debian packages can be fetched. Exit code 1 when one is not so.",
  },
};
