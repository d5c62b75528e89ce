import type { Caller } from "../../src/identity/index.js";
import type { CallContext, RegisterSkillInput } from "../../src/control/index.js";

/** A skill that doubles `n`: clean Python the content guard and the parser let through unchanged. */
export const DOUBLER = `import json
import sys


def main() -> None:
    payload = json.loads(sys.argv[1])
    print(json.dumps({"doubled": payload["n"] * 2}))


if __name__ == "__main__":
    main()
`;

export const DOUBLER_SCHEMA = '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}';

/** RegisterSkill's input for a doubler named `name`, with `code` if given. */
export function doubler(name: string, overrides: Partial<RegisterSkillInput> = {}): RegisterSkillInput {
  return {
    name,
    description: `Doubles the integer n (${name}).`,
    parametersSchema: DOUBLER_SCHEMA,
    code: DOUBLER,
    testPayload: '{"n": 2}',
    ...overrides,
  };
}

/** An authenticated agent's call context (not an admin). */
export function agent(agentId: string): CallContext {
  const caller: Caller = { agentId, admin: false, authenticated: true };
  return { caller };
}

/** An admin's call context. */
export function admin(agentId = "ops"): CallContext {
  return { caller: { agentId, admin: true, authenticated: true } };
}
