import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The listening port of every address of a LocalNetwork. */
export const LOCAL_NETWORK_PORT = 7777;

export interface LocalNetwork {
  /** The addresses its one listener answers on (port LOCAL_NETWORK_PORT). */
  addresses: readonly string[];
  /** The local addresses connections were accepted on, in order. */
  accepted: () => string[];
  close: () => Promise<void>;
}

/**
 * A network namespace on this machine holding `addresses`, routed from the host through a veth
 * pair, with one TCP listener on all of them: a stand-in for a LAN, a cloud's metadata service or a
 * VPC, which a test may send packets to without any leaving the machine. Before answering it checks
 * that the host routes each address into the namespace, so a failed setup cannot send a probe out.
 * Needs root and `ip`.
 */
export async function openLocalNetwork(addresses: readonly string[], link: { host: string; peer: string }): Promise<LocalNetwork> {
  const id = randomBytes(3).toString('hex');
  // Not "sbx...": the firewall's rules match sandbox bridges by that prefix.
  const namespace = `egt-${id}`;
  const hostSide = `egt${id}h`;
  const peerSide = `egt${id}n`;
  const inNamespace = (...args: string[]) => run('ip', ['netns', 'exec', namespace, ...args]);
  let listener: ChildProcess | undefined;
  const close = async () => {
    listener?.kill('SIGKILL');
    for (const address of addresses) await run('ip', ['route', 'del', `${address}/32`]).catch(() => undefined);
    await run('ip', ['link', 'del', hostSide]).catch(() => undefined);
    await run('ip', ['netns', 'del', namespace]).catch(() => undefined);
  };
  try {
    await run('ip', ['netns', 'add', namespace]);
    await run('ip', ['link', 'add', hostSide, 'type', 'veth', 'peer', 'name', peerSide]);
    await run('ip', ['link', 'set', peerSide, 'netns', namespace]);
    await run('ip', ['addr', 'add', `${link.host}/30`, 'dev', hostSide]);
    await run('ip', ['link', 'set', hostSide, 'up']);
    await inNamespace('ip', 'addr', 'add', `${link.peer}/30`, 'dev', peerSide);
    await inNamespace('ip', 'link', 'set', peerSide, 'up');
    await inNamespace('ip', 'link', 'set', 'lo', 'up');
    await inNamespace('ip', 'route', 'add', 'default', 'via', link.host);
    for (const address of addresses) {
      await inNamespace('ip', 'addr', 'add', `${address}/32`, 'dev', 'lo');
      await run('ip', ['route', 'add', `${address}/32`, 'via', link.peer, 'dev', hostSide]);
      const { stdout } = await run('ip', ['route', 'get', address]);
      if (!stdout.includes(`dev ${hostSide}`)) throw new Error(`${address} is not routed into the test namespace: ${stdout}`);
    }
    const accepted: string[] = [];
    const script =
      `require("net").createServer((s) => { s.on("error", () => {}); console.log(s.localAddress.replace(/^::ffff:/, "")); s.end("hi"); })` +
      `.listen(${LOCAL_NETWORK_PORT}, "0.0.0.0", () => console.log("listening"));`;
    const child = spawn('ip', ['netns', 'exec', namespace, process.execPath, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    listener = child;
    await new Promise<void>((resolve, reject) => {
      let buffered = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          if (line === 'listening') resolve();
          else accepted.push(line);
        }
      });
      child.on('exit', (code) => reject(new Error(`the namespace's listener exited with ${code}`)));
    });
    return { addresses, accepted: () => [...accepted], close };
  } catch (error) {
    await close();
    throw error;
  }
}
