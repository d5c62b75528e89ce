/**
 * The subjects the control plane and the runners talk on, all under one prefix so several
 * deployments can share a bus (docs/execution-hosts.md#subjects).
 */
export interface Subjects {
  /** Run requests; runners take them as members of {@link RUNNERS_QUEUE}, one free slot per subscription. */
  readonly runs: string;
  /** Every runner's status, published each heartbeat and whenever a slot frees. */
  readonly status: string;
  /** Wipe requests, answered by every runner (not a queue group). */
  readonly wipe: string;
  /** Where a given runner listens for the cancellation of a run it took. */
  cancel(runnerId: string): string;
}

/** The queue group of the runs subject: each run goes to one member. */
export const RUNNERS_QUEUE = "runners";

export function subjectsUnder(prefix: string): Subjects {
  return {
    runs: `${prefix}.runs`,
    status: `${prefix}.runners.status`,
    wipe: `${prefix}.runners.wipe`,
    cancel: (runnerId) => `${prefix}.runners.${runnerId}.cancel`,
  };
}
