import type Docker from 'dockerode';
import { demultiplexLogs } from './docker-logs.js';
import { statusCodeOf, toRuntimeError } from './docker-errors.js';
import type { DiskUsage } from './runtime.js';

/** A `du` of the data volume that takes longer than this (millions of files) counts as unmeasured. */
const DU_TIMEOUT_MS = 60_000;

/**
 * What a running container holds on disk. The writable layer is the engine's own count (`SizeRw`,
 * the files of the container's upper directory). The data volume is counted by `du` run as root
 * inside the container, the only way that works on every engine, local or remote: the agent cannot
 * hide files from root there, and whatever it does to `du`'s running time only delays the answer.
 * Overlay2 on ext4 has no per-container quota (that needs xfs with pquota), so this count is what
 * the disk limit is enforced by.
 */
export async function dockerDiskUsage(docker: Docker, containerId: string, dataMountPath: string): Promise<DiskUsage | undefined> {
  const container = docker.getContainer(containerId);
  let writableBytes: number;
  try {
    // `size` is a query flag the types lack.
    const info = (await container.inspect({ size: true } as Docker.ContainerInspectOptions)) as Docker.ContainerInspectInfo & { SizeRw?: number };
    if (!info.State.Running || info.State.Paused) return undefined;
    writableBytes = info.SizeRw ?? 0;
  } catch (error) {
    if (statusCodeOf(error) === 404) return undefined;
    throw toRuntimeError(error, 'inspect size');
  }
  return { writableBytes, dataBytes: await duKilobytes(container, dataMountPath).then((kb) => (kb === null ? null : kb * 1024)) };
}

/** `du -skx path` in the container as root; null when it cannot tell (no `du`, gone, too slow). */
async function duKilobytes(container: Docker.Container, path: string): Promise<number | null> {
  try {
    const exec = await container.exec({ Cmd: ['du', '-skx', path], User: '0:0', AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({ hijack: true, stdin: false });
    const output = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => {
        stream.destroy();
        reject(new Error(`du took over ${DU_TIMEOUT_MS} ms`));
      }, DU_TIMEOUT_MS);
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        clearTimeout(timer);
        resolve(Buffer.concat(chunks));
      });
      stream.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    const { ExitCode } = await exec.inspect();
    // du exits 1 when it could not read everything (a file removed while it counted): its sum still counts.
    const sum = /^(\d+)\s/m.exec(demultiplexLogs(output))?.[1];
    return (ExitCode === 0 || ExitCode === 1) && sum !== undefined ? Number(sum) : null;
  } catch {
    return null;
  }
}
