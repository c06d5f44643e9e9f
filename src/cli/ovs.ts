// `compile --backend ovs` registers here; main.ts maps its result to exit codes.
import { compileOvs } from '../compile-ovs.js';
import { commandRegistry } from './registry.js';

commandRegistry.compileOvs = compileOvs;
