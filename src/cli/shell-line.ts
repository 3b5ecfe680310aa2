/**
 * The bash command line that runs `words` exactly as that argv. The agent-server's bash route takes
 * one command string (its wire contract), so each word is single-quoted: inside single quotes bash
 * gives no character a meaning, and a quote itself is written as '\''.
 */
export function shellLineFor(words: readonly string[]): string {
  return words.map(quoteWord).join(' ');
}

function quoteWord(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}
