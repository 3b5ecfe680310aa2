/**
 * What `undo_edit` restores: per file, the contents before each edit, newest last. `null` records
 * that the edit created the file. Bounded per file, since each entry is a whole file in memory.
 */
export class EditHistory {
  readonly #byPath = new Map<string, (string | null)[]>();

  constructor(readonly limitPerFile = 10) {}

  record(path: string, before: string | null): void {
    const stack = this.#byPath.get(path) ?? [];
    stack.push(before);
    if (stack.length > this.limitPerFile) stack.shift();
    this.#byPath.set(path, stack);
  }

  /** The contents before the last edit (null: it did not exist), or undefined with no edit left. */
  pop(path: string): string | null | undefined {
    const stack = this.#byPath.get(path);
    const before = stack?.pop();
    if (stack?.length === 0) this.#byPath.delete(path);
    return before;
  }
}
