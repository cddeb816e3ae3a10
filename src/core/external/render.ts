/**
 * How an external call's messages (or a completion's prompt) become the token ids a policy reads,
 * one renderer per model kind (a registry keyed by PolicyModelKind):
 *
 * - lab (the lab's character-level models) use a plain template: the messages' text contents in
 *   order, joined by newlines, an assistant or tool turn prefixed `Assistant: ` / `Tool: `; then
 *   the ids are `<bos>`, the role marker when the policy is shared, the characters. A single user
 *   message whose text is a built-in workflow's prompt is therefore read exactly as the built-in
 *   workflow's member is (policies/lab.ts encodePrompt). A prompt longer than the context is
 *   refused; one that fits but leaves less room than the new tokens keeps its most recent tail,
 *   as the built-in workflows do.
 * - hf (a Hugging Face chat model) renders with the model's own chat template (generation prompt
 *   on; `tools` passed to the template); new tokens are cut to the room left in the context.
 *
 * The ids returned are what is recorded and trained on (never re-tokenised text).
 * Not here: sampling (batcher.ts), HTTP (server.ts). Tests: test/external/endpoint.test.ts.
 */
import type { ChatMessage } from '../models/hf/tokenizer';
import type { Role } from '../models/tokenizer';
import type { HfPolicies } from '../policies/hf';
import type { LabPolicies } from '../policies/lab';
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

const TURN_PREFIX: Record<string, string> = { assistant: 'Assistant: ', tool: 'Tool: ' };

/** The lab models' plain chat template (documented in docs/EXTERNAL_AGENTS.md). */
export function plainChatText(messages: readonly { role: string; content: string }[]): string {
  return messages.map((m) => (TURN_PREFIX[m.role] ?? '') + m.content).join('\n');
}

function tooLong(n: number, context: number): EndpointError {
  return new EndpointError(400, `the prompt is ${n} tokens, longer than the model's context of ${context} tokens`, 'context_length_exceeded', 'messages');
}

const labRenderer: ChatRenderer = {
  render(policies, input) {
    const p = policies as LabPolicies;
    const tok = p.tokenizer;
    const context = p.set.get(input.policyId).model.config.contextLength;
    const text = input.messages ? plainChatText(input.messages) : (input.prompt ?? '');
    const head = [tok.bosId, ...(p.set.roleMarkerInPrompt ? [tok.roleId(input.role)] : [])];
    const body = tok.encode(text, { special: false });
    const full = head.length + body.length;
    if (full > context) throw tooLong(full, context);
    const maxNewTokens = Math.max(1, Math.min(input.maxNewTokens, context - 1));
    const room = Math.max(0, context - maxNewTokens - head.length);
    return { ids: [...head, ...body.slice(Math.max(0, body.length - room))], maxNewTokens, text };
  },
  tokenText: (policies, id) => (policies as LabPolicies).tokenizer.decode([id]),
};

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

export const CHAT_RENDERERS = { lab: labRenderer, hf: hfRenderer } satisfies Record<PolicyModelKind, ChatRenderer>;

export function rendererFor(policies: Policies): ChatRenderer {
  return CHAT_RENDERERS[policies.modelKind];
}
