/** Where sandboxctl writes: results on stdout, progress and errors on stderr. */
export interface OutputStream {
  write(chunk: string | Uint8Array): boolean;
  isTTY?: boolean;
}

export class Output {
  constructor(
    readonly stdout: OutputStream,
    readonly stderr: OutputStream,
  ) {}

  /** A line of the result. */
  line(text: string): void {
    this.stdout.write(`${text}\n`);
  }

  /** The result for scripts: indented JSON, one document. */
  json(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** One compact JSON document per line (NDJSON), for streams. */
  ndjson(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** A message about what happened, not part of the result. */
  note(text: string): void {
    this.stderr.write(`${text}\n`);
  }
}
