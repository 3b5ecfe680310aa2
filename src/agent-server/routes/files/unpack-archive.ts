import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { ConflictError, ForbiddenError, validationError } from '../../../errors/index.js';
import { type AgentUser, spawnAsAgent } from '../../agent-user.js';
import { DetailSchema, jsonContent, SuccessSchema, validationErrorResponse } from '../responses.js';
import { FileBytesSchema, FilePathQuerySchema } from './models.js';

export const UNPACK_PATH = '/api/file/unpack';
const TAR_TYPE = 'application/x-tar';

export const unpackArchiveRoute = createRoute({
  method: 'post',
  path: UNPACK_PATH,
  tags: ['Files'],
  summary: 'Unpack a tar archive into a new directory (our extension)',
  description:
    'The body, a tar archive, is unpacked as it arrives by `tar` run as the agent, into a directory made beside `path` and renamed to it once whole: ' +
    '`path` must not exist or be an empty directory. No size limit applies but the disk\'s. The control plane copies a repository it cloned into the workspace this way.',
  request: {
    query: FilePathQuerySchema,
    body: { required: true, content: { [TAR_TYPE]: { schema: FileBytesSchema } } },
  },
  responses: {
    200: jsonContent(SuccessSchema, 'Unpacked: `path` holds the archive'),
    403: jsonContent(DetailSchema, "The agent's user may not write there"),
    409: jsonContent(DetailSchema, '`path` already exists and is not an empty directory; nothing was changed'),
    ...validationErrorResponse,
  },
});

/** The exit status UNPACK_SCRIPT gives when the destination is taken. */
const TAKEN = 3;
/** Characters of tar's complaints kept for the answer. */
const STDERR_CHARS = 2_000;

/**
 * Run by bash as the agent with the destination as $1 and the archive on stdin. The archive lands
 * in a fresh directory beside the destination, which a rename puts in place only once tar is done:
 * an interrupted unpack leaves nothing at the destination, and a destination that filled up
 * meanwhile is never written into (the rename fails).
 */
const UNPACK_SCRIPT = `set -e
dest=$1
parent=$(dirname -- "$dest")
mkdir -p -- "$parent"
if [ -e "$dest" ] && { [ ! -d "$dest" ] || [ -n "$(ls -A -- "$dest")" ]; }; then exit ${TAKEN}; fi
tmp=$(mktemp -d -- "$parent/.unpack-XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
tar -x -f - -C "$tmp" --no-same-owner
mv -T -- "$tmp" "$dest" 2>/dev/null || exit ${TAKEN}
`;

export function registerUnpackArchive(app: OpenAPIHono, agentUser: AgentUser | undefined): void {
  app.openapi(unpackArchiveRoute, async (c) => {
    const { path } = c.req.valid('query');
    // Another type's body (JSON, a form) is read by the validators before this runs, and is no archive.
    const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (type !== undefined && type !== TAR_TYPE) throw validationError('header', ['content-type'], `The body must be a tar archive sent as ${TAR_TYPE}`, 'value_error');
    const body = c.req.raw.body;
    if (!body || c.req.raw.bodyUsed) throw validationError('body', [], 'Field required', 'missing');
    const { code, stderr } = await unpack(Readable.fromWeb(body as NodeReadableStream<Uint8Array>), path, agentUser, c.req.raw.signal);
    if (code === 0) return c.json({ success: true }, 200);
    if (code === TAKEN) throw new ConflictError(`${path} already exists and is not an empty directory`);
    if (/Permission denied|Read-only file system/.test(stderr)) throw new ForbiddenError(`Permission denied: ${stderr.trim().slice(-500)}`);
    throw validationError('body', [], `The archive could not be unpacked: ${stderr.trim().slice(-500) || `exit ${code}`}`);
  });
}

/** Runs UNPACK_SCRIPT with `archive` on its stdin; aborting kills it (its trap removes what it wrote). */
function unpack(archive: Readable, path: string, agentUser: AgentUser | undefined, signal: AbortSignal): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    // detached: its own process group, so that an abort stops tar as well as bash.
    const child = spawn('bash', ['-c', UNPACK_SCRIPT, 'unpack', path], { ...spawnAsAgent(agentUser, process.env), cwd: '/', detached: true, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_CHARS)));
    const stop = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // ESRCH: already gone.
      }
    };
    signal.addEventListener('abort', stop, { once: true });
    // The script may end before reading everything (a taken destination): the rest is not wanted.
    pipeline(archive, child.stdin).catch(() => archive.destroy());
    child.once('error', reject);
    child.once('close', (code) => {
      signal.removeEventListener('abort', stop);
      resolve({ code: code ?? -1, stderr });
    });
  });
}
