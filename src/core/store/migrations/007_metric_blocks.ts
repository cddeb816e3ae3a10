/**
 * Migration 7: metric_blocks, each metric series' extremes per block of 16 steps, kept by a
 * trigger, so a chart of a long series reads one row per 16 steps instead of every row
 * (../series.ts; docs/decisions/073-metric-blocks.md). Not to be edited once shipped.
 *
 * - A block is the steps 16b .. 16b + 15 of one (run, key) (`step >> 4`). Its row holds how many
 *   metric rows it has, its lowest row (NULL, a NaN, below every number: the bucket minimum
 *   series.ts draws) and its highest non-NULL row (NULL columns when every value is NULL), each
 *   the first such row in step order, as columns of the row (step, value, wall time).
 * - metric_blocks_insert keeps it on every insert into metrics, whoever writes (the engine's
 *   step transaction, a bench filling metrics directly): an upsert comparing the new row with
 *   the block's extremes (ties go to the smaller step, so the order of inserts does not matter).
 * - metric_blocks_delete drops a deleted row's block: a run's deletion (ON DELETE CASCADE from
 *   runs to both tables) leaves none, and a truncation on resume (../steps.ts) rebuilds the one
 *   block per key it cuts through by writing that block's remaining rows again. A missing block
 *   is seen by the reader (its row counts do not add up) and read from the rows instead.
 * - The existing rows' blocks are built here by the same upsert, in one pass.
 *
 * Tested by test/core/store/metricBlocks.test.ts (the trigger against blocks recomputed from the
 * rows after inserts in any order, NaNs, ties, truncation, deletion; a version-6 file migrated).
 */
import type { Database } from 'better-sqlite3';

/** Steps per block: 2^4 (series.ts reads blocks of this width). */
export const METRIC_BLOCK_SHIFT = 4;

/** Rank of a value in a minimum: NULL (NaN) below everything (-9e999 is -Infinity to SQLite). */
const rank = (v: string) => `coalesce(${v}, -9e999)`;
/** The new row (excluded.*) replaces the block's lowest row: lower, or as low at a smaller step. */
const NEW_LOWEST = `(${rank('excluded.lo_value')} < ${rank('lo_value')} OR (${rank('excluded.lo_value')} = ${rank('lo_value')} AND excluded.lo_step < lo_step))`;
/** The new row replaces the block's highest row: not NULL, and higher, or as high at a smaller step, or the first non-NULL. */
const NEW_HIGHEST = `(excluded.hi_value IS NOT NULL AND (hi_value IS NULL OR excluded.hi_value > hi_value OR (excluded.hi_value = hi_value AND excluded.hi_step < hi_step)))`;
const pick = (cond: string, cols: string[]) => cols.map((c) => `${c} = iif(${cond}, excluded.${c}, ${c})`).join(', ');
/** The block row of one metric row (`r`: its alias), merged into an existing block. */
const upsert = (r: string) => `
  INSERT INTO metric_blocks (run_id, key, block, rows, lo_step, lo_value, lo_wall, hi_step, hi_value, hi_wall)
  SELECT ${r}.run_id, ${r}.key, ${r}.step >> ${METRIC_BLOCK_SHIFT}, 1, ${r}.step, ${r}.value, ${r}.wall_time,
    iif(${r}.value IS NULL, NULL, ${r}.step), ${r}.value, iif(${r}.value IS NULL, NULL, ${r}.wall_time)`;
const MERGE = `ON CONFLICT (run_id, key, block) DO UPDATE SET rows = rows + 1,
    ${pick(NEW_LOWEST, ['lo_step', 'lo_value', 'lo_wall'])},
    ${pick(NEW_HIGHEST, ['hi_step', 'hi_value', 'hi_wall'])}`;

export function up(db: Database): void {
  db.exec(`
    CREATE TABLE metric_blocks (
      run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
      key      TEXT    NOT NULL,
      block    INTEGER NOT NULL,
      rows     INTEGER NOT NULL,
      lo_step  INTEGER NOT NULL,
      lo_value REAL,
      lo_wall  INTEGER NOT NULL,
      hi_step  INTEGER,
      hi_value REAL,
      hi_wall  INTEGER,
      PRIMARY KEY (run_id, key, block)
    ) STRICT, WITHOUT ROWID;
    CREATE TRIGGER metric_blocks_insert AFTER INSERT ON metrics BEGIN
      ${upsert('new')} WHERE true ${MERGE};
    END;
    CREATE TRIGGER metric_blocks_delete AFTER DELETE ON metrics BEGIN
      DELETE FROM metric_blocks WHERE run_id = old.run_id AND key = old.key AND block = old.step >> ${METRIC_BLOCK_SHIFT};
    END;
    ${upsert('m')} FROM metrics AS m WHERE true ${MERGE};
  `);
}
