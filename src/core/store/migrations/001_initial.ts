/**
 * Migration 1: the initial schema (docs/decisions/046-sqlite-store.md). Not to be edited once
 * shipped: a change to the schema is a new numbered file in this folder plus one line in
 * ./index.ts. Tested by test/core/store/db.test.ts (migrating from empty) and every store test.
 *
 * Layout and why:
 * - STRICT tables; booleans are INTEGER 0/1 with a CHECK; times are INTEGER ms since epoch.
 * - `steps` is the commit ledger: one row per committed training step, written in the same
 *   transaction as everything else of the step, so "step N is in `steps`" means "all of step N
 *   is there". Its primary key is what makes a step impossible to record twice.
 * - Step-owned rows carry (run_id, step) as real columns and are deleted by explicit range
 *   deletes in truncateAfter (cheaper than a per-row cascade from `steps`). Deleting a run
 *   cascades through the foreign keys to runs(id), episodes(id) and events(id).
 * - metrics: WITHOUT ROWID keyed (run_id, key, step), so one series is one contiguous range of
 *   the primary key (metricSeries reads nothing else). NULL value = NaN.
 * - members: token ids Int32, behaviour log-probs Float32 and loss mask Uint8 as little-endian
 *   blobs (see ../blobs.ts); NULL when the step did not store token detail. Token counts are
 *   always stored. The small columns come before the blobs so filters never touch blob pages.
 * - events keep member_count and invalid_members (members whose output failed to parse) so the
 *   trace list filters and shows them without touching members.
 */
import type { Database } from 'better-sqlite3';

export function up(db: Database): void {
  db.exec(`
    CREATE TABLE runs (
      id          INTEGER PRIMARY KEY,
      name        TEXT    NOT NULL,
      preset      TEXT,
      config      TEXT    NOT NULL CHECK (json_valid(config)),
      status      TEXT    NOT NULL CHECK (status IN ('created','running','paused','completed','failed','interrupted','stopped')),
      backend     TEXT,
      seed        INTEGER NOT NULL,
      workflow    TEXT    NOT NULL,
      algorithm   TEXT    NOT NULL,
      created_at  INTEGER NOT NULL,
      started_at  INTEGER,
      ended_at    INTEGER,
      error       TEXT,
      last_step   INTEGER NOT NULL DEFAULT -1
    ) STRICT;
    CREATE INDEX runs_by_created ON runs (created_at, id);

    CREATE TABLE steps (
      run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
      step       INTEGER NOT NULL CHECK (step >= 0),
      wall_time  INTEGER NOT NULL,
      tokens     INTEGER NOT NULL CHECK (tokens IN (0, 1)),
      PRIMARY KEY (run_id, step)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE metrics (
      run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
      key        TEXT    NOT NULL,
      step       INTEGER NOT NULL,
      value      REAL,
      wall_time  INTEGER NOT NULL,
      PRIMARY KEY (run_id, key, step)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE episodes (
      id                INTEGER PRIMARY KEY,
      run_id            INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
      step              INTEGER NOT NULL,
      key               TEXT    NOT NULL,
      split             TEXT    NOT NULL CHECK (split IN ('train', 'eval')),
      task_id           TEXT    NOT NULL,
      benchmark         TEXT    NOT NULL,
      rollout           INTEGER NOT NULL CHECK (rollout >= 0),
      final_answer      TEXT,
      reward            REAL    NOT NULL,
      correct           INTEGER NOT NULL CHECK (correct IN (0, 1)),
      generated_tokens  INTEGER NOT NULL CHECK (generated_tokens >= 0),
      calls             INTEGER NOT NULL CHECK (calls >= 0),
      tool_calls        INTEGER NOT NULL CHECK (tool_calls >= 0),
      latency_ms        REAL    NOT NULL,
      UNIQUE (run_id, key)
    ) STRICT;
    CREATE INDEX episodes_by_step ON episodes (run_id, step);

    CREATE TABLE events (
      id               INTEGER PRIMARY KEY,
      episode_id       INTEGER NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
      run_id           INTEGER NOT NULL,
      step             INTEGER NOT NULL,
      key              TEXT    NOT NULL,
      seq              INTEGER NOT NULL CHECK (seq >= 0),
      kind             TEXT    NOT NULL,
      state_id         TEXT    NOT NULL,
      group_key        TEXT    NOT NULL,
      expected_k       INTEGER NOT NULL CHECK (expected_k >= 1),
      member_count     INTEGER NOT NULL CHECK (member_count >= 0),
      invalid_members  INTEGER NOT NULL CHECK (invalid_members BETWEEN 0 AND member_count),
      complete         INTEGER NOT NULL CHECK (complete IN (0, 1)),
      drop_reason      TEXT,
      reward           REAL    NOT NULL,
      advantage        REAL,
      log_ratio        REAL,
      ratio            REAL,
      clipped          TEXT    CHECK (clipped IN ('low', 'high')),
      UNIQUE (run_id, key),
      UNIQUE (episode_id, seq)
    ) STRICT;
    CREATE INDEX events_by_step ON events (run_id, step);
    CREATE INDEX events_by_kind ON events (run_id, kind, step);

    CREATE TABLE members (
      id              INTEGER PRIMARY KEY,
      event_id        INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
      run_id          INTEGER NOT NULL,
      step            INTEGER NOT NULL,
      member_index    INTEGER NOT NULL CHECK (member_index >= 0),
      role            TEXT    NOT NULL,
      policy_id       TEXT    NOT NULL,
      policy_version  INTEGER NOT NULL,
      valid           INTEGER NOT NULL CHECK (valid IN (0, 1)),
      parse_error     TEXT,
      log_ratio       REAL,
      prompt_len      INTEGER NOT NULL CHECK (prompt_len >= 0),
      output_len      INTEGER NOT NULL CHECK (output_len >= 0),
      prompt          TEXT    NOT NULL,
      output          TEXT    NOT NULL,
      prompt_tokens   BLOB    CHECK (prompt_tokens IS NULL OR length(prompt_tokens) = 4 * prompt_len),
      output_tokens   BLOB    CHECK (output_tokens IS NULL OR length(output_tokens) = 4 * output_len),
      logp_old        BLOB    CHECK (logp_old IS NULL OR length(logp_old) = 4 * output_len),
      mask            BLOB    CHECK (mask IS NULL OR length(mask) = output_len),
      CHECK ((prompt_tokens IS NULL) = (output_tokens IS NULL)
         AND (output_tokens IS NULL) = (logp_old IS NULL)
         AND (logp_old IS NULL) = (mask IS NULL)),
      UNIQUE (event_id, member_index)
    ) STRICT;

    CREATE TABLE evaluations (
      id                     INTEGER PRIMARY KEY,
      run_id                 INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
      step                   INTEGER NOT NULL,
      benchmark              TEXT    NOT NULL,
      n                      INTEGER NOT NULL CHECK (n >= 1),
      queries                INTEGER NOT NULL CHECK (queries >= 0),
      avg_at_n               REAL    NOT NULL,
      pass_at_n              REAL    NOT NULL,
      tokens_per_query       REAL    NOT NULL,
      calls_per_query        REAL    NOT NULL,
      tool_calls_per_query   REAL    NOT NULL,
      successes_per_mtok     REAL    NOT NULL,
      latency_p50_ms         REAL    NOT NULL,
      latency_p95_ms         REAL    NOT NULL,
      UNIQUE (run_id, step, benchmark)
    ) STRICT;

    CREATE TABLE checkpoints (
      run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
      step       INTEGER NOT NULL,
      path       TEXT    NOT NULL,
      wall_time  INTEGER NOT NULL,
      PRIMARY KEY (run_id, step)
    ) STRICT, WITHOUT ROWID;
  `);
}
