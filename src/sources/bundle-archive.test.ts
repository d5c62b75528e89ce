import { gzipSync } from "node:zlib";
import { pack } from "tar-stream";
import { describe, expect, it } from "vitest";
import { packBundle, unpackBundle } from "./bundle-archive.js";
import { checkedSegments } from "./folder-store.js";
import { folderHash } from "./folder-store.js";

async function tarGz(members: Array<{ name: string; content: string | Buffer }>): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on("data", (data: unknown) => chunks.push(data as Buffer));
  const done = new Promise<void>((resolve) => tar.on("end", () => resolve()));
  for (const m of members) tar.entry({ name: m.name }, Buffer.from(m.content));
  tar.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

describe("bundle archives", () => {
  it("packs and unpacks a folder byte for byte, stripping the one top folder", async () => {
    const files = [
      { path: "SKILL.md", content: Buffer.from("---\nname: a\ndescription: d\n---\n") },
      { path: "scripts/run.py", content: Buffer.from("print(1)\n") },
    ];
    const archive = await packBundle("a", files);
    expect(await unpackBundle(archive)).toEqual(files);
    // Fixed times and modes: the same folder always gives the same bytes.
    expect((await packBundle("a", files)).equals(archive)).toBe(true);
  });

  it("refuses more files than the cap and a bundle that unpacks past the byte limit, naming the member", async () => {
    const many = await tarGz(Array.from({ length: 4 }, (_, i) => ({ name: `f${i}.txt`, content: "x" })));
    await expect(unpackBundle(many, { maxFiles: 3, maxUnpackedBytes: 1 << 20, maxRatio: 1000 })).rejects.toThrow(
      /archive: member "f3\.txt": more than 3 files/,
    );
    const big = await tarGz([{ name: "big.bin", content: Buffer.alloc(5000, 7) }]);
    await expect(unpackBundle(big, { maxFiles: 10, maxUnpackedBytes: 4096, maxRatio: 1_000_000 })).rejects.toThrow(
      /archive: member "big\.bin": unpacks past 4096 bytes \(the limit\)/,
    );
  });

  it("refuses a member path that appears twice, and a file where another member needs a folder", async () => {
    const twice = await tarGz([
      { name: "tips/SKILL.md", content: "a" },
      { name: "tips/SKILL.md", content: "b" },
    ]);
    await expect(unpackBundle(twice)).rejects.toThrow(/member "tips\/SKILL\.md": appears twice/);
    const fileAndFolder = await tarGz([
      { name: "tips/SKILL.md", content: "a" },
      { name: "tips/lib", content: "file" },
      { name: "tips/lib/x.py", content: "print(1)" },
    ]);
    await expect(unpackBundle(fileAndFolder)).rejects.toThrow(/member "tips\/lib\/x\.py": needs a folder "tips\/lib"/);
  });

  it("keeps folder paths inside the folder", () => {
    expect(checkedSegments("references/guide.md")).toEqual(["references", "guide.md"]);
    for (const bad of ["../x", "a/../../x", "/etc/passwd", "a//b", "./a", "C:/x", "a\\b", ""]) {
      expect(() => checkedSegments(bad), bad).toThrow(/^path: /);
    }
  });

  it("hashes files in memory as discovery hashes them on disk, leaving out the .skill_id", () => {
    const files = [{ path: "SKILL.md", content: Buffer.from("x") }];
    expect(folderHash([...files, { path: ".skill_id", content: Buffer.from("a__imp_00000000\n") }])).toBe(folderHash(files));
    expect(folderHash([{ path: "SKILL.md", content: Buffer.from("y") }])).not.toBe(folderHash(files));
  });
});
