/**
 * Data: loaders for published dataset and corpus formats, the BM25 retriever, and the
 * built-in task generators. Node-only parts: datasets.ts, corpus.ts (fs), retriever.ts
 * (better-sqlite3); the generators and the PRNG are pure.
 */
export type { DatasetRow, Passage } from './types';
export { DATASET_FORMATS, FORMATS, detectFormat, getFormat, loadDataset, type DatasetFormat, type LoadDatasetOptions } from './datasets';
export { loadCorpus } from './corpus';
export { Bm25Retriever, corpusHash, toFtsQuery, type RetrieverOptions, type SearchHit, type SearchTool } from './retriever';
export { createRng, hashSeed, type Rng } from './prng';
export * from './tasks';
