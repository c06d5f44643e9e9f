// The worker thread of start.ts: reads one listing file compactly and posts the
// result (null when it could not read the file at all).
import { parentPort, workerData } from 'node:worker_threads';
import { readCompactFile, transferables } from './start.js';

const { file, tableName, managedSets } = workerData as { file: string; tableName: string; managedSets: string[] };
try {
  const result = readCompactFile(file, tableName, managedSets);
  parentPort!.postMessage(result, transferables(result.tables));
} catch {
  parentPort!.postMessage(null);
}
