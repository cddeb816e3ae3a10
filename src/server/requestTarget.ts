/**
 * The request target of web mode, read without anything that can throw: `new URL()` threw on
 * `GET http://[ HTTP/1.1` and `decodeURIComponent` on `/%E0%A4%A`, each ending the server
 * (issue 26). The target is split once into its raw path (still percent-encoded: prefixes such
 * as `/api/` are compared on it) and its query (URLSearchParams, which never throws on a bad
 * escape), so the token can be checked before any part of the path is decoded; `decodePath`
 * decodes later and answers null instead of throwing.
 *
 * Only origin-form targets (`/path?query`) are accepted: browsers and the CLI send nothing else
 * to a server on 127.0.0.1, and absolute-form (`http://host/path`) is for proxies.
 *
 * Not here: the checks themselves (server.ts). Tested by test/server/fuzz.test.ts.
 */

export interface RequestTarget {
  /** The path as sent, still percent-encoded, without the query. */
  rawPath: string;
  query: URLSearchParams;
}

/** Splits `GET <target>`'s target; null when it is not origin-form. */
export function parseRequestTarget(target: string | undefined): RequestTarget | null {
  if (!target || !target.startsWith('/')) return null;
  const hash = target.indexOf('#'); // never sent by browsers; ignored like one
  const text = hash >= 0 ? target.slice(0, hash) : target;
  const q = text.indexOf('?');
  const rawPath = q >= 0 ? text.slice(0, q) : text;
  const query = new URLSearchParams(q >= 0 ? text.slice(q + 1) : '');
  return { rawPath, query };
}

/** The decoded path without its leading `/`; null for a malformed percent-escape or a NUL byte. */
export function decodePath(rawPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath.slice(1));
  } catch {
    return null;
  }
  return decoded.includes('\0') ? null : decoded;
}
