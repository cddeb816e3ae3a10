/**
 * Child process of test/core/data/corpusIndex.test.ts: builds the index of a corpus file and
 * prints `PROGRESS <passages>` as it goes, so the test can SIGKILL it mid-build.
 * Usage: node --import tsx corpusBuildChild.ts CORPUS DIR
 */
import { openCorpusIndex } from '../../../src/core/data/corpusIndex';

const [path, dir] = process.argv.slice(2);
openCorpusIndex(path, { dir, progressEvery: 2000, onProgress: (p) => console.log(`PROGRESS ${p.passages}`) }).close();
console.log('DONE');
