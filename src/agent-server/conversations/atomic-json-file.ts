import { open, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `file` with `value` as JSON so that a crash leaves either the old or the new document,
 * never a mix: write a temp file beside it, fsync it, rename it over, fsync the directory.
 * The directory must exist; a save never re-creates a directory that was removed.
 */
export async function writeJsonAtomic(file: string, value: unknown, mode = 0o600): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  const handle = await open(temp, 'w', mode);
  try {
    // Compact: indenting every level would let a deeply nested setting grow many times over.
    await handle.writeFile(`${JSON.stringify(value)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  await syncDirectory(dirname(file));
}

/** fsync of a directory, so a rename in it survives a crash. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * A JSON document saved atomically from the current value of `read()`. Saves never overlap (they
 * would share the temp file), and saves asked for while one is running coalesce into one more
 * write, which reads the value when it starts and so carries every change made before it.
 */
export class AtomicJsonFile {
  private last: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;

  constructor(
    readonly file: string,
    private readonly read: () => unknown,
  ) {}

  save(): Promise<void> {
    if (this.queued) return this.queued;
    const write = this.last
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return writeJsonAtomic(this.file, this.read());
      });
    this.queued = write;
    this.last = write;
    return write;
  }

  /** Resolves once no save is running or queued, whether or not the last one succeeded. */
  async settled(): Promise<void> {
    await this.last.catch(() => undefined);
  }
}
