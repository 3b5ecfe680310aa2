const ALIVE_TIMEOUT_MS = 1_000;

/** GET <url>/alive on an agent-server; any answer but 2xx, or none in time, is "not yet". */
export async function checkAgentServerAlive(url: string, sessionApiKey: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/alive`, {
      headers: { 'X-Session-API-Key': sessionApiKey },
      signal: AbortSignal.timeout(ALIVE_TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
