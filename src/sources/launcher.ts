/** Where a folder skill's files appear in the container (read-only, with the run directory). */
export const CONTAINER_FOLDER_DIR = "/sandbox/skill_dir";

/**
 * The skill file of a folder skill's run (docs/skill-sources.md#running): it makes the folder
 * (read-only) the working directory, puts the entrypoint's own directory first on `sys.path` and
 * runs the entrypoint as `__main__` with the payload as `sys.argv[1]`, exactly as a plain skill
 * is run. The launcher's own directory (the run directory, where declared dependencies' code is
 * placed) stays on `sys.path` after it. The entrypoint was checked to be a relative path inside the folder; it is embedded as a
 * JSON string literal, which Python reads as the same string.
 */
export function folderLauncher(entrypoint: string): string {
  return [
    "import os, runpy, sys",
    `_entry = os.path.join(${JSON.stringify(CONTAINER_FOLDER_DIR)}, ${JSON.stringify(entrypoint)})`,
    `os.chdir(${JSON.stringify(CONTAINER_FOLDER_DIR)})`,
    "sys.argv[0] = _entry",
    // The run directory stays importable after the entrypoint's own: declared dependencies sit there.
    "sys.path[0:1] = [os.path.dirname(_entry), os.path.dirname(os.path.abspath(__file__))]",
    'runpy.run_path(_entry, run_name="__main__")',
    "",
  ].join("\n");
}
