import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { LABEL_AGENT_SERVER_VERSION } from '../runtime/runtime.js';

export interface AgentServerImageOptions {
  docker?: Docker;
  /** The image to build FROM (build arg BASE_IMAGE): a public node image, or sandbox-base:local offline. */
  baseImage: string;
  /** The tag to build, e.g. sandbox-server/agent-server:local. */
  tag: string;
  /** One line of build output at a time. */
  onProgress?(line: string): void;
  /** The directory holding the Dockerfile and dist/agent-server.js; default: this package's root. */
  contextDir?: string;
}

const BUNDLE = 'dist/agent-server.js';

/** The /docs page's assets, copied beside the bundle by `npm run build`. */
const SWAGGER_UI_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'].map((file) => `dist/swagger-ui/${file}`);

/** The browser tools' driver, copied beside the bundle by `npm run build`. */
const NODE_MODULES = 'dist/node_modules';

/**
 * Builds the agent-server image from the package's Dockerfile. The context is only the Dockerfile
 * and the bundle (plus its source map): the program is bundled on the host, so the build copies
 * one file onto a base that already has node, and needs no network. The image is labelled with
 * its agent-server version (see agentServerVersion). Returns that version.
 */
export async function buildAgentServerImage(options: AgentServerImageOptions): Promise<string> {
  const docker = options.docker ?? new Docker();
  const contextDir = options.contextDir ?? findPackageRoot();
  const src = buildContextFiles(contextDir);
  const version = await agentServerVersion(docker, contextDir, src, options.baseImage);
  const stream = await docker.buildImage(
    { context: contextDir, src },
    {
      t: options.tag,
      target: 'agent-server',
      buildargs: { BASE_IMAGE: options.baseImage },
      labels: { [LABEL_AGENT_SERVER_VERSION]: version },
      rm: true,
      forcerm: true,
    },
  );
  const output = await new Promise<BuildEvent[]>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error, events: BuildEvent[]) => (error ? reject(error) : resolve(events)),
      (event: BuildEvent) => {
        for (const line of (event.stream ?? '').split('\n')) if (line.trim()) options.onProgress?.(line);
      },
    );
  });
  // The engine reports a failed build inside the stream, not as an HTTP error.
  const failure = output.find((event) => event.error);
  if (failure) throw new Error(`building ${options.tag} failed: ${failure.errorDetail?.message ?? failure.error}`);
  return version;
}

/**
 * Makes the tag hold the agent-server this program carries: built when missing, rebuilt when the
 * image we built earlier came from other inputs (an upgraded control plane brings a new bundle),
 * left alone when it is current or was not built by us (an operator's own image under that tag).
 */
export async function ensureAgentServerImage(options: AgentServerImageOptions): Promise<'present' | 'built' | 'rebuilt'> {
  const docker = options.docker ?? new Docker();
  let labels: Record<string, string> | undefined;
  try {
    labels = (await docker.getImage(options.tag).inspect()).Config.Labels ?? {};
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
  if (!labels) {
    await buildAgentServerImage({ ...options, docker });
    return 'built';
  }
  const built = labels[LABEL_AGENT_SERVER_VERSION];
  if (built === undefined) return 'present';
  const contextDir = options.contextDir ?? findPackageRoot();
  if (built === (await agentServerVersion(docker, contextDir, buildContextFiles(contextDir), options.baseImage))) return 'present';
  await buildAgentServerImage({ ...options, docker, contextDir });
  return 'rebuilt';
}

/** The files the build sends: the Dockerfile, the bundle, its driver modules, and what of its other companions exists. */
function buildContextFiles(contextDir: string): string[] {
  for (const required of [BUNDLE, NODE_MODULES]) {
    if (!existsSync(join(contextDir, required))) {
      throw new Error(`${join(contextDir, required)} is missing: run \`npm run build\` before building the agent-server image`);
    }
  }
  const optional = [`${BUNDLE}.map`, ...SWAGGER_UI_FILES].filter((file) => existsSync(join(contextDir, file)));
  return ['Dockerfile', BUNDLE, ...optional, ...filesUnder(contextDir, NODE_MODULES)];
}

/** Every file under `dir` (relative to the context), sorted so the version hash does not depend on listing order. */
function filesUnder(contextDir: string, dir: string): string[] {
  return readdirSync(join(contextDir, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(contextDir.length + 1))
    .sort();
}

/**
 * `<package version>+<12 hex digits>`: the digits hash everything that goes into the image (each
 * context file's name and bytes, and the base image's id, or its name while it is not pulled), so
 * two images carry the same version exactly when they were built from the same inputs.
 */
async function agentServerVersion(docker: Docker, contextDir: string, files: string[], baseImage: string): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files) {
    const bytes = await readFile(join(contextDir, file));
    hash.update(`${file}\0${bytes.length}\0`).update(bytes);
  }
  hash.update(`base\0${await imageIdOf(docker, baseImage)}`);
  return `${await packageVersionOf(contextDir)}+${hash.digest('hex').slice(0, 12)}`;
}

async function imageIdOf(docker: Docker, image: string): Promise<string> {
  try {
    return (await docker.getImage(image).inspect()).Id;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    return image;
  }
}

async function packageVersionOf(contextDir: string): Promise<string> {
  try {
    const { version } = JSON.parse(await readFile(join(contextDir, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

interface BuildEvent {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** The package root holds the Dockerfile; it sits at a different depth from src/ and from dist/. */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'Dockerfile'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('the agent-server Dockerfile was not found above the program');
    dir = parent;
  }
}
