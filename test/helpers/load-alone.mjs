// Loads each module named on the command line (file URLs) as the first and only module of
// ours in a module graph of its own: each in a worker thread, which has its own module map,
// started from a bootstrap that imports nothing of ours. Prints one JSON object on stdout:
// each module whose loading threw, with what it threw.
//
// Run as a process of its own by test/unit/module-load.slow.test.ts, so that nothing the test
// runner loads or hooks into the module loader is in the graph. A worker starts in a third
// of a process's time, so the modules share a few processes, `concurrency` at a time in each.
//
// What a module does once loaded is not waited for: the worker is stopped when the import
// settles (the CLI's entry starts a run; a worker entry reads its workerData, which here
// names nothing it knows, and answers with a failure of its own).
import { Worker } from 'node:worker_threads';

const BOOTSTRAP = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.url).then(
  () => parentPort.postMessage({ loadAlone: 'loaded' }),
  (e) => parentPort.postMessage({ loadAlone: 'threw', error: String((e && e.stack) || e) }),
);`;

/** What loading the module threw, or null when it loaded. */
function loadAlone(url) {
  return new Promise((settle) => {
    // No flags of this process: the module is loaded as `node` loads it.
    const w = new Worker(BOOTSTRAP, { eval: true, workerData: { url }, execArgv: [], stdout: true, stderr: true });
    let done = false;
    const finish = (error) => {
      if (done) return;
      done = true;
      settle(error);
      void w.terminate();
    };
    w.on('message', (m) => {
      // A worker entry may post messages of its own; only the bootstrap's say how loading went.
      if (m && m.loadAlone === 'loaded') finish(null);
      else if (m && m.loadAlone === 'threw') finish(m.error);
    });
    w.on('error', (e) => finish(String((e && e.stack) || e)));
    w.on('exit', (code) => finish(`the worker exited (code ${code}) before the module had loaded`));
  });
}

const [concurrency, ...urls] = process.argv.slice(2);
const failed = {};
const queue = [...urls];
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
      const error = await loadAlone(url);
      if (error !== null) failed[url] = error;
    }
  }),
);
process.stdout.write(JSON.stringify(failed));
