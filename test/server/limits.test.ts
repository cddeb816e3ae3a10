/**
 * Web mode's input limits (issue: 4,000-level JSON answered 500 `internal`, a stack overflow
 * when the body was cloned to the lab worker). Over the real `serve` setup (LabWorkerClient +
 * startLabServer): deep bodies get 400 naming the limit and the server keeps serving; bodies
 * over 1 MiB get 413; `__proto__` / `constructor` / `prototype` keys get 400 naming the key. The
 * text depth scanner is checked against a recursive reference on generated JSON.
 */
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabWorkerClient } from '../../src/core/host/labWorkerClient';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { startLabServer, type LabServer } from '../../src/server/server';
import { findForbiddenKey, jsonTextDepth, MAX_INPUT_DEPTH, valueDepthExceeds } from '../../src/shared/inputGuards';

const nestObj = (levels: number, leaf = '1') => '{"a":'.repeat(levels) + leaf + '}'.repeat(levels);
const nestArr = (levels: number) => '['.repeat(levels) + '1' + ']'.repeat(levels);

/** The reference: JSON.parse, then a recursive walk (fine for the small inputs it is given). */
function refDepth(v: unknown): number {
  if (!v || typeof v !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(v).map(refDepth));
}

describe('web mode input limits (over the lab worker)', () => {
  let service: LabWorkerClient;
  let server: LabServer;
  let post: (method: string, body: string) => Promise<{ status: number; json: { ok: boolean; value?: unknown; error?: { code: string; message: string } } }>;

  beforeAll(async () => {
    const dbPath = join(mkdtempSync(join(tmpdir(), 'srpo-limits-')), 'lab.db');
    service = new LabWorkerClient({ dbPath, launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
    await service.ready;
    server = await startLabServer({ service });
    post = (method, body) =>
      new Promise((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: server.port,
            method: 'POST',
            path: `/api/${method}`,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
          },
          (res) => {
            let text = '';
            res.on('data', (d) => (text += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
  });

  afterAll(async () => {
    await server?.close();
    await service?.close();
  });

  it('answers 4,000-level JSON with 400 naming the depth limit, then keeps serving', async () => {
    for (const deep of [nestObj(4000), nestArr(4000)]) {
      const r = await post('validateConfig', `{"preset":"math-quick","config":{"workflow":{"options":${deep}}}}`);
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_input' });
      expect(r.json.error!.message).toMatch(new RegExp(`deeper than ${MAX_INPUT_DEPTH} levels`));
    }
    const after = await post('configSchema', '{}');
    expect(after.status, JSON.stringify(after.json)).toBe(200);
    expect(after.json.ok).toBe(true);
  });

  it('lets ordinary nesting through and does not count brackets inside strings', async () => {
    const fine = await post('validateConfig', `{"preset":"math-quick","config":{"workflow":{"name":"math","options":{"solvers":{"mode":"fixed","k":2}}}}}`);
    expect(fine.status).toBe(200);
    const bracey = await post('validateConfig', `{"preset":"math-quick","config":{"name":${JSON.stringify('{['.repeat(90) + '"\\')}}}`);
    expect(bracey.status).toBe(200);
    expect((bracey.json.value as { ok: boolean }).ok).toBe(true);
  });

  it('answers a body over 1 MiB with 413', async () => {
    const r = await post('validateConfig', `{"preset":"math-quick","config":{"name":"${'x'.repeat(1 << 20)}"}}`);
    expect(r.status).toBe(413);
    expect(r.json.error!.message).toMatch(/1 MiB/);
  });

  it('refuses __proto__, constructor and prototype keys with 400 naming the key; Object.prototype untouched', async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const r = await post('validateConfig', `{"preset":"math-quick","config":{"optimizer":{"${key}":{"polluted":1}}}}`);
      expect(r.status, key).toBe(400);
      expect(r.json.error!.message).toContain(`"${key}"`);
      expect(r.json.error!.message).toContain(`config.optimizer.${key}`);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('input guards', () => {
  it('jsonTextDepth matches a parse-then-walk reference on generated JSON', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const gen = (d: number): unknown => {
      const r = rand();
      if (d > 12 || r < 0.25) return rand() < 0.5 ? Math.round(rand() * 100) : `s{[${'"'}\\]}`;
      if (r < 0.6) return Array.from({ length: Math.floor(rand() * 3) }, () => gen(d + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(rand() * 3) }, (_, i) => [`k${i}{`, gen(d + 1)]));
    };
    let deepest = 0;
    for (let i = 0; i < 300; i++) {
      const v = gen(0);
      const text = JSON.stringify(v);
      expect(jsonTextDepth(text), text).toBe(refDepth(JSON.parse(text)));
      deepest = Math.max(deepest, refDepth(v));
    }
    expect(deepest).toBeGreaterThan(4); // the check is not vacuous
  });

  it('valueDepthExceeds walks 100,000 levels without recursing', () => {
    let v: unknown = 1;
    for (let i = 0; i < 100_000; i++) v = { a: v };
    expect(valueDepthExceeds(v)).toBe(true);
    expect(valueDepthExceeds({ a: { b: [1, { c: 2 }] } })).toBe(false);
    expect(valueDepthExceeds(JSON.parse(nestObj(MAX_INPUT_DEPTH)))).toBe(false);
    expect(valueDepthExceeds(JSON.parse(nestObj(MAX_INPUT_DEPTH + 1)))).toBe(true);
  });

  it('findForbiddenKey finds an own __proto__ key from JSON.parse at any depth, and nothing in clean input', () => {
    expect(findForbiddenKey(JSON.parse('{"a":[{"b":{"__proto__":{"x":1}}}]}'))).toEqual({ key: '__proto__', path: 'a[0].b.__proto__' });
    expect(findForbiddenKey({ policies: { init: 'constructor' }, list: ['prototype'] })).toBeNull();
  });
});
