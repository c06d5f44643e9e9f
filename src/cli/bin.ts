// Process entry point.
import { runProcess } from './process.js';

runProcess(process.argv.slice(2));
