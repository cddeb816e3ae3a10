/**
 * `eval --model` renders a member's prompt as training does (train/evaluate.ts hfRunner and
 * policies/hf.ts promptIds share hfPromptIds): the role's system instructions, then the state as
 * the user turn. Before, evaluation sent the state as a lone user turn, so a trained model was
 * scored on a prompt it never saw.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../../src/core/config';
import { loadHfModel } from '../../../src/core/models/hf/load';
import type { ChatMessage } from '../../../src/core/models/hf/tokenizer';
import { hfPromptIds } from '../../../src/core/policies/hf';
import { buildEnvironment, createEpisodes } from '../../../src/core/train/environment';
import { hfRunner } from '../../../src/core/train/evaluate';
import { chatMessages } from '../../../src/core/workflows/chatPrompts';

const QWEN3 = resolve(__dirname, '../../fixtures/hf/qwen3-tiny');

describe('eval --model prompts', () => {
  it('every member goes through the chat template with its system turn, the same ids training uses', () => {
    const m = loadHfModel(QWEN3);
    try {
      const config = presetConfig('math-quick', { rollout: { maxNewTokens: 4 }, policies: { init: null } });
      const env = buildEnvironment(config, { purpose: 'eval' });
      const episodes = createEpisodes(env, config, env.evalSets[0].rows.slice(0, 2), 1, 'e');
      const seen: { messages: ChatMessage[]; ids: number[] }[] = [];
      const template = m.tokenizer.applyChatTemplate.bind(m.tokenizer);
      m.tokenizer.applyChatTemplate = ((messages: ChatMessage[], opts) => {
        const out = template(messages, opts);
        seen.push({ messages, ids: out.ids });
        return { ...out, ids: out.ids.slice(-16) }; // the tiny fixture has 128 positions: sample from a short tail
      }) as typeof m.tokenizer.applyChatTemplate;
      const pending = episodes.flatMap((e) => e.pending()!.members); // the first round asks every member of every episode, in order
      hfRunner(m, config)(episodes, 1);
      expect(seen.length).toBeGreaterThan(0);
      // The first round renders the first pending member of each episode.
      pending.forEach((member, i) => {
        expect(seen[i].messages).toEqual(chatMessages(member.instruction, member.prompt));
        expect(seen[i].messages[0].role).toBe('system');
      });
      m.tokenizer.applyChatTemplate = template;
      pending.forEach((member, i) => expect(seen[i].ids).toEqual(hfPromptIds(m.tokenizer, member.instruction, member.prompt)));
    } finally {
      m.dispose();
    }
  });
});
