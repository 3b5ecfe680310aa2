import { beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/program.js';
import { freePort } from '../helpers/processes.js';
import { ensureBuilt, runSandboxctl } from './binary.js';

beforeAll(ensureBuilt, 120_000);

describe('sandboxctl usage', () => {
  it('lists every command on --help and exits 0', async () => {
    const { code, stdout, stderr } = await runSandboxctl(['--help']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    for (const command of COMMANDS) expect(stdout).toContain(`  ${command.name.join(' ')}  `);
    expect(stdout).toContain('Exit codes: 0 ok, 1 failure');
  });

  it('prints the help on stderr and exits 2 without a command', async () => {
    const { code, stdout, stderr } = await runSandboxctl([]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('Usage: sandboxctl <command> [options]');
  });

  it('has --help on every command', async () => {
    const results = await Promise.all(COMMANDS.map((command) => runSandboxctl([...command.name, '--help'])));
    results.forEach(({ code, stdout }, index) => {
      const command = COMMANDS[index]!;
      expect(code, command.name.join(' ')).toBe(0);
      expect(stdout).toMatch(new RegExp(`^Usage: sandboxctl ${command.name.join(' ')}`));
      expect(stdout).toContain('--json');
      for (const option of Object.keys(command.options ?? {})) expect(stdout).toContain(`--${option}`);
    });
  });

  it('lists a group with `<group> --help`, and asks for a command without one', async () => {
    const help = await runSandboxctl(['sandboxes', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('  sandboxes start ');
    expect(help.stdout).not.toContain('specs ls');

    expect(await runSandboxctl(['sandboxes'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'sandboxctl: "sandboxes" needs a command (see sandboxctl sandboxes --help)\n',
    });
  });

  it.each([
    [['frobnicate'], 'sandboxctl: unknown command "frobnicate" (see sandboxctl --help)'],
    [['sandboxes', 'frob'], 'sandboxctl: unknown command "sandboxes frob" (see sandboxctl sandboxes --help)'],
    [['sandboxes', 'ls', '--bogus'], "sandboxctl: Unknown option '--bogus' (see sandboxctl sandboxes ls --help)"],
    [['sandboxes', 'show'], 'sandboxctl: missing arguments: sandboxctl sandboxes show <sandbox> (see sandboxctl sandboxes show --help)'],
    [['sandboxes', 'show', 'a', 'b'], 'sandboxctl: unexpected argument "b" (see sandboxctl sandboxes show --help)'],
    [['sandboxes', 'ls', '--limit', 'many'], 'sandboxctl: --limit must be a whole number from 1 up, not "many" (see sandboxctl sandboxes ls --help)'],
    [['exec', 'sb1'], 'sandboxctl: no command to run: put it after --, e.g. sandboxctl exec sb1 -- ls -la (see sandboxctl exec --help)'],
    [['cp', './a', './b'], 'sandboxctl: exactly one of source and destination must be <sandbox>:<absolute path> (see sandboxctl cp --help)'],
    [['cp', './a', 'sb1:relative'], 'sandboxctl: the path in the sandbox must be absolute, e.g. sb1:/workspace/file.txt (see sandboxctl cp --help)'],
    [['specs', 'create', '--env', 'NOEQUALS', '--image', 'x'], 'sandboxctl: --env takes NAME=VALUE, not "NOEQUALS" (see sandboxctl specs create --help)'],
    [['conv', 'events', 'c1', '--kind', 'MesageEvent'], 'sandboxctl: unknown event kind "MesageEvent": one of Condensation, CondensationRequest'],
    [['specs', 'ls', '--url', 'ftp://host'], 'sandboxctl: invalid --url / SANDBOX_SERVER_URL "ftp://host": it must start with http:// or https://'],
  ])('exits 2 with one line for the mistake in %j', async (args, message) => {
    const { code, stdout, stderr } = await runSandboxctl(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')).toEqual([expect.stringContaining(message), '']);
  });

  it('exits 1 with what to fix when the server cannot be reached, by --url or SANDBOX_SERVER_URL', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const expected = { code: 1, stdout: '', stderr: `sandboxctl: cannot reach sandbox-server at ${url}: is it running? set --url or SANDBOX_SERVER_URL\n` };
    expect(await runSandboxctl(['sandboxes', 'ls', '--url', url])).toEqual(expected);
    expect(await runSandboxctl(['--url', url, '--json', 'specs', 'ls'])).toEqual(expected);
    expect(await runSandboxctl(['conv', 'ls'], { env: { SANDBOX_SERVER_URL: url } })).toEqual(expected);
  });
});
