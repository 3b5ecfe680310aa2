import type Docker from 'dockerode';
import { statusCodeOf } from './docker-errors.js';

/** The id of the image `image` names on the engine now; null when the engine has no such image. Other failures throw. */
export async function imageIdOn(docker: Docker, image: string): Promise<string | null> {
  try {
    return (await docker.getImage(image).inspect()).Id;
  } catch (error) {
    if (statusCodeOf(error) === 404) return null;
    throw error;
  }
}
