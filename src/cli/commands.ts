// Every command and backend beyond `compile --backend nftables` registers itself on import.
// bin.ts imports this module, so the CLI has all of them; each loads the modules that do
// its work only when it runs (some 30 ms of every start otherwise).
import './diff-command.js';
import './ovs.js';
import './trace-command.js';
