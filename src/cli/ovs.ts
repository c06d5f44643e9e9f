// `compile --backend ovs` registers here; main.ts maps its result to exit codes. The
// backend is loaded only when asked for.
import { commandRegistry } from './registry.js';

commandRegistry.compileOvs = async (files, opts) => (await import('../compile-ovs.js')).compileOvs(files, opts);
