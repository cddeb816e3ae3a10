/**
 * The About page's statement (src/shared/about.ts) stays true: every place it points at exists,
 * and nothing it calls "not built yet" is something the lab has (the page once said per-token
 * log-ratios and utility-process engines were missing while both were built).
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILT_FEATURES, PLANNED_FEATURES } from '../../src/shared/about';

describe('About', () => {
  it('every "where" of a built feature exists', () => {
    const paths = BUILT_FEATURES.flatMap((f) => f.where.split(',').map((p) => p.trim()));
    expect(paths.length).toBeGreaterThan(8);
    expect(paths.filter((p) => !existsSync(p))).toEqual([]);
  });

  it('does not call built features missing: per-token log-ratios, utility-process engines', () => {
    const planned = PLANNED_FEATURES.join('\n');
    expect(planned).not.toMatch(/per-token log-ratio/i);
    expect(planned).not.toMatch(/utilityProcess|utility process/i);
    // The code has them: the member view colours tokens by log pi_cur - log pi_old; the desktop launcher forks utility processes.
    expect(readFileSync('src/renderer/src/components/TraceViewerMember.vue', 'utf8')).toContain('logpCur');
    expect(readFileSync('src/main/utilityLauncher.ts', 'utf8')).toMatch(/utilityProcess/);
  });

  it('does not call built features missing: Hugging Face training and evaluation traces', () => {
    const planned = PLANNED_FEATURES.join('\n');
    expect(planned).not.toMatch(/Hugging Face/i);
    expect(planned).not.toMatch(/traces? of evaluation|evaluation episodes/i);
    // The code has them: a policy kind for Hugging Face folders, and evaluation episodes stored with split 'eval'.
    expect(readFileSync('src/core/policies/registry.ts', 'utf8')).toMatch(/hf/);
    expect(readFileSync('src/core/train/evalEpisodes.ts', 'utf8')).toMatch(/'eval'/);
  });
});
