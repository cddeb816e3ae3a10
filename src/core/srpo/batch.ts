/**
 * Validates a plain-data batch and turns it into a PreparedBatch: members grouped under their
 * events, incomplete events dropped (never shrunk), advantages assigned.
 *
 * Bad input throws an Error naming the field and the event (non-finite log-probs or reward,
 * mismatched lengths, a mask value other than 0/1, K < 1, a member whose event is not in the
 * batch, a duplicate event id). A member count that differs from expectedK is not bad input:
 * the event is dropped and counted (SRPO.md point 10; paper Algorithm 1, line 17, removes
 * incomplete events *before* grouping, so they take no part in the advantage baseline).
 */
import type { AdvantageOptions } from './advantages';
import type { Grouping } from './config';
import { getGrouping } from './groupings';
import type { BatchMember, DroppedEvent, ObjectiveBatch, PreparedBatch, PreparedEvent, PreparedMember } from './types';

export function prepareBatch(batch: ObjectiveBatch, grouping: Grouping, options: AdvantageOptions): PreparedBatch {
  if (!batch || !Array.isArray(batch.events) || !Array.isArray(batch.members)) {
    throw new Error('objective batch: expected { events: [...], members: [...] }');
  }
  const byId = new Map<string, { member: BatchMember; source: number }[]>();
  batch.events.forEach((ev, i) => {
    const where = `events[${i}]`;
    if (typeof ev?.id !== 'string' || ev.id === '') throw new Error(`objective batch: ${where}.id must be a non-empty string`);
    if (byId.has(ev.id)) throw new Error(`objective batch: ${where}.id "${ev.id}" is a duplicate event id`);
    if (typeof ev.group !== 'string') throw new Error(`objective batch: event "${ev.id}": field "group" must be a string`);
    if (typeof ev.reward !== 'number' || !Number.isFinite(ev.reward)) {
      throw new Error(`objective batch: event "${ev.id}": field "reward" must be a finite number, got ${ev.reward}`);
    }
    if (!Number.isInteger(ev.expectedK) || ev.expectedK < 1) {
      throw new Error(`objective batch: event "${ev.id}": field "expectedK" must be an integer >= 1, got ${ev.expectedK}`);
    }
    for (const field of ['prompt', 'trajectory'] as const) {
      if (ev[field] !== undefined && typeof ev[field] !== 'string') {
        throw new Error(`objective batch: event "${ev.id}": field "${field}" must be a string when given, got ${JSON.stringify(ev[field])}`);
      }
    }
    byId.set(ev.id, []);
  });
  batch.members.forEach((m, i) => {
    const list = byId.get(m?.event);
    if (!list) throw new Error(`objective batch: members[${i}].event "${m?.event}" names no event of the batch`);
    checkMember(m, i);
    list.push({ member: m, source: i });
  });

  const events: PreparedEvent[] = [];
  const members: PreparedMember[] = [];
  const dropped: DroppedEvent[] = [];
  let maxLength = 1;
  for (const ev of batch.events) {
    const own = byId.get(ev.id)!;
    if (own.length !== ev.expectedK) {
      dropped.push({
        id: ev.id,
        expectedK: ev.expectedK,
        memberCount: own.length,
        reason: `expected K=${ev.expectedK} members, found ${own.length}`,
      });
      continue;
    }
    const eventIndex = events.length;
    const indices: number[] = [];
    let length = 0;
    for (const { member: m, source } of own) {
      const n = m.mask.reduce((a, b) => a + b, 0);
      length += n;
      maxLength = Math.max(maxLength, m.mask.length);
      indices.push(members.length);
      members.push({ event: eventIndex, source, role: m.role, logpCur: m.logpCur, logpOld: m.logpOld, mask: m.mask, length: n, advantage: 0 });
    }
    const prompt = ev.prompt ?? ev.group;
    const trajectory = ev.trajectory ?? ev.id;
    events.push({ id: ev.id, group: ev.group, prompt, trajectory, reward: ev.reward, k: own.length, members: indices, length, advantage: 0 });
  }
  const groups = getGrouping(grouping).assign(events, members, options);
  return { grouping, events, members, dropped, groups, maxLength };
}

function checkMember(m: BatchMember, index: number): void {
  const where = `objective batch: event "${m.event}", members[${index}]`;
  if (typeof m.role !== 'string') throw new Error(`${where}: field "role" must be a string`);
  for (const field of ['logpCur', 'logpOld', 'mask'] as const) {
    if (!Array.isArray(m[field])) throw new Error(`${where}: field "${field}" must be an array of numbers`);
  }
  if (m.logpCur.length !== m.mask.length || m.logpOld.length !== m.mask.length) {
    throw new Error(`${where}: lengths differ (logpCur ${m.logpCur.length}, logpOld ${m.logpOld.length}, mask ${m.mask.length})`);
  }
  for (const field of ['logpCur', 'logpOld'] as const) {
    const arr = m[field];
    for (let t = 0; t < arr.length; t++) {
      if (typeof arr[t] !== 'number' || !Number.isFinite(arr[t])) {
        throw new Error(`${where}: field "${field}" has a non-finite value ${arr[t]} at token ${t}`);
      }
    }
  }
  for (let t = 0; t < m.mask.length; t++) {
    if (m.mask[t] !== 0 && m.mask[t] !== 1) throw new Error(`${where}: field "mask" must hold 0 or 1, got ${m.mask[t]} at token ${t}`);
  }
}
