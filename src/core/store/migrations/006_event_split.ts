/**
 * Migration 6: events carry their episode's split as a real column, with an index that lists one
 * split of a run in trace-list order. Not to be edited once shipped.
 *
 * Why: the trace viewer always lists one split (training by default, `?split=eval` for the
 * evaluation episodes). Up to version 5 the split lived on episodes only, so the list walked
 * events_by_step and looked up each event's episode: an eval page after one evaluation read every
 * training event up to the next evaluation, and a count read every event of the run
 * (docs/decisions/048-events-carry-split.md).
 *
 * - events.split is a copy of episodes.split, like events.run_id and events.step: the writer
 *   (../steps.ts insertEvent) stores the episode's split on each of its events, in the same
 *   transaction. The DEFAULT only serves the ALTER TABLE (SQLite needs one to add a NOT NULL
 *   column); this migration then sets 'eval' on the events of eval episodes (a search on
 *   UNIQUE (episode_id, seq) per eval episode). A build of version 5, whose writer would leave
 *   the DEFAULT on eval events, refuses a version-6 file (newer_version, ../db.ts).
 * - events_by_split (run_id, split, step) ends, as every index does, with the rowid, so it is
 *   in the list's ORDER BY e.step, e.id: a page is a seek plus LIMIT rows, with no sort, and a
 *   count reads only the index range. ../traces.ts requires it (INDEXED BY) whenever the filter
 *   names a split: without statistics SQLite ties it with events_by_step when two terms bound
 *   the step, and picks the latter.
 *
 * Tested by test/core/store/eventSplit.test.ts (query plans, results against the episodes'
 * split, a version-5 database migrated with every row kept).
 */
import type { Database } from 'better-sqlite3';

export function up(db: Database): void {
  db.exec(`
    ALTER TABLE events ADD COLUMN split TEXT NOT NULL DEFAULT 'train' CHECK (split IN ('train', 'eval'));
    UPDATE events SET split = 'eval' WHERE episode_id IN (SELECT id FROM episodes WHERE split = 'eval');
    CREATE INDEX events_by_split ON events (run_id, split, step);
  `);
}
