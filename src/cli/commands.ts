// Every command and backend beyond `compile --backend nftables` registers itself on import.
// bin.ts imports this module, so the CLI has all of them.
import './diff-command.js';
import './ovs.js';
import './trace-command.js';
