/**
 * How an external call's messages (or a completion's prompt) become the token ids a policy reads,
 * one renderer per model kind (a registry keyed by PolicyModelKind):
 *
 * - hf (every model: a Hugging Face chat model, or the lab's own folders) renders with the
 *   model's own chat template (generation prompt on; `tools` passed to the template; the call's
 *   role as `lab_role`, which the lab's folders put as their role marker and other templates
 *   ignore); new tokens are cut to the room left in the context. A prompt that fills the context
 *   is refused. A raw completion prompt is the tokenizer's encoding of its text.
 *
 * The ids returned are what is recorded and trained on (never re-tokenised text).
 * Not here: sampling (batcher.ts), HTTP (server.ts). Tests: test/external/endpoint.test.ts.
 */
import { LAB_ROLE_VARIABLE } from '../models/hf/labFolder';
import type { ChatMessage } from '../models/hf/tokenizer';
import type { Role } from '../models/vocab';
import type { HfPolicies } from '../policies/hf';
import type { Policies, PolicyModelKind } from '../policies/types';
import { EndpointError } from './protocol';

export interface RenderInput {
  policyId: string;
  /** The policy role that plays the call (its marker token for a shared lab policy). */
  role: Role;
  /** Chat messages (text contents), or a raw completion prompt. */
  messages?: { role: string; content: string }[];
  prompt?: string;
  tools?: unknown[];
  maxNewTokens: number;
  enableThinking?: boolean;
}

export interface Rendered {
  /** Ids the policy reads (after any cut). */
  ids: number[];
  /** New tokens allowed (maxNewTokens, or less where the context is short). */
  maxNewTokens: number;
  /** The text the ids came from, for the record. */
  text: string;
}

export interface ChatRenderer {
  render(policies: Policies, input: RenderInput): Rendered;
  /** The text of one token, for log-prob listings. */
  tokenText(policies: Policies, id: number): string;
}

function tooLong(n: number, context: number): EndpointError {
  return new EndpointError(400, `the prompt is ${n} tokens, longer than the model's context of ${context} tokens`, 'context_length_exceeded', 'messages');
}

const hfRenderer: ChatRenderer = {
  render(policies, input) {
    const p = policies as HfPolicies;
    const context = p.config.maxPositions;
    let ids: number[];
    let text: string;
    if (input.messages) {
      const messages: ChatMessage[] = input.messages.map((m) => ({ role: m.role, content: m.content }));
      const r = p.tokenizer.applyChatTemplate(messages, {
        addGenerationPrompt: true,
        enableThinking: input.enableThinking,
        extra: { [LAB_ROLE_VARIABLE]: input.role },
        ...(input.tools ? { tools: input.tools } : {}),
      });
      ids = r.ids;
      text = r.text;
    } else {
      text = input.prompt ?? '';
      ids = p.tokenizer.encode(text);
    }
    if (ids.length >= context) throw tooLong(ids.length, context);
    return { ids, maxNewTokens: Math.min(input.maxNewTokens, context - ids.length), text };
  },
  tokenText: (policies, id) => (policies as HfPolicies).tokenizer.decode([id]),
};

export const CHAT_RENDERERS = { hf: hfRenderer } satisfies Record<PolicyModelKind, ChatRenderer>;

export function rendererFor(policies: Policies): ChatRenderer {
  return CHAT_RENDERERS[policies.modelKind];
}
