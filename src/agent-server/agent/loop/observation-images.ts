/**
 * The images an observation shows the LLM: those in its content (an MCP tool's), and a browser
 * observation's screenshot, kept apart from the content as OpenHands keeps it, as a data URL.
 */
import type { Observation } from '../../../events/index.js';

/** The image formats a screenshot may be in, told apart by the first bytes of their base64. */
const BASE64_SIGNATURES: readonly [prefix: string, mime: string][] = [
  ['iVBORw0KGgo', 'image/png'],
  ['/9j/', 'image/jpeg'],
  ['R0lGODlh', 'image/gif'],
  ['UklGR', 'image/webp'],
];

export function observationImageUrls(observation: Observation): string[] {
  const urls = observation.content.flatMap((item) => (item.type === 'image' ? item.image_urls : []));
  if (observation.kind === 'BrowserObservation' && observation.screenshot_data) urls.push(screenshotUrl(observation.screenshot_data));
  return urls;
}

function screenshotUrl(base64: string): string {
  if (base64.startsWith('data:')) return base64;
  const mime = BASE64_SIGNATURES.find(([prefix]) => base64.startsWith(prefix))?.[1] ?? 'image/png';
  return `data:${mime};base64,${base64}`;
}
