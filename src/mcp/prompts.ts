import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

/**
 * The two prompts (docs/mcp.md#prompts). Their rules are the service's: the skill contract and the gate
 * of docs/skill-lifecycle.md, and the reporting loop of docs/learning.md#outcomes.
 */
const USE_SKILL_LIBRARY = `You have a library of executable skills (small Python programs proven to work) behind these tools.

1. Before a task, call get_lessons with the task: read the lessons it returns and follow them.
2. Call find_skills with what the user wants, in their words. Each skill comes with its relevance (0..1), its
   input schema and the route_id of this answer. An empty list means no skill fits: do the task another way.
3. Call run_skill with the skill's name, arguments matching its input schema, and the route_id. Never wrap a skill
   in a script of your own: run it by name.
4. A result marked as an error is the skill's failure, with its one-line cause: fix the arguments if the cause is
   about them, else do the task another way and do not retry blindly.
5. Report: record_outcome with the run's invocation_id and whether the result achieved the goal (an exit 0 that
   did not help is a failure); route_feedback with the route_id when the proposed skill was the wrong one, or when
   you used something else (fallback: true). Reports decide which skills stay: skills that keep failing are retired.
6. When you solved something reusable by hand, make it a skill (see the create_skill prompt), and when you learned
   something about how to work, add_lesson.`;

const CREATE_SKILL = `Register a skill with register_skill. It is accepted only if it passes the gate:

- name: ^[A-Za-z_][A-Za-z0-9_-]{0,63}$, a verb_object name of what it does. An existing name of yours gets a new
  version; another agent's name is refused. First look with find_skills: if a similar skill exists, patch_skill it
  instead (the answer lists near-duplicates).
- description: what it does and when to use it, in the words a user would ask with; routing finds it by this.
  Add example_queries (up to 20) that it answers.
- parameters_schema: a JSON Schema object ({"type": "object", "properties": {...}, "required": [...]}); every
  input is checked against it before a run.
- code: Python 3. The input arrives as JSON text in sys.argv[1]; the module's top level reads it and prints the
  result on stdout (JSON for structured results). Success is exit code 0 and something printed; an exception, a
  non-zero exit, a timeout (10 s by default) or nothing printed is a failure. Example:
    import json, sys
    args = json.loads(sys.argv[1])
    print(json.dumps({"sum": args["a"] + args["b"]}))
- Only the standard library, no network, no files, no secrets, unless declared: requirements (PEP 508 specifiers,
  binary wheels from the operator's index), system_packages (Debian packages), secrets (names of your secrets,
  read from the environment), network_allow (hosts the operator allows).
- The code is normalized (wrappers, entities and escaped newlines from transport are undone) and checked by a
  content guard: no shell escapes, no reading the host, no obfuscated code; a refusal names the rule.
- test_payload: an input for which the skill succeeds. The skill runs once on it in a fresh sandbox; a failure
  is an error result whose text is the run's one-line cause (e.g. "ValueError: invalid literal for int() with
  base 10: 'x'"). Fix the cause and register again; nothing is kept from a refused registration.`;

export function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    "use_skill_library",
    {
      title: "Use the skill library",
      description: "How to find, run and report skills, and when to add one.",
      argsSchema: { task: z.string().optional().describe("The task at hand, if any.") },
    },
    ({ task }) => ({
      messages: [
        {
          role: "user",
          content: { type: "text", text: task ? `${USE_SKILL_LIBRARY}\n\nThe task: ${task}` : USE_SKILL_LIBRARY },
        },
      ],
    }),
  );
  server.registerPrompt(
    "create_skill",
    {
      title: "Create a skill",
      description: "What a registration needs to pass the service's gate, and how to write the skill.",
      argsSchema: { purpose: z.string().optional().describe("What the new skill should do.") },
    },
    ({ purpose }) => ({
      messages: [
        {
          role: "user",
          content: { type: "text", text: purpose ? `${CREATE_SKILL}\n\nThe skill to create: ${purpose}` : CREATE_SKILL },
        },
      ],
    }),
  );
}
