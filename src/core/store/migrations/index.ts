/**
 * The migration registry: migration N is entry N-1 and brings a database from user_version N-1
 * to N. Adding one is one file (`NNN_what.ts`, exporting `up`) plus one line here; a shipped
 * migration is never edited. db.ts runs the missing ones, each in its own transaction together
 * with the user_version bump. Tested by test/core/store/db.test.ts.
 */
import type { Database } from 'better-sqlite3';
import * as m001 from './001_initial';
import * as m002 from './002_member_logp_cur';
import * as m003 from './003_run_ids_never_reused';
import * as m004 from './004_run_leases';
import * as m005 from './005_suites';
import * as m006 from './006_event_split';
import * as m007 from './007_metric_blocks';

export interface Migration {
  version: number;
  name: string;
  up: (db: Database) => void;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: '001_initial', up: m001.up },
  { version: 2, name: '002_member_logp_cur', up: m002.up },
  { version: 3, name: '003_run_ids_never_reused', up: m003.up },
  { version: 4, name: '004_run_leases', up: m004.up },
  { version: 5, name: '005_suites', up: m005.up },
  { version: 6, name: '006_event_split', up: m006.up },
  { version: 7, name: '007_metric_blocks', up: m007.up },
];

/** The schema version this code writes: the number of the last migration. */
export const SCHEMA_VERSION = MIGRATIONS.length;

MIGRATIONS.forEach((m, i) => {
  if (m.version !== i + 1) throw new Error(`migration registry: entry ${i} is version ${m.version}, expected ${i + 1}`);
});
