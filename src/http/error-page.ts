/**
 * Error answers for people: a browser that navigates to a preview URL asks for HTML first, and a
 * JSON `{"detail"}` shown raw tells a person less than a page. Programs (which ask for JSON, or
 * send no Accept) keep the JSON body.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html !== -1 && (json === -1 || html < json);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function errorPage(status: number, title: string, detail: string): Response {
  return new Response(errorPageHtml(status, title, detail), { status, headers: ERROR_PAGE_HEADERS });
}

/** The headers of an error page, for servers that write it on node:http (the fast paths). */
export const ERROR_PAGE_HEADERS = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } as const;

export function errorPageHtml(status: number, title: string, detail: string): string {
  const escape = (text: string) => text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#222}h1{font-size:1.4em}</style></head>
<body><h1>${escape(title)}</h1><p>${escape(detail)}</p><p><small>${status} · sandbox-server</small></p></body></html>
`;
}
