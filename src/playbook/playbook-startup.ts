import { readLessonsMirror } from "./lessons-mirror.js";
import { indexLessons, type PlaybookCore } from "./playbook-core.js";

const META_INDEX = "index-identity";
/** Bumped when what the lesson indexes hold changes meaning, so the next start re-indexes. */
const INDEX_LAYOUT = 1;

/**
 * Start-up: restores lessons that `lessons.json` holds and the table lacks (a lost or rebuilt
 * registry.db), re-indexes when the embedder or the counts changed, and rewrites the mirror.
 */
export async function startPlaybook(core: PlaybookCore): Promise<{ restored: number; reindexed: boolean }> {
  const restored = await restoreFromMirror(core);
  await core.vectors.ensure(core.embedder.dimensions);
  const identity = `${core.embedder.modelId}/${core.embedder.dimensions}/layout-${INDEX_LAYOUT}`;
  const active = core.store.countActive();
  const stale = core.store.meta(META_INDEX) !== identity || (await core.vectors.count()) !== active || core.keywords.count() !== active;
  if (stale) {
    core.logger.info({ lessons: active, embedder: identity }, "re-indexing lessons");
    await reindexLessons(core);
    core.store.setMeta(META_INDEX, identity);
  }
  await core.mirror.flush();
  return { restored, reindexed: stale };
}

/** Re-embeds and re-indexes every active lesson; inactive ones leave both indexes. */
export async function reindexLessons(core: PlaybookCore): Promise<void> {
  await core.vectors.ensure(core.embedder.dimensions);
  core.keywords.clear();
  const inactive = core.store.list(undefined, ["archived", "deleted"]).map((l) => l.id);
  for (let i = 0; i < inactive.length; i += 256) await core.vectors.remove(inactive.slice(i, i + 256));
  const active = core.store.list(undefined, ["active"]);
  for (let i = 0; i < active.length; i += 64) await indexLessons(core, active.slice(i, i + 64));
}

async function restoreFromMirror(core: PlaybookCore): Promise<number> {
  let reading;
  try {
    reading = await readLessonsMirror(core.mirrorDirectory);
  } catch (error) {
    core.logger.error({ err: error }, "lessons.json is unreadable; lessons not in registry.db cannot be restored from it");
    return 0;
  }
  if (!reading) return 0;
  for (const problem of reading.skipped) core.logger.warn({ problem }, "lessons.json: skipped an unreadable entry");
  const missing = reading.lessons.filter((l) => core.store.get(l.id) === undefined);
  if (missing.length === 0) return 0;
  core.store.transaction("restore lessons from lessons.json", () => {
    for (const lesson of missing) core.store.insert(lesson);
  });
  core.logger.warn({ restored: missing.length }, "restored lessons from lessons.json that registry.db did not hold");
  return missing.length;
}
