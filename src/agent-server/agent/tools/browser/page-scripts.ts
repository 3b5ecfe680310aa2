/**
 * What runs inside the page: numbering its interactive elements, and reading it as markdown.
 *
 * They are plain JavaScript text rather than TypeScript functions because a function's compiled
 * form may call helpers of this program (a bundler's or a test runner's), which the page lacks.
 */

/** The attribute that carries an element's index from one snapshot to the next action. */
export const INDEX_ATTRIBUTE = 'data-openhands-index';

/** At most this many elements are numbered: beyond it a snapshot costs more than it tells. */
export const MAX_ELEMENTS = 400;

/** An interactive element as a snapshot lists it. */
export interface PageElement {
  index: number;
  tag: string;
  text: string;
  type?: string;
  role?: string;
  name?: string;
  placeholder?: string;
  href?: string;
  value?: string;
  checked?: boolean;
  disabled?: boolean;
  in_viewport: boolean;
}

export interface PageSnapshot {
  elements: PageElement[];
  /** How many interactive elements the page has (more than `elements` holds when cut at MAX_ELEMENTS). */
  total: number;
  scroll: { y: number; viewport_height: number; page_height: number };
}

/**
 * Numbers the visible interactive elements in document order (dropping the numbers an earlier
 * snapshot left) and describes each. A password field's value is never read.
 */
export const SNAPSHOT_SCRIPT = `(() => {
  const ATTRIBUTE = ${JSON.stringify(INDEX_ATTRIBUTE)};
  const MAX = ${MAX_ELEMENTS};
  const SELECTOR = [
    'a[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea', 'summary', 'label[for]',
    '[role=button]', '[role=link]', '[role=checkbox]', '[role=radio]', '[role=tab]', '[role=menuitem]',
    '[role=option]', '[role=switch]', '[role=textbox]', '[role=combobox]', '[role=searchbox]',
    '[contenteditable=""]', '[contenteditable=true]', '[onclick]', '[tabindex]:not([tabindex="-1"])',
  ].join(',');
  for (const old of document.querySelectorAll('[' + ATTRIBUTE + ']')) old.removeAttribute(ATTRIBUTE);
  const clip = (text, max) => {
    const flat = (text || '').replace(/\\s+/g, ' ').trim();
    return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
  };
  const visible = (el) => {
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) return false;
    if (typeof el.checkVisibility === 'function') return el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    const style = getComputedStyle(el);
    return style.visibility !== 'hidden' && style.display !== 'none';
  };
  const all = Array.from(document.querySelectorAll(SELECTOR)).filter(visible);
  const elements = [];
  for (const el of all.slice(0, MAX)) {
    const index = elements.length;
    el.setAttribute(ATTRIBUTE, String(index));
    const rect = el.getBoundingClientRect();
    const tag = el.tagName.toLowerCase();
    const item = {
      index,
      tag,
      text: clip(el.innerText || el.getAttribute('aria-label') || el.getAttribute('title') || el.getAttribute('alt') || '', 100),
      in_viewport: rect.bottom > 0 && rect.right > 0 && rect.top < innerHeight && rect.left < innerWidth,
    };
    const type = el.getAttribute('type');
    if (type) item.type = type;
    const role = el.getAttribute('role');
    if (role) item.role = role;
    const name = el.getAttribute('name') || el.getAttribute('aria-label');
    if (name) item.name = clip(name, 60);
    const placeholder = el.getAttribute('placeholder');
    if (placeholder) item.placeholder = clip(placeholder, 60);
    if (tag === 'a') item.href = el.href;
    if ((tag === 'input' || tag === 'textarea' || tag === 'select') && type !== 'password' && el.value) item.value = clip(el.value, 100);
    if (tag === 'input' && (type === 'checkbox' || type === 'radio')) item.checked = el.checked;
    if (el.disabled === true) item.disabled = true;
    elements.push(item);
  }
  const root = document.scrollingElement || document.documentElement;
  return {
    elements,
    total: all.length,
    scroll: { y: Math.round(root.scrollTop), viewport_height: innerHeight, page_height: root.scrollHeight },
  };
})()`;

/**
 * The page's visible text as markdown: headings, paragraphs, lists, tables, code, quotes, and
 * (when asked) links and images with their addresses. Scripts, styles and hidden parts are left out.
 */
export function markdownScript(extractLinks: boolean): string {
  return `((extractLinks) => {
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'IFRAME', 'HEAD', 'META', 'LINK', 'OBJECT']);
  const BLOCK = new Set(['P', 'DIV', 'SECTION', 'ARTICLE', 'MAIN', 'HEADER', 'FOOTER', 'NAV', 'ASIDE', 'FORM', 'FIELDSET',
    'FIGURE', 'FIGCAPTION', 'DL', 'DT', 'DD', 'ADDRESS', 'DETAILS', 'SUMMARY', 'BODY', 'CENTER']);
  const hidden = (el) => typeof el.checkVisibility === 'function' ? !el.checkVisibility({ checkVisibilityCSS: true }) : false;
  const inline = (text) => text.replace(/\\s+/g, ' ');
  const children = (el, ctx) => Array.from(el.childNodes).map((n) => render(n, ctx)).join('');
  const block = (text) => '\\n\\n' + text.trim() + '\\n\\n';
  function render(node, ctx) {
    if (node.nodeType === Node.TEXT_NODE) return ctx.pre ? node.textContent : inline(node.textContent);
    if (node.nodeType !== Node.ELEMENT_NODE) return '';
    const el = node;
    const tag = el.tagName.toUpperCase();
    if (SKIP.has(tag) || hidden(el)) return '';
    if (/^H[1-6]$/.test(tag)) return block('#'.repeat(Number(tag[1])) + ' ' + children(el, ctx).trim());
    switch (tag) {
      case 'BR': return '\\n';
      case 'HR': return block('---');
      case 'PRE': return block('\`\`\`\\n' + el.innerText.replace(/\\n+$/, '') + '\\n\`\`\`');
      case 'CODE': return ctx.pre ? el.textContent : '\`' + el.textContent + '\`';
      case 'STRONG': case 'B': { const t = children(el, ctx).trim(); return t ? '**' + t + '** ' : ''; }
      case 'EM': case 'I': { const t = children(el, ctx).trim(); return t ? '*' + t + '* ' : ''; }
      case 'A': {
        const t = children(el, ctx).trim();
        return extractLinks && el.href && !el.href.startsWith('javascript:') ? '[' + t + '](' + el.href + ')' : t;
      }
      case 'IMG': {
        const alt = (el.getAttribute('alt') || '').trim();
        return extractLinks && el.src ? '![' + alt + '](' + el.src + ')' : alt;
      }
      case 'INPUT': case 'SELECT': case 'TEXTAREA': case 'BUTTON': {
        const t = tag === 'BUTTON' ? children(el, ctx).trim() : (el.getAttribute('placeholder') || el.getAttribute('aria-label') || '');
        return t ? ' ' + t + ' ' : '';
      }
      case 'UL': case 'OL': {
        const items = Array.from(el.children).filter((c) => c.tagName === 'LI' && !hidden(c));
        const depth = ctx.depth || 0;
        const lines = items.map((li, i) => {
          const marker = tag === 'OL' ? (i + 1) + '. ' : '- ';
          const body = children(li, { ...ctx, depth: depth + 1 }).trim().replace(/\\n{2,}/g, '\\n');
          return '  '.repeat(depth) + marker + body;
        });
        return depth > 0 ? '\\n' + lines.join('\\n') : block(lines.join('\\n'));
      }
      case 'TABLE': {
        const rows = Array.from(el.querySelectorAll('tr')).map((tr) =>
          Array.from(tr.children).map((cell) => children(cell, ctx).trim().replace(/\\|/g, '\\\\|').replace(/\\n+/g, ' ')));
        if (rows.length === 0) return '';
        const width = Math.max(...rows.map((r) => r.length));
        const line = (r) => '| ' + Array.from({ length: width }, (_, i) => r[i] || '').join(' | ') + ' |';
        return block([line(rows[0]), '|' + ' --- |'.repeat(width), ...rows.slice(1).map(line)].join('\\n'));
      }
      case 'BLOCKQUOTE': return block(children(el, ctx).trim().split('\\n').map((l) => '> ' + l).join('\\n'));
      case 'LI': return '\\n- ' + children(el, ctx).trim();
    }
    const text = children(el, ctx);
    return BLOCK.has(tag) ? block(text) : text;
  }
  const title = document.title ? '# ' + document.title.trim() + '\\n\\n' : '';
  const body = document.body ? render(document.body, { depth: 0, pre: false }) : '';
  return (title + body)
    .split('\\n').map((l) => l.replace(/[ \\t]+$/, '').replace(/^[ \\t]+(?![-\\d*|>])/, '')).join('\\n')
    .replace(/\\n{3,}/g, '\\n\\n').trim();
})(${JSON.stringify(extractLinks)})`;
}

/** Scrolls by 90% of a screen and answers where the view is. */
export function scrollScript(down: boolean): string {
  return `((down) => {
  const root = document.scrollingElement || document.documentElement;
  root.scrollBy(0, (down ? 1 : -1) * innerHeight * 0.9);
  return { y: Math.round(root.scrollTop), height: root.scrollHeight, viewport: innerHeight };
})(${JSON.stringify(down)})`;
}

/** The tab's sessionStorage as name/value pairs. */
export const READ_SESSION_STORAGE_SCRIPT = `Object.entries(sessionStorage).map(([name, value]) => ({ name, value }))`;

/** Writes localStorage and sessionStorage entries, each a list of {name, value}. */
export function writeStorageScript(local: readonly { name: string; value: string }[], session: readonly { name: string; value: string }[]): string {
  return `(([local, session]) => {
  for (const { name, value } of local) localStorage.setItem(name, value);
  for (const { name, value } of session) sessionStorage.setItem(name, value);
})(${JSON.stringify([local, session])})`;
}
