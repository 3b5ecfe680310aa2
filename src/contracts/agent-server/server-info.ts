import { z } from 'zod';

/** GET /server_info of an agent-server: what it is, and how long it has been up and idle. */
export const ServerInfoSchema = z.object({
  title: z.string(),
  version: z.string(),
  /** Seconds since the server started. */
  uptime: z.number(),
  /** Seconds since a conversation last changed; 0 while an agent runs. */
  idle_time: z.number(),
  /** Where the interactive API reference is served. */
  docs: z.string(),
});

export type ServerInfo = z.output<typeof ServerInfoSchema>;
