/**
 * Migration 2: members.logp_cur, the current-policy log-prob of each generated token at the
 * member's last update (MemberRecord.logpCur), so the trace viewer can colour each token by its
 * own log-ratio log pi_cur - log pi_old. Not to be edited once shipped.
 *
 * - A little-endian Float32 blob like logp_old (../blobs.ts), 4 * output_len bytes.
 * - NULL for rows written before this migration, for steps stored without token detail, and
 *   for members that took part in no update (dropped events, evaluation episodes). So unlike the
 *   other token blobs it is not tied to them all-or-nothing; it only requires them present.
 * - The CHECK is added by ALTER TABLE ADD COLUMN, which SQLite (>= 3.37, STRICT tables included)
 *   accepts for a nullable column with no default: it is enforced on every later INSERT/UPDATE,
 *   and existing rows (all NULL) satisfy it. steps.ts also checks the length before writing, so
 *   a wrong-length array fails with a message that names the member.
 *
 * Tested by test/core/store/db.test.ts (a version-1 database migrates to 2, old rows read back
 * with null) and steps.test.ts (round trip, bit-exact; the CHECK refuses a wrong length).
 */
import type { Database } from 'better-sqlite3';

export function up(db: Database): void {
  db.exec(`
    ALTER TABLE members ADD COLUMN logp_cur BLOB
      CHECK (logp_cur IS NULL OR (output_tokens IS NOT NULL AND length(logp_cur) = 4 * output_len));
  `);
}
