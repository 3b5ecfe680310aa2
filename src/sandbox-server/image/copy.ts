import type Docker from 'dockerode';

/**
 * Copies the image `tag` from one engine to another without a registry: `docker save` on the
 * source streamed straight into `docker load` on the target, over their APIs (the image keeps its
 * id and labels). One progress line per step.
 */
export async function copyImage(from: Docker, to: Docker, tag: string, onProgress: (line: string) => void): Promise<void> {
  onProgress(`saving ${tag} from the source engine`);
  const saved = await from.getImage(tag).get();
  onProgress(`loading ${tag} into the target engine`);
  const loading = await to.loadImage(saved, { quiet: true });
  const events = await new Promise<LoadEvent[]>((resolve, reject) => {
    saved.on('error', reject);
    to.modem.followProgress(loading, (error, output: LoadEvent[]) => (error ? reject(error) : resolve(output)));
  });
  // Like a build, a load reports its failure inside the stream.
  const failure = events.find((event) => event.error);
  if (failure) throw new Error(`loading ${tag} failed: ${failure.errorDetail?.message ?? failure.error}`);
  onProgress(`copied ${tag}`);
}

interface LoadEvent {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}
