import type Docker from "dockerode";
import { extract } from "tar-stream";
import { LABEL_BOOT, LABEL_INSTANCE, LABEL_MANAGED, LABEL_PURPOSE } from "./container-spec.js";
import { fromDockerError } from "./docker-errors.js";

/** The text of a file in a tar stream (the engine's archive of one path), or undefined when it holds none. */
async function firstFileOf(archive: NodeJS.ReadableStream): Promise<string | undefined> {
  const reader = extract();
  let text: string | undefined;
  reader.on("entry", (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: unknown) => {
      chunks.push(Buffer.from(chunk as Uint8Array));
    });
    stream.on("end", () => {
      if (text === undefined && header.type === "file") text = Buffer.concat(chunks).toString("utf8");
      next();
    });
    stream.resume();
  });
  await new Promise<void>((resolve, reject) => {
    reader.on("finish", resolve);
    reader.on("error", reject);
    archive.on("error", reject);
    archive.pipe(reader);
  });
  return text;
}

/**
 * What environments need to know of the sandbox image (docs/packages.md#environments): its id,
 * which is part of every environment's id; its dpkg status, so apt fetches only what the image
 * lacks; and its Python version, read from that status (Debian's python3.X package), so no
 * container has to run for it. The status is read from a container that is created and never
 * started, labelled like every container of ours so an interrupted read is swept like an orphan.
 */
export class SandboxImageInfo {
  private status: { readonly imageId: string; readonly text: Promise<string> } | undefined;

  constructor(
    private readonly docker: Docker,
    private readonly image: string,
    private readonly instanceTag: string,
  ) {}

  async id(): Promise<string> {
    try {
      return (await this.docker.getImage(this.image).inspect()).Id;
    } catch (error) {
      throw fromDockerError(error, { image: this.image, action: `inspect image ${this.image}` });
    }
  }

  async dpkgStatus(): Promise<string> {
    const imageId = await this.id();
    if (this.status?.imageId !== imageId) {
      const text = this.readStatus();
      text.catch(() => {
        if (this.status?.text === text) this.status = undefined;
      });
      this.status = { imageId, text };
    }
    return this.status.text;
  }

  async pythonVersion(): Promise<string | undefined> {
    const status = await this.dpkgStatus().catch(() => "");
    for (const stanza of status.split(/\n\n+/)) {
      const name = /^Package: python3\.\d+(?:-minimal)?$/m.test(stanza);
      const version = /^Version: (?:\d+:)?(\d+\.\d+\.\d+)/m.exec(stanza)?.[1];
      if (name && version && /^Status: install ok installed$/m.test(stanza)) return version;
    }
    return undefined;
  }

  private async readStatus(): Promise<string> {
    let container: Docker.Container | undefined;
    try {
      container = await this.docker.createContainer({
        Image: this.image,
        Cmd: ["true"],
        NetworkDisabled: true,
        Labels: { [LABEL_MANAGED]: "true", [LABEL_INSTANCE]: this.instanceTag, [LABEL_BOOT]: "image-info", [LABEL_PURPOSE]: "image-info" },
        HostConfig: { NetworkMode: "none", ReadonlyRootfs: true },
      });
      const archive = await container.getArchive({ path: "/var/lib/dpkg/status" });
      return (await firstFileOf(archive)) ?? "";
    } catch (error) {
      throw fromDockerError(error, { image: this.image, action: `read /var/lib/dpkg/status of image ${this.image}` });
    } finally {
      await container?.remove({ force: true }).catch(() => undefined);
    }
  }
}
