/**
 * Corpus loaders: a JSON list of `{title, text}` (2WikiMultihopQA / HippoRAG), a JSON object
 * title -> list of sentences (HotpotQA mini corpus), and JSONL with `{id?, title?, text}` or
 * FlashRAG's `{id, contents: "\"Title\"\ntext"}`. All become `Passage`s.
 * Node-only (reads files). Large JSONL corpora are streamed into an index by corpusIndex.ts
 * instead of loaded here. Tested by test/core/data/retriever.test.ts.
 */
import { jsonSyntaxText, parseJsonl } from './jsonl';
import type { Passage } from './types';
import { readUtf8File } from './utf8';

/** One passage from a record: `{id?, title?, text}` or FlashRAG's `{id?, contents}`; throws naming `where`. */
export function passageFrom(raw: unknown, i: number, where: string): Passage {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${where}: expected an object`);
  const r = raw as Record<string, unknown>;
  const id = typeof r.id === 'string' || typeof r.id === 'number' ? String(r.id) : `p${i}`;
  if (typeof r.text === 'string') {
    return { id, title: typeof r.title === 'string' ? r.title : '', text: r.text };
  }
  if (typeof r.contents === 'string') {
    // FlashRAG wiki dumps: first line is the quoted title.
    const nl = r.contents.indexOf('\n');
    const title = (nl >= 0 ? r.contents.slice(0, nl) : '').replace(/^"|"$/g, '');
    return { id, title: typeof r.title === 'string' ? r.title : title, text: nl >= 0 ? r.contents.slice(nl + 1) : r.contents };
  }
  throw new Error(`${where}: a passage needs "text" (or FlashRAG "contents")`);
}

/** Load a corpus file; throws naming the file and the line / item of a malformed entry. */
export function loadCorpus(path: string): Passage[] {
  const content = readUtf8File(path); // invalid UTF-8 refused naming the line, never turned into U+FFFD
  const head = content.trimStart()[0];
  if (head === '[' || head === '{') {
    let data: unknown;
    try {
      data = JSON.parse(content);
    } catch (e) {
      if (head === '{') return loadJsonl(path, content); // JSONL whose first line is an object
      throw new Error(`${path}: invalid JSON: ${jsonSyntaxText(e, content)}`);
    }
    if (Array.isArray(data)) return data.map((raw, i) => passageFrom(raw, i, `${path}: item ${i}`));
    // A title -> sentences object; a one-line JSONL file also parses as one object, so an
    // object whose values are not all lists is read as JSONL instead.
    if (data !== null && typeof data === 'object' && Object.values(data).every((v) => Array.isArray(v))) {
      return Object.entries(data as Record<string, unknown[]>).map(([title, body], i) => {
        if (body.every((x) => typeof x === 'string')) return { id: `p${i}`, title, text: body.join('').trim() };
        throw new Error(`${path}: title "${title}": expected a list of sentences (strings)`);
      });
    }
  }
  return loadJsonl(path, content);
}

function loadJsonl(path: string, content: string): Passage[] {
  return parseJsonl(content, path).map(({ raw, line }, i) => passageFrom(raw, i, `${path}:${line}`));
}
