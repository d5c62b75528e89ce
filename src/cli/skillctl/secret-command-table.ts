import type { CommandSpec } from "./command-options.js";

/** skillctl's secrets commands (docs/security.md#secrets): the calling agent's own secrets, and the key's rotation. */
export const SECRET_COMMANDS: Record<string, CommandSpec> = {
  secrets: {
    positionals: [1, 2],
    options: ["value-file"],
    usage:
      "secrets set NAME [--value-file PATH]\n" +
      "      Sets the calling agent's secret NAME (A-Z, 0-9, _), creating or replacing it. The value (4 bytes to 64 KiB of\n" +
      "      UTF-8; one final newline is dropped) is read from stdin, or from PATH with --value-file, never from the\n" +
      "      command line, where `ps` and the shell's history would show it: skillctl secrets set API_KEY < key.txt\n" +
      "secrets delete NAME\n" +
      "      Deletes the calling agent's secret NAME.\n" +
      "secrets list\n" +
      "      The calling agent's secrets: name, created, updated, and the skills it can see that declare each. Never a value.\n" +
      "secrets rotate-key\n" +
      "      Re-encrypts every agent's secrets under a new key in SKILL_ENGINE_SECRETS_KEY_FILE (admin only).",
  },
};
