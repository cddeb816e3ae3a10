/**
 * The run store: SQLite schema, numbered migrations and typed repositories
 * (docs/decisions/046-sqlite-store.md). Public surface: `LabStore` (one connection, every call as a method), `openLabDb`
 * for the raw connection, the record types and `LabStoreError`. Tests: test/core/store/.
 */
export { LabStore } from './store';
export { openLabDb, LabDb, APPLICATION_ID, type OpenOptions } from './db';
export { LabStoreError, type LabStoreErrorCode } from './errors';
export { MIGRATIONS, SCHEMA_VERSION, type Migration } from './migrations';
export type * from './records';
