/**
 * The store's own errors: one class, a `code` a caller can branch on, and a message that names
 * the file, the run or the step involved. Not a wrapper around every SQLite error: constraint
 * failures inside a step transaction surface as better-sqlite3's SqliteError (the transaction is
 * rolled back either way). Tested through test/core/store/db.test.ts and steps.test.ts.
 */

export type LabStoreErrorCode =
  /** The file exists but is not a SQLite database. */
  | 'not_a_database'
  /** A SQLite database that is not an SRPO Lab database (foreign tables, other application_id). */
  | 'foreign_database'
  /** The database was written by a newer SRPO Lab (user_version above what this code knows). */
  | 'newer_version'
  /** A read-only open of a database that still needs migrating (open it writable once). */
  | 'needs_migration'
  /** The file could not be opened at all (missing, permissions). */
  | 'open_failed'
  /** An empty (0-byte, or SQLite without any schema) file given to an open that may not create a database. */
  | 'empty_file'
  /** A write on a connection that is open read-only (a read-only file or folder, or a read-only open). */
  | 'read_only'
  /** No run with that id. */
  | 'run_not_found'
  /** writeStep for a step number that is already committed for the run. */
  | 'duplicate_step'
  /** writeStep for a step below the run's last committed step (truncateAfter first). */
  | 'step_out_of_order'
  /** addCheckpoint for a step that is not committed. */
  | 'step_not_committed';

export class LabStoreError extends Error {
  constructor(
    readonly code: LabStoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'LabStoreError';
  }
}
