import { toConversationInfo } from './conversation-info.js';
import { zipArchive } from './zip-archive.js';
import type { ConversationContext } from '../context.js';

/**
 * The conversation as a ZIP (OpenHands' trajectory download): `<id hex>/meta.json` with its
 * settings, keys masked and secrets left out, and `<id hex>/events.ndjson` with every event.
 */
export async function exportConversationTrajectory(ctx: ConversationContext, id: string): Promise<Buffer> {
  const conversation = ctx.conversations.require(id);
  const log = await ctx.conversations.openLog(conversation);
  const lines: string[] = [];
  for await (const line of log.exportLines()) lines.push(line);
  const folder = conversation.metadata.id.replace(/-/g, '');
  const modified = new Date();
  return zipArchive([
    { name: `${folder}/meta.json`, data: Buffer.from(JSON.stringify(toConversationInfo(conversation.metadata), null, 2)), modified },
    { name: `${folder}/events.ndjson`, data: Buffer.from(lines.join('')), modified },
  ]);
}
