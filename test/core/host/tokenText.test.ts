/**
 * The trace viewer's token pieces (src/core/host/tokenText.ts through runQueries.eventWithTokenText):
 * a Hugging Face run decodes its ids with its model folder's tokenizer, a lab run with the
 * character table, and a folder that is gone falls back to `<id>` instead of failing the read.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventWithTokenText } from '../../../src/core/host/runQueries';
import { HfTokenizer } from '../../../src/core/models/hf/tokenizer';
import { CHARACTERS, SPECIAL_TOKENS } from '../../../src/core/models/vocab';
import { LabStore } from '../../../src/core/store';
import { makeStep, newRun } from '../store/fixtures/makeStep';

const QWEN3 = resolve(__dirname, '../../fixtures/hf/qwen3-tiny');

/** A store with one run of `config` and one step of events whose members carry token ids. */
function runWithTokens(config: Record<string, unknown>, idRange = 50_000): { store: LabStore; eventId: number } {
  const store = LabStore.open(':memory:');
  const run = store.createRun({ ...newRun(), config });
  const step = makeStep(0);
  // The fixture's ids reach 50,000; keep them inside a small vocabulary when asked.
  for (const ep of step.episodes)
    for (const ev of ep.events) for (const m of ev.members) if (m.outputTokens) m.outputTokens = m.outputTokens.map((id) => id % idRange);
  store.writeStep(run, step);
  const page = store.listEvents(run, {}, { limit: 100, after: null });
  const withTokens = page.events.find((e) => store.getEvent(e.id)!.members.some((m) => m.tokens && m.tokens.outputTokens.length > 2));
  return { store, eventId: withTokens!.id };
}

describe('token text of a run', () => {
  it("a Hugging Face run: each id through the folder's tokenizer (the same text as decoding it alone)", () => {
    const tok = HfTokenizer.fromFolder(QWEN3);
    const { store, eventId } = runWithTokens({ policies: { init: QWEN3 } }, tok.vocabSize + 20); // some ids beyond the vocabulary too
    const members = eventWithTokenText(store, eventId).members.filter((m) => m.tokens);
    expect(members.length).toBeGreaterThan(0);
    for (const m of members) {
      const ids = Array.from(m.tokens!.outputTokens);
      expect(m.tokens!.outputText).toEqual(ids.map((id) => (id < tok.vocabSize ? tok.decode([id]) : `<${id}>`)));
    }
    // Not the character table: the first id that differs proves the tokenizer was used.
    const charTable = [...SPECIAL_TOKENS, ...CHARACTERS];
    const all = members.flatMap((m) => Array.from(m.tokens!.outputTokens));
    expect(all.some((id, i) => members.flatMap((m) => m.tokens!.outputText)[i] !== (charTable[id] ?? `<${id}>`))).toBe(true);
    store.close();
  });

  it('a lab run: the character table, an id beyond it as <id>', () => {
    const { store, eventId } = runWithTokens({ policies: { init: 'resources/warmstart/math-tiny' } });
    const charTable = [...SPECIAL_TOKENS, ...CHARACTERS];
    for (const m of eventWithTokenText(store, eventId).members.filter((x) => x.tokens)) {
      expect(m.tokens!.outputText).toEqual(Array.from(m.tokens!.outputTokens, (id) => charTable[id] ?? `<${id}>`));
    }
    store.close();
  });

  it('a Hugging Face folder whose tokenizer is gone: <id> pieces, the read still answers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-toktext-'));
    try {
      cpSync(join(QWEN3, 'config.json'), join(dir, 'config.json')); // a model folder by its config, no tokenizer
      const { store, eventId } = runWithTokens({ policies: { init: dir } });
      for (const m of eventWithTokenText(store, eventId).members.filter((x) => x.tokens)) {
        expect(m.tokens!.outputText).toEqual(Array.from(m.tokens!.outputTokens, (id) => `<${id}>`));
      }
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
