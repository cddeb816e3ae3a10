/**
 * Data: loaders for published dataset and corpus formats (parquet.ts for verl's layout), dataset
 * files as run tasks (datasetTasks.ts), the BM25 retriever (in memory, and corpusIndex.ts for
 * corpus files), and the built-in task generators. Node-only parts: datasets.ts, datasetTasks.ts,
 * corpus.ts, parquet.ts (fs, worker_threads), retriever.ts, corpusIndex.ts (better-sqlite3); the
 * generators and the PRNG are pure.
 */
export type { DatasetRow, Passage } from './types';
export {
  DATASET_FORMATS,
  FORMATS,
  detectFormat,
  getFormat,
  loadDataset,
  loadDatasetFile,
  type DatasetDomain,
  type DatasetFile,
  type DatasetFormat,
  type DatasetLayout,
  type LoadDatasetOptions,
} from './datasets';
export {
  assertRunDataUnchanged,
  datasetTaskSchema,
  datasetTaskName,
  fileSha256,
  fillDataSlot,
  loadDatasetTask,
  missingDataSlots,
  stampDatasetTask,
  type DatasetTask,
} from './datasetTasks';
export { loadCorpus, passageFrom } from './corpus';
export { CorpusIndex, corpusIndexPath, corpusProgressLine, openCorpusIndex, streamPassages, type CorpusIndexOptions, type CorpusProgress } from './corpusIndex';
export { readParquetRows } from './parquet';
export { Bm25Retriever, corpusHash, toFtsQuery, type RetrieverOptions, type SearchHit, type SearchTool } from './retriever';
export { createRng, hashSeed, type Rng } from './prng';
export * from './tasks';
