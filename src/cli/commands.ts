// Every command and backend beyond `compile --backend nftables` registers itself on import.
// bin.ts imports this module, so the CLI has all of them.
import './ovs.js';
