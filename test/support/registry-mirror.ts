import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/** The canonical directory's registry mirror (docs/operations.md#the-registry-mirror). */
export function mirrorDirectory(home: string): string {
  return path.join(home, "memory", "acquired_skills", ".registry");
}

/**
 * Every skill's mirror entry as its file holds it, in name order, read straight from the files
 * (`.registry/<name>.json`, each `{"format": 1, "skill": {...}}`), not through the service's reader.
 */
export async function readMirrorSkills<Entry = Record<string, unknown>>(home: string): Promise<Entry[]> {
  const directory = mirrorDirectory(home);
  const files = (await readdir(directory)).filter((file) => file.endsWith(".json")).sort();
  const entries: Entry[] = [];
  for (const file of files) {
    const document = JSON.parse(await readFile(path.join(directory, file), "utf8")) as { format: number; skill: Entry };
    if (document.format !== 1) throw new Error(`${file}: format ${document.format}`);
    entries.push(document.skill);
  }
  return entries;
}
