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
  outputFiles: { spaceBytes: 64 * 1024 * 1024, maxFiles: 256, maxFileBytes: 16 * 1024 * 1024, maxTotalBytes: 32 * 1024 * 1024 },
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

describe("sandboxContainerSpec: a run with an environment of packages (docs/packages.md#at-run-time)", () => {
  const environment = { id: "0123abcd", hostPath: "/srv/home/environments/0123abcd" };
  const withEnvironment = sandboxContainerSpec({
    ...base,
    command: { kind: "cold", skillName: "yaml_skill", purpose: "invoke", environment },
  });
  const without = sandboxContainerSpec({ ...base, command: { kind: "cold", skillName: "echo", purpose: "invoke" } });

  it("mounts the environment read-only at /opt/skill-env beside the run directory, and puts it on the import path", () => {
    expect(withEnvironment.HostConfig?.Mounts).toEqual([
      { Type: "bind", Source: base.runDir, Target: "/sandbox", ReadOnly: true },
      { Type: "bind", Source: environment.hostPath, Target: "/opt/skill-env", ReadOnly: true },
    ]);
    expect(withEnvironment.Env).toContain("PYTHONPATH=/opt/skill-env/site:/opt/skill-env/deb/usr/lib/python3/dist-packages");
  });

  it("keeps everything else exactly as a run without one: no network, read-only root, the same user and limits", () => {
    const { Mounts: _mounts, ...hostConfig } = withEnvironment.HostConfig ?? {};
    const { Mounts: _plainMounts, ...plainHostConfig } = without.HostConfig ?? {};
    expect(hostConfig).toEqual(plainHostConfig);
    expect(withEnvironment.User).toBe(without.User);
    expect(withEnvironment.NetworkDisabled).toBe(true);
    expect(without.Env?.some((e) => e.startsWith("PYTHONPATH="))).toBe(false);
    expect(without.HostConfig?.Mounts).toHaveLength(1);
  });

  it("gives a warm container of an environment's pool the same mount and import path as a cold run of it", () => {
    const warm = sandboxContainerSpec({ ...base, command: { kind: "warm", environment } });
    expect(warm.HostConfig?.Mounts).toEqual(withEnvironment.HostConfig?.Mounts);
    expect(warm.Env).toEqual(withEnvironment.Env);
    const plainWarm = sandboxContainerSpec({ ...base, command: { kind: "warm" } });
    expect(plainWarm.HostConfig?.Mounts).toEqual(without.HostConfig?.Mounts);
    expect(plainWarm.Env).toEqual(without.Env);
  });
});

describe("sandboxContainerSpec: an environment's own variables", () => {
  it("sets the import and library paths its build computed, and no other variable it names", () => {
    const environment = {
      id: "0123abcd",
      hostPath: "/srv/home/environments/0123abcd",
      variables: {
        PYTHONPATH: "/opt/skill-env/site",
        LD_LIBRARY_PATH: "/opt/skill-env/deb/usr/lib/x86_64-linux-gnu/blas",
        LD_PRELOAD: "/x.so",
      },
    };
    const spec = sandboxContainerSpec({ ...base, command: { kind: "cold", skillName: "s", purpose: "invoke", environment } });
    expect(spec.Env?.filter((e) => /^(PYTHONPATH|LD_)/.test(e))).toEqual([
      "PYTHONPATH=/opt/skill-env/site",
      "LD_LIBRARY_PATH=/opt/skill-env/deb/usr/lib/x86_64-linux-gnu/blas",
    ]);
  });
});
