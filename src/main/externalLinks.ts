/**
 * Which links the desktop app hands to the system browser (`shell.openExternal`, from the
 * window-open handler in index.ts): https only, to an exact host in a short allowlist, on the
 * default port, without credentials in the URL. Everything else is dropped: openExternal on an
 * arbitrary URL lets a page that got script into the renderer launch other programs' URL handlers
 * or phishing pages outside the sandbox (Electron security checklist, "Do not use openExternal
 * with untrusted content").
 *
 * Pure (no electron import). Tested by test/main/externalLinks.test.ts.
 */

/** Hosts the app links to: its code and papers, and model pages. Exact names, no wildcards. */
export const EXTERNAL_LINK_HOSTS: readonly string[] = ['github.com', 'arxiv.org', 'huggingface.co'];

/** Whether `url` may be opened in the system browser. */
export function isAllowedExternalLink(url: string, hosts: readonly string[] = EXTERNAL_LINK_HOSTS): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.protocol === 'https:' && u.port === '' && u.username === '' && u.password === '' && hosts.includes(u.hostname);
}
