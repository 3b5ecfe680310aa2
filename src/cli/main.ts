/**
 * sandboxctl (bundled to dist/sandboxctl.js): the operator's command line for a sandbox-server.
 * Exit codes: 0 ok, 1 failure, 2 usage; `exec` passes the remote command's exit code through.
 */
import { runCli } from './program.js';

// A reader that went away (`sandboxctl conv events x --follow | head`) is not a failure.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

process.exitCode = await runCli(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr });
