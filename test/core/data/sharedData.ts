/**
 * Where the public benchmark files live (../shared/data from the repository root, see
 * ../shared/data/README.md) and whether they are present. Tests that read them skip, saying
 * so, when the folder is absent (a fresh clone without shared/).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const SHARED_DATA = resolve(__dirname, '../../../../shared/data');
export const HAS_SHARED_DATA = existsSync(SHARED_DATA);
if (!HAS_SHARED_DATA) {
  console.warn(`SKIP: ${SHARED_DATA} is absent; tests on the published benchmark files are skipped`);
}

export function sharedPath(...parts: string[]): string {
  return resolve(SHARED_DATA, ...parts);
}

export function readJsonl(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
