import { describe, expect, it } from "vitest";
import {
  LABEL_BOOT,
  LABEL_INSTANCE,
  LABEL_MANAGED,
  LABEL_PURPOSE,
  LABEL_RUN_ID,
  LABEL_SKILL,
  SANDBOX_USER,
  sandboxContainerSpec,
} from "./container-spec.js";
import type { SandboxLimits } from "../sandbox-runner.js";
import { CONTAINER_ENTRY_SCRIPT } from "./container-entry.js";

const limits: SandboxLimits = {
  timeoutMs: 10_000,
  memoryBytes: 256 * 1024 * 1024,
  cpus: 0.5,
  pidsLimit: 64,
  outputLimitBytes: 1024 * 1024,
  tmpfsBytes: 64 * 1024 * 1024,
  maxFileBytes: 16 * 1024 * 1024,
};

const base = {
  image: "skill-engine-sandbox:latest",
  runtime: undefined,
  limits,
  runDir: "/srv/sandbox/runs/se1-boot-run",
  instanceTag: "se1",
  bootId: "boot",
  runId: "se1-boot-run",
} as const;

describe("sandboxContainerSpec: the hardening a security reviewer checks", () => {
  const cold = sandboxContainerSpec({ ...base, command: { kind: "cold", skillName: "echo", purpose: "invoke" } });

  it("gives the container no network, no capabilities, no privileges to gain, no writable root and no root user", () => {
    expect(cold.NetworkDisabled).toBe(true);
    expect(cold.User).toBe(SANDBOX_USER);
    expect(cold.HostConfig).toMatchObject({
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      Init: true,
    });
    expect(cold.HostConfig?.CapAdd).toBeUndefined();
    expect(cold.HostConfig?.Privileged).toBeUndefined();
  });

  it("caps processes, memory without swap, CPU, open files, file size, /tmp and /dev/shm", () => {
    expect(cold.HostConfig).toMatchObject({
      PidsLimit: 64,
      Memory: 256 * 1024 * 1024,
      MemorySwap: 256 * 1024 * 1024,
      NanoCpus: 500_000_000,
      ShmSize: 64 * 1024 * 1024,
      Tmpfs: { "/tmp": `rw,nosuid,nodev,noexec,size=${64 * 1024 * 1024},mode=1777` },
      Ulimits: [
        { Name: "nofile", Soft: 256, Hard: 256 },
        { Name: "fsize", Soft: 16 * 1024 * 1024, Hard: 16 * 1024 * 1024 },
      ],
      LogConfig: { Type: "none", Config: {} },
    });
  });

  it("binds only the run's own directory, read-only, and nothing else", () => {
    expect(cold.HostConfig?.Mounts).toEqual([{ Type: "bind", Source: base.runDir, Target: "/sandbox", ReadOnly: true }]);
    expect(cold.HostConfig?.Binds).toBeUndefined();
    expect(cold.Volumes).toBeUndefined();
  });

  it("labels the container so the reaper finds it, and keeps the payload off the command line", () => {
    expect(cold.Labels).toEqual({
      [LABEL_MANAGED]: "true",
      [LABEL_INSTANCE]: "se1",
      [LABEL_BOOT]: "boot",
      [LABEL_RUN_ID]: "se1-boot-run",
      [LABEL_SKILL]: "echo",
      [LABEL_PURPOSE]: "invoke",
    });
    // The payload arrives on stdin (the entry script's one job), never in argv, where `ps` shows it.
    expect(cold.Cmd).toEqual(["python3", "-c", CONTAINER_ENTRY_SCRIPT]);
    expect(cold.OpenStdin).toBe(true);
    expect(cold.AttachStdin).toBe(true);
    expect(cold.HostConfig?.Runtime).toBeUndefined();
  });

  it("gives a warm container the same confinement, stdin for its one job, and the runtime asked for", () => {
    const warm = sandboxContainerSpec({ ...base, runtime: "runsc", command: { kind: "warm" } });
    expect(warm.HostConfig).toEqual({ ...cold.HostConfig, Runtime: "runsc" });
    expect(warm.NetworkDisabled).toBe(true);
    expect(warm.User).toBe(SANDBOX_USER);
    expect(warm.OpenStdin).toBe(true);
    expect(warm.Labels?.[LABEL_PURPOSE]).toBe("warm");
    expect(warm.Cmd?.slice(0, 2)).toEqual(["python3", "-c"]);
  });
});
