/**
 * Supervised batching (models/hf/supervised.ts, the lab folders' warm start): the scorer lays rows out as (longest prompt) + (longest completion) - 1
 * columns, so rows that fit alone can overflow together; contextBatches keeps every batch within
 * the context, at most `size` rows, in order, losing no row.
 */
import { describe, expect, it } from 'vitest';
import { contextBatches } from '../../../src/core/models/hf/supervised';

const row = (p: number, c: number) => ({ prompt: new Array(p).fill(1), completion: new Array(c).fill(2) });

describe('contextBatches', () => {
  it('splits rows that fit alone but not together, keeps order and size limits', () => {
    const rows = [row(300, 10), row(20, 200), row(50, 50), row(10, 10), row(10, 10), row(10, 10)];
    const batches = contextBatches(rows, 2, 320);
    expect(batches.flat()).toEqual(rows);
    for (const b of batches) {
      expect(b.length).toBeLessThanOrEqual(2);
      const L = Math.max(...b.map((r) => r.prompt.length)) + Math.max(...b.map((r) => r.completion.length)) - 1;
      expect(L).toBeLessThanOrEqual(320);
    }
    expect(batches[0]).toEqual([rows[0]]); // 300 + 200 - 1 > 320: the long completion waits
  });
});
