import { InvalidArgumentError } from "../../errors/index.js";
import type { RunInputFile, RunOutputFile } from "../../execution/index.js";

/**
 * Files through a composition (docs/composition.md#files): every step is handed the composition's
 * input files at `/sandbox/in/<path>` and every earlier step's output files at
 * `/sandbox/in/steps/<step-id>/<path>`, within the input-file limits.
 */

/** Where earlier steps' files are placed under `/sandbox/in/`; a caller's file may not be there. */
export const STEPS_DIR = "steps";

/** The longest path of a file handed to a run (docs/files.md#input-files). */
const MAX_PATH_LENGTH = 1024;

/** What one run may be handed (docs/files.md#input-files): the composition's steps are bounded by it too. */
export interface StepFileLimits {
  readonly maxFiles: number;
  readonly maxTotalBytes: number;
}

/** The files a composition hands its steps, and its limits. */
export interface CompositionFiles {
  /** The composition's input files (the invocation's `files`; a nested composition's: what it was handed). */
  readonly inputs: readonly RunInputFile[];
  readonly limits: StepFileLimits;
}

/** An earlier step's files as later steps receive them, under `steps/<id>/`. */
export interface HandedOn {
  readonly id: string;
  readonly files: readonly RunInputFile[];
  readonly bytes: number;
}

/**
 * INVALID_ARGUMENT when a caller's file of a composed skill is at `steps` or under `steps/`: that
 * place holds earlier steps' files. `field` is the request's (`files`).
 */
export function refuseStepsPaths(field: string, inputs: readonly RunInputFile[]): void {
  inputs.forEach((file, index) => {
    if (file.path === STEPS_DIR || file.path.startsWith(`${STEPS_DIR}/`)) {
      throw new InvalidArgumentError(
        `${field}[${index}] (${JSON.stringify(file.path.slice(0, 200))})`,
        `a composed skill's files may not be at ${STEPS_DIR}/: /sandbox/in/${STEPS_DIR}/<step-id>/ holds earlier steps' files ` +
          "(docs/composition.md#files)",
      );
    }
  });
}

/**
 * A step's output files as later steps receive them: under `steps/<id>/`, without the ones that
 * came back truncated (a later step would read half a file) or whose path would be too long there;
 * `warnings` says which were not handed on.
 */
export function handOn(id: string, outputs: readonly RunOutputFile[]): { handed: HandedOn; warnings: string[] } {
  const files: RunInputFile[] = [];
  const warnings: string[] = [];
  let bytes = 0;
  for (const file of outputs) {
    const placed = `${STEPS_DIR}/${id}/${file.path}`;
    if (file.truncated) warnings.push(`step "${id}": its file ${file.path} came back truncated; later steps are not handed it`);
    else if (placed.length > MAX_PATH_LENGTH)
      warnings.push(`step "${id}": its file ${file.path} is not handed to later steps: /sandbox/in/${placed} is too long a path`);
    else {
      files.push({ path: placed, content: file.content });
      bytes += file.content.byteLength;
    }
  }
  return { handed: { id, files, bytes }, warnings };
}

/**
 * The files step `id` is handed: the composition's inputs (without those under `steps/<own id>/`
 * for the composition's own step ids: in a nested composition its own steps' files take that
 * place), then earlier steps' files, newest first, while the count and the total stay within the
 * limits; past them that step's files and every older step's are left out, and the warning says so.
 */
export function filesForStep(
  id: string,
  files: CompositionFiles,
  ownIds: ReadonlySet<string>,
  earlier: readonly HandedOn[],
): { files: RunInputFile[]; warning?: string } {
  const inputs = files.inputs.filter((file) => {
    const [top, stepId] = file.path.split("/", 2);
    return !(top === STEPS_DIR && stepId !== undefined && ownIds.has(stepId));
  });
  let count = inputs.length;
  let bytes = inputs.reduce((sum, file) => sum + file.content.byteLength, 0);
  const handed: RunInputFile[][] = [];
  const leftOut: string[] = [];
  for (let index = earlier.length - 1; index >= 0; index--) {
    const step = earlier[index] as HandedOn;
    if (step.files.length === 0) continue;
    if (leftOut.length === 0 && count + step.files.length <= files.limits.maxFiles && bytes + step.bytes <= files.limits.maxTotalBytes) {
      count += step.files.length;
      bytes += step.bytes;
      handed.unshift([...step.files]);
    } else leftOut.unshift(step.id);
  }
  const result = [...inputs, ...handed.flat()];
  if (leftOut.length === 0) return { files: result };
  const { maxFiles, maxTotalBytes } = files.limits;
  return {
    files: result,
    warning:
      `step "${id}" was not handed the files of ${leftOut.map((s) => `step "${s}"`).join(", ")}: with them it would take more than ` +
      `the ${maxFiles} files or ${maxTotalBytes} bytes a run may take (SKILL_ENGINE_INPUT_FILES_MAX, SKILL_ENGINE_INPUT_FILES_MB)`,
  };
}
