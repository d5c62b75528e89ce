import { describe, expect, it } from "vitest";
import { CappedOutput } from "./capped-output.js";

function feed(output: CappedOutput, chunks: Array<string | Buffer>): Promise<void> {
  return new Promise((resolve, reject) => {
    for (const chunk of chunks) output.writable.write(chunk);
    output.writable.end(() => resolve());
    output.writable.on("error", reject);
  });
}

describe("CappedOutput", () => {
  it("keeps everything under the limit", async () => {
    const output = new CappedOutput(100);
    await feed(output, ["hello ", "world"]);
    expect(output.text()).toBe("hello world");
    expect(output.truncated).toBe(false);
  });

  it("keeps the head up to the limit, flags truncation and keeps the tail for summaries", async () => {
    const output = new CappedOutput(10);
    await feed(output, ["0123456789abc", "def", "\nValueError: tail"]);
    expect(output.text()).toBe("0123456789");
    expect(output.truncated).toBe(true);
    expect(output.tailText().endsWith("ValueError: tail")).toBe(true);
  });

  it("never cuts a UTF-8 character in half", async () => {
    const output = new CappedOutput(5);
    await feed(output, [Buffer.from("abcdé", "utf8")]); // é is two bytes: the cap falls inside it
    expect(output.text()).toBe("abcd");
  });

  it("of 4 MiB written, keeps only the first limit bytes and an 8 KiB tail, and says it truncated", async () => {
    const output = new CappedOutput(1024);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    await feed(
      output,
      Array.from({ length: 64 }, () => chunk),
    );
    expect(output.truncated).toBe(true);
    expect(output.text().length).toBe(1024);
    expect(output.tailText().length).toBe(8 * 1024);
  });
});
