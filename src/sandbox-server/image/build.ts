import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';

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

/**
 * Builds the agent-server image from the package's Dockerfile. The context is only the Dockerfile
 * and the bundle (plus its source map): the program is bundled on the host, so the build copies
 * one file onto a base that already has node, and needs no network.
 */
export async function buildAgentServerImage(options: AgentServerImageOptions): Promise<void> {
  const docker = options.docker ?? new Docker();
  const contextDir = options.contextDir ?? findPackageRoot();
  if (!existsSync(join(contextDir, BUNDLE))) {
    throw new Error(`${join(contextDir, BUNDLE)} is missing: run \`npm run build\` before building the agent-server image`);
  }
  const optional = [`${BUNDLE}.map`, ...SWAGGER_UI_FILES].filter((file) => existsSync(join(contextDir, file)));
  const src = ['Dockerfile', BUNDLE, ...optional];
  const stream = await docker.buildImage(
    { context: contextDir, src },
    { t: options.tag, target: 'agent-server', buildargs: { BASE_IMAGE: options.baseImage }, rm: true, forcerm: true },
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
}

/** Builds the image unless the tag already exists. */
export async function ensureAgentServerImage(options: AgentServerImageOptions): Promise<'present' | 'built'> {
  const docker = options.docker ?? new Docker();
  try {
    await docker.getImage(options.tag).inspect();
    return 'present';
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
  await buildAgentServerImage({ ...options, docker });
  return 'built';
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
