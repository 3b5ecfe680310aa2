/**
 * Glob patterns as ripgrep's `-g` reads them (gitignore rules), for the search tools' fallback when
 * the image has no ripgrep: `*` and `?` stay within one path segment, `**` spans segments, `[...]`
 * is a class, `{a,b}` alternatives. A pattern without `/` matches a file's name at any depth; one
 * with `/` matches its path from the search root.
 */

export function globMatcher(pattern: string): (relativePath: string) => boolean {
  const anchored = pattern.includes('/');
  const body = pattern.replace(/^\/+/, '');
  const regex = new RegExp(`^${globToRegexSource(body)}$`);
  return (relativePath) => regex.test(anchored ? relativePath : relativePath.slice(relativePath.lastIndexOf('/') + 1));
}

function globToRegexSource(glob: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charAt(i);
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const atStart = i === 0 || glob[i - 1] === '/';
        const slashAfter = glob[i + 2] === '/';
        i += slashAfter ? 2 : 1;
        // `**/` is zero or more whole segments; a trailing `**` is anything.
        out += atStart && slashAfter ? '(?:.*/)?' : '.*';
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) {
        out += '\\[';
      } else {
        const inner = glob.slice(i + 1, end).replace(/^!/, '^').replaceAll('\\', '\\\\');
        out += `[${inner}]`;
        i = end;
      }
    } else if (c === '{') {
      braces += 1;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces -= 1;
      out += ')';
    } else if (c === ',' && braces > 0) {
      out += '|';
    } else if (c === '\\' && i + 1 < glob.length) {
      i += 1;
      out += escapeRegex(glob.charAt(i));
    } else {
      out += escapeRegex(c);
    }
  }
  return out + ')'.repeat(braces);
}

function escapeRegex(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}
