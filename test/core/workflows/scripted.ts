/**
 * Scripted policies for workflow tests: fixed texts per agent, consumed in order, so a test
 * states exactly what each role says and checks what the workflow records.
 */
import type { MemberPolicy } from '../../../src/core/workflows';

/** `script[agent]` (else `script[instruction]`, else `script[role]`) is a queue of outputs; running out is a test bug. */
export function scripted(script: Record<string, string[]>): MemberPolicy & { remaining(): Record<string, number> } {
  const queues = Object.fromEntries(Object.entries(script).map(([k, v]) => [k, [...v]]));
  const policy: MemberPolicy = (member) => {
    const q = queues[member.agent] ?? queues[member.instruction] ?? queues[member.role];
    if (!q || q.length === 0) throw new Error(`script has no output left for ${member.agent} (${member.role})`);
    return q.shift()!;
  };
  return Object.assign(policy, {
    remaining: () => Object.fromEntries(Object.entries(queues).map(([k, v]) => [k, v.length])),
  });
}
