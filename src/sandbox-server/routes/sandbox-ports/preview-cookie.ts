/** The cookie a preview token becomes in a browser: one per sandbox port, scoped by path (path mode) or host (host mode). */
export const PREVIEW_COOKIE = 'sandbox_preview';

/** Every value of the preview cookie in a `Cookie` header: a browser sends one per matching path. */
export function previewCookieValues(cookieHeader: string | undefined): string[] {
  if (!cookieHeader) return [];
  return cookieHeader
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${PREVIEW_COOKIE}=`))
    .map((pair) => pair.slice(PREVIEW_COOKIE.length + 1));
}

/** The `Cookie` header without the preview cookie: the app in the sandbox never sees a token. */
export function withoutPreviewCookie(cookieHeader: string): string {
  return cookieHeader
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.length > 0 && !pair.startsWith(`${PREVIEW_COOKIE}=`))
    .join('; ');
}

export function previewCookie(token: string, path: string, maxAgeSeconds: number, secure: boolean): string {
  return `${PREVIEW_COOKIE}=${token}; Path=${path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}
