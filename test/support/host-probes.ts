import { lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";

/** Processes on this host named `name` (/proc/<pid>/comm, which a process may set for itself). */
export async function processesNamed(name: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if ((await readFile(path.join("/proc", entry, "comm"), "utf8")).trim() === name) found.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return found;
}

/** Processes on this host whose command line contains `text` (what `ps -ef` shows any local user). */
export async function processesWhoseArgvContains(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if ((await readFile(path.join("/proc", entry, "cmdline"), "utf8")).includes(text)) found.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return found;
}

/** Every entry under `dir` on the host (links not followed), as relative path → size in bytes. */
export async function entriesUnder(dir: string): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  for (const name of await readdir(dir)) {
    const full = path.join(dir, name);
    const info = await lstat(full);
    found[name] = info.isDirectory() ? 0 : info.size;
    if (info.isDirectory()) {
      for (const [inner, size] of Object.entries(await entriesUnder(full))) found[path.join(name, inner)] = size;
    }
  }
  return found;
}
