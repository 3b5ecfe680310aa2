import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTerminalTool,
  shellEnvironment,
  type TerminalObservation,
  type Tool,
  type TerminalAction,
  type ToolContext,
} from '../../../../../src/agent-server/agent/tools/index.js';
import { hasProgram } from '../../../../../src/agent-server/agent/tools/search/run-search.js';
import { availablePtyBackend } from '../../../../../src/agent-server/agent/tools/terminal/shell-process.js';

let workspace: string;
let tool: Tool<TerminalAction, TerminalObservation>;

async function run(args: Record<string, unknown>, ctx?: ToolContext): Promise<TerminalObservation> {
  const parsed = tool.parseArguments(args);
  if (!parsed.ok) throw new Error(parsed.error);
  return tool.execute(parsed.action, ctx);
}

function text(observation: TerminalObservation): string {
  return observation.content.map((item) => ('text' in item ? item.text : '')).join('');
}

/** Whether a process exists and is not a zombie waiting for its reaper. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

async function waitForFile(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 20));
}

// Both terminals run here: CI provisions tmux (.ci/run), and script is in every Debian image.
it('finds both terminals on this machine, tmux first', () => {
  expect(availablePtyBackend()).toBe('tmux');
  expect(hasProgram('script')).toBe(true);
});

describe.each(['tmux', 'script'] as const)('in %s', (backend) => {
  beforeEach(async () => {
    workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'terminal-tool-')));
    tool = createTerminalTool({ workspaceDir: workspace, noChangeTimeoutSeconds: 20, outputLimit: 2_000, backend });
  });

  afterEach(async () => {
    await tool.close();
    await fs.rm(workspace, { recursive: true, force: true });
  });

  describe('terminal tool: a persistent session', () => {
    it('starts in the workspace and keeps the working directory and variables between commands', async () => {
      const first = await run({ command: 'pwd' });
      expect(text(first)).toContain(workspace);
      await run({ command: 'mkdir sub && cd sub && export GREETING=hi && shout() { echo "$1!"; }' });
      const second = await run({ command: 'pwd; echo "$GREETING"; shout hey' });
      expect(text(second)).toContain(`${workspace}/sub\nhi\nhey!`);
      expect(second.metadata.working_dir).toBe(`${workspace}/sub`);
      await run({ command: 'cd /tmp' });
      expect(text(await run({ command: 'pwd' }))).toMatch(/^\/tmp\n/);
    });

    it('reports exit codes and the observation fields of the client schema', async () => {
      const ok = await run({ command: 'echo done' });
      expect(ok).toMatchObject({
        kind: 'TerminalObservation',
        command: 'echo done',
        exit_code: 0,
        is_error: false,
        timeout: false,
        metadata: { exit_code: 0, working_dir: workspace },
      });
      expect(text(ok)).toBe(`done\n[The command completed with exit code 0.]\n[Current working directory: ${workspace}]`);
      const failed = await run({ command: 'bash -c "exit 7"' });
      expect(failed.exit_code).toBe(7);
      expect(failed.metadata.exit_code).toBe(7);
      expect(failed.is_error).toBe(false);
    });

    it('merges stderr into the output in order', async () => {
      const observation = await run({ command: 'echo out; echo err >&2; echo out again; ls /no/such/path' });
      expect(text(observation)).toMatch(/^out\nerr\nout again\nls: cannot access '\/no\/such\/path'/);
      expect(observation.exit_code).toBe(2);
    });

    it('runs multi-line commands, heredocs and quotes as one command', async () => {
      const observation = await run({ command: `cat <<'EOF'\nit's $HOME\nEOF\necho "two"; echo 'three'` });
      expect(text(observation)).toMatch(/^it's \$HOME\ntwo\nthree\n/);
      expect(observation.exit_code).toBe(0);
    });

    it('runs a command with lines longer than a terminal takes at once', async () => {
      const long = `x'y${'z'.repeat(6_000)}`;
      const ran = await run({ command: `printf '%s' "${long}" | wc -c; echo "${long}" | head -c 4; echo` });
      expect(ran.exit_code).toBe(0);
      expect(text(ran)).toMatch(/^6003\nx'yz\n/);
      expect(text(await run({ command: 'echo after' }))).toMatch(/^after\n/);
    });

    it('survives a syntax error', async () => {
      const broken = await run({ command: 'echo "unterminated' });
      expect(broken.exit_code).toBe(2);
      expect(text(broken)).toContain('unexpected EOF');
      expect((await run({ command: 'echo fine' })).exit_code).toBe(0);
    });

    it('cuts long output in the middle and says so', async () => {
      const observation = await run({ command: 'seq 1 5000' });
      const output = text(observation);
      expect(output.startsWith('1\n2\n3\n')).toBe(true);
      expect(output).toMatch(/characters of output omitted/);
      expect(output).toContain('4999\n5000\n[The command completed with exit code 0.]');
      expect(output.length).toBeLessThan(2_600);
    });

    it('does not source ~/.bashrc or profiles, even without SHLVL (as under a container init)', async () => {
      await fs.writeFile(path.join(workspace, '.bashrc'), 'export FROM_RC=yes\n');
      await fs.writeFile(path.join(workspace, '.bash_profile'), 'export FROM_PROFILE=yes\n');
      await tool.close();
      tool = createTerminalTool({ workspaceDir: workspace, env: { PATH: process.env.PATH, HOME: workspace } });
      expect(text(await run({ command: 'echo "[$FROM_RC][$FROM_PROFILE]"' }))).toMatch(/^\[\]\[\]\n/);
    });

    it('does not pass the session API keys nor their digests to the shell', async () => {
      const env = shellEnvironment({ PATH: process.env.PATH, OH_SESSION_API_KEYS_0: 'k0', SESSION_API_KEY: 'k', SESSION_API_KEY_SHA256: 'd', KEEP: 'yes' });
      expect(env).toMatchObject({ PATH: process.env.PATH, KEEP: 'yes', TERM: 'dumb' });
      await tool.close();
      tool = createTerminalTool({ workspaceDir: workspace, env });
      const shown = text(await run({ command: 'echo "[$OH_SESSION_API_KEYS_0][$SESSION_API_KEY][$SESSION_API_KEY_SHA256][$KEEP]"; env | grep -c SESSION_API_KEY' }));
      expect(shown).toMatch(/^\[\]\[\]\[\]\[yes\]\n0\n/);
    });
  });

  describe('terminal tool: commands that outlast their timeout', () => {
    it('reports a timeout, keeps the command running, and reports its end when asked again', async () => {
      const flag = path.join(workspace, 'finished');
      const started = await run({ command: `echo started; sleep 0.5; touch ${flag}; echo finished`, timeout: 0.1 });
      expect(started).toMatchObject({ timeout: true, exit_code: -1, is_error: false, metadata: { exit_code: -1 } });
      expect(text(started)).toContain('started');
      expect(text(started)).toMatch(/still running after 0\.1 seconds.*is_input=true/s);
      const rest = await run({ command: '', is_input: true, timeout: 20 });
      expect(existsSync(flag)).toBe(true);
      expect(rest).toMatchObject({ timeout: false, exit_code: 0 });
      expect(text(rest)).toMatch(/^\[Below is the output of the previous command\.\]\nfinished\n/);
      expect(text(rest)).not.toContain('started');
    });

    it('sends input to a program waiting for it', async () => {
      const asking = await run({ command: 'read -r name; echo "hello, $name"', timeout: 0.2 });
      expect(asking.timeout).toBe(true);
      const answered = await run({ command: 'Ada', is_input: true });
      expect(answered.exit_code).toBe(0);
      expect(text(answered)).toContain('hello, Ada');
    });

    it('interrupts a running program with C-c, keeping the session', async () => {
      await run({ command: 'export KEPT=yes; sleep 30; echo not reached', timeout: 0.2 });
      const interrupted = await run({ command: 'C-c', is_input: true });
      expect(interrupted.exit_code).toBe(130);
      expect(text(interrupted)).toContain('CTRL+C was sent');
      expect(text(interrupted)).not.toContain('not reached');
      expect(text(await run({ command: 'echo "$KEPT"' }))).toMatch(/^yes\n/);
    });

    it('refuses a new command while one runs, without running it', async () => {
      await run({ command: 'sleep 30', timeout: 0.1 });
      const marker = path.join(workspace, 'should-not-exist');
      const refused = await run({ command: `touch ${marker}` });
      expect(refused.is_error).toBe(true);
      expect(text(refused)).toContain('was NOT run');
      expect(existsSync(marker)).toBe(false);
      await run({ command: 'C-c', is_input: true });
    });

    it('interrupts the command and returns when the run is aborted', async () => {
      const controller = new AbortController();
      const started = path.join(workspace, 'started');
      // The shell itself makes the file and then waits in `read`, with no child process: a SIGINT that
      // lands as a child exits would be ignored (bash assumes the child handled it), this one cannot be.
      const pending = run({ command: `: > ${started}; read -r line` }, { signal: controller.signal });
      await waitForFile(started);
      controller.abort();
      const aborted = await pending;
      expect(aborted.exit_code).toBe(-1);
      expect(text(aborted)).toContain('interrupted with CTRL+C');
      expect((await run({ command: '', is_input: true })).exit_code).toBe(130);
      expect((await run({ command: 'echo next' })).exit_code).toBe(0);
    });

    it('does not start a command when the run is already stopped', async () => {
      const controller = new AbortController();
      controller.abort();
      const observation = await run({ command: 'echo hi' }, { signal: controller.signal });
      expect(observation.is_error).toBe(true);
      expect(text(observation)).toContain('not run');
    });
  });

  describe('terminal tool: a real terminal', () => {
    it('is a TTY of a useful size, with plain-text TERM', async () => {
      expect(text(await run({ command: 'tty; test -t 0 && test -t 1 && echo both; stty size; echo "$TERM"' }))).toMatch(
        /^\/dev\/pts\/\d+\nboth\n50 250\ndumb\n/,
      );
    });

    it('round-trips input through the python3 REPL and ends it with C-d', async () => {
      let shown = await run({ command: 'python3 -q', timeout: 1 });
      expect(shown).toMatchObject({ timeout: true, exit_code: -1 });
      // A loaded machine may take longer than a second to start python: wait for its prompt.
      for (let waits = 0; !text(shown).includes('>>>') && waits < 20; waits++) shown = await run({ command: '', is_input: true, timeout: 1 });
      expect(text(shown)).toContain('>>>');
      const answered = await run({ command: 'print(6 * 7)', is_input: true, timeout: 1 });
      expect(text(answered)).toMatch(/\b42\n/);
      const defined = await run({ command: 'x = "kept"', is_input: true, timeout: 1 });
      expect(defined.timeout).toBe(true);
      expect(text(await run({ command: 'x.upper()', is_input: true, timeout: 1 }))).toContain("'KEPT'");
      const ended = await run({ command: 'C-d', is_input: true, timeout: 10 });
      expect(ended).toMatchObject({ timeout: false, exit_code: 0 });
      expect(text(await run({ command: 'echo back in bash' }))).toMatch(/^back in bash\n/);
    });

    it('answers a read -p prompt, ends cat with C-d and stops a job with C-z', async () => {
      const prompt = await run({ command: 'read -r -p "Your name? " name; echo "hi $name"', timeout: 0.5 });
      expect(text(prompt)).toContain('Your name? ');
      expect(text(await run({ command: 'Ada', is_input: true }))).toContain('hi Ada');
      await run({ command: 'cat > typed.txt', timeout: 0.3 });
      await run({ command: 'line one', is_input: true, timeout: 0.3 });
      expect((await run({ command: 'C-d', is_input: true })).exit_code).toBe(0);
      expect(await fs.readFile(path.join(workspace, 'typed.txt'), 'utf8')).toBe('line one\n');
      await run({ command: 'sleep 30', timeout: 0.3 });
      const stopped = await run({ command: 'C-z', is_input: true });
      expect(stopped.exit_code).toBe(148);
      expect(text(stopped)).toContain('Stopped');
      expect(text(await run({ command: 'kill %1; jobs; echo ok' }))).toContain('ok');
    });

    it('returns a command that went quiet after no_change_timeout, with what it printed', async () => {
      await tool.close();
      tool = createTerminalTool({ workspaceDir: workspace, noChangeTimeoutSeconds: 0.5, backend });
      const quiet = await run({ command: 'echo first; sleep 30' });
      expect(quiet).toMatchObject({ timeout: true, exit_code: -1 });
      expect(text(quiet)).toMatch(/^first\n\[The command printed nothing new for 0\.5 seconds and is still running/);
      expect((await run({ command: 'C-c', is_input: true })).exit_code).toBe(130);
    });
  });

  describe('terminal tool: input without a running command', () => {
    it('is an error observation', async () => {
      const input = await run({ command: 'hello', is_input: true });
      expect(input.is_error).toBe(true);
      expect(text(input)).toContain('No command is running');
      expect((await run({ command: '' })).is_error).toBe(true);
      expect((await run({ command: 'C-d', is_input: true })).is_error).toBe(true);
    });
  });

  describe('terminal tool: reset, exit and close', () => {
    it('reset starts a new shell in the workspace and kills the running command', async () => {
      await run({ command: 'export GONE=1; cd /tmp' });
      await run({ command: 'sleep 30', timeout: 0.1 });
      const reset = await run({ command: 'pwd; echo "[$GONE]"', reset: true });
      expect(reset.command).toBe('pwd; echo "[$GONE]"');
      expect(text(reset)).toMatch(/^\[The terminal has been reset[^\n]*\]\n/);
      expect(text(reset)).toContain(`${workspace}\n[]\n`);
      const resetOnly = await run({ command: '', reset: true });
      expect(resetOnly).toMatchObject({ exit_code: 0, is_error: false });
      const both = await run({ command: 'x', reset: true, is_input: true });
      expect(both.is_error).toBe(true);
    });

    it('reports a shell that exits, and starts a new one for the next command', async () => {
      await run({ command: 'cd /tmp' });
      const exited = await run({ command: 'exit 3' });
      // tmux does not tell how its pane's shell ended.
      if (backend === 'script') expect(text(exited)).toContain('The shell exited with code 3');
      else expect(text(exited)).toContain('The shell ended');
      expect(exited.exit_code).toBe(backend === 'script' ? 3 : -1);
      expect(text(await run({ command: 'pwd' }))).toMatch(new RegExp(`^${workspace}\\n`));
    });

    it('close kills the shell and what it started in the background', async () => {
      const shellPid = Number(text(await run({ command: 'echo $$' })).split('\n')[0]);
      const started = await run({ command: 'sleep 300 > /dev/null 2>&1 &' });
      const backgroundPid = started.metadata.pid;
      expect(backgroundPid).toBeGreaterThan(0);
      expect(isAlive(shellPid) && isAlive(backgroundPid)).toBe(true);
      await tool.close();
      expect(isAlive(shellPid)).toBe(false);
      while (isAlive(backgroundPid)) await new Promise((resolve) => setTimeout(resolve, 20));
    });

    it('reports a shell that cannot start as an error observation', async () => {
      await tool.close();
      tool = createTerminalTool({ workspaceDir: path.join(workspace, 'missing') });
      const observation = await run({ command: 'echo hi' });
      expect(observation.is_error).toBe(true);
      expect(text(observation)).toContain('Could not start bash');
    });

    it('runs concurrent calls one after another', async () => {
      const [a, b] = await Promise.all([run({ command: 'sleep 0.1; echo a' }), run({ command: 'echo b' })]);
      expect(text(a)).toMatch(/^a\n/);
      expect(text(b)).toMatch(/^b\n/);
    });
  });
});
