/**
 * The YAML front matter skill files open with (`---` lines around `key: value` pairs), in the small
 * subset skill files use: scalars, quoted or not, and lists of scalars, inline (`[a, b]`) or as
 * `- item` lines under their key. Anything else is kept as text or ignored, never an error: a
 * skill with odd front matter still loads, by its body.
 */
export interface FrontMatter {
  fields: Record<string, string | string[]>;
  body: string;
}

export function parseFrontMatter(text: string): FrontMatter {
  const normalized = text.replace(/^\uFEFF/, '').replaceAll('\r\n', '\n');
  const match = /^---\n([\s\S]*?)\n---[ \t]*(?:\n|$)/.exec(normalized);
  if (!match) return { fields: {}, body: normalized };
  const fields: Record<string, string | string[]> = {};
  let listKey: string | null = null;
  for (const line of (match[1] ?? '').split('\n')) {
    const item = /^\s*-\s+(.*)$/.exec(line);
    if (item && listKey !== null) {
      const list = fields[listKey];
      if (Array.isArray(list)) list.push(unquote(item[1] ?? ''));
      continue;
    }
    const pair = /^([A-Za-z_][\w-]*)\s*:\s*(.*)$/.exec(line);
    if (!pair) continue;
    const key = pair[1] ?? '';
    const value = (pair[2] ?? '').trim();
    listKey = null;
    if (value === '') {
      fields[key] = [];
      listKey = key;
    } else if (value.startsWith('[') && value.endsWith(']')) {
      fields[key] = value.slice(1, -1).split(',').map(unquote).filter((entry) => entry !== '');
    } else {
      fields[key] = unquote(value);
    }
  }
  return { fields, body: normalized.slice(match[0].length) };
}

function unquote(value: string): string {
  const trimmed = value.trim();
  const quoted = /^(["'])(.*)\1$/.exec(trimmed);
  return quoted ? (quoted[2] ?? '') : trimmed;
}
