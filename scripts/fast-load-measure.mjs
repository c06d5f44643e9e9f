#!/usr/bin/env node
// Load-time experiments behind docs/fast-load.md: rewrites a compiled kube-proxy ruleset
// (`kproxc compile`, ip family, nested text) into candidate layouts and times `nft -f` of
// each in private network namespaces, fresh and as a full replace of the loaded table.
//
//   node scripts/fast-load-measure.mjs rewrite IN.nft VARIANT > OUT.nft
//   node scripts/fast-load-measure.mjs measure --file kp=IN.nft --file ng=OUT.nft ... \
//        [--runs 2] [--mode fresh|replace|both]
//
// VARIANT is a comma list of rewrites applied in this order:
//   ng       each `numgen random mod N vmap {...}` becomes N rules: `numgen random mod K 0
//            goto e` for K = N..2, then `goto e` (mod 1: a plain goto);
//   aff      the per-endpoint affinity sets become one table-wide set keyed by
//            `ip saddr . numgen random mod 1 offset A . numgen random mod 1 offset B`, the
//            two constants a 62-bit hash of kube-proxy's set name, with per-element timeouts;
//   fwrules  each firewall chain's `ip saddr != { ... } drop` becomes one `return` rule per
//            allowed source, then `drop`;
//   fwset    the same check as one table-wide set `ip daddr . meta l4proto . th dport .
//            ip saddr` with flags interval, filled from the firewall-ips elements.
// Runs are paired: every run loads each file once, in the order given, back to back.
// Times: wall seconds and the CPU (user + system) of nft, where the kernel's work is counted.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
// The constants compile --layout fast-load gives each endpoint's affinity (needs `npm run build`).
import { affinityConstants as affinityId } from '../dist/backends/nftables/fast-load/affinity.js';

const idExpr = ([a, b]) => `numgen random mod 1 offset ${a} . numgen random mod 1 offset ${b}`;

function numgenRules(indent, line) {
  const m = /^numgen random mod (\d+) vmap \{ (.*) \}$/.exec(line);
  if (!m) return null;
  const targets = m[2].split(' , ').map((e) => e.replace(/^\d+ : goto /, ''));
  if (targets.length === 1) return [`${indent}goto ${targets[0]}`];
  // The k-th rule (0-based) is reached with probability (N-k)/N and taken with 1/(N-k).
  const out = targets.slice(0, -1).map((t, k) => `${indent}numgen random mod ${targets.length - k} 0 goto ${t}`);
  out.push(`${indent}goto ${targets[targets.length - 1]}`);
  return out;
}

export function rewrite(text, variants) {
  const v = new Set(variants);
  const timeouts = new Map(); // affinity set -> seconds
  const fwRanges = new Map(); // firewall chain -> allowed sources
  const out = [];
  let chain = '';
  for (const line of text.split('\n')) {
    const set = /^\tset (affinity-\S+) \{ .* timeout (\d+)s ; \}$/.exec(line);
    if (set && v.has('aff')) {
      timeouts.set(set[1], Number(set[2]));
      continue;
    }
    const ch = /^\tchain (\S+) \{$/.exec(line);
    if (ch) chain = ch[1];
    const body = /^(\t\t)(.*)$/.exec(line);
    if (body) {
      const [, indent, r] = body;
      if (v.has('ng')) {
        const rules = numgenRules(indent, r);
        if (rules) {
          out.push(...rules);
          continue;
        }
      }
      if (v.has('aff')) {
        const hit = /^ip saddr @(affinity-\S+) goto (\S+)$/.exec(r);
        if (hit) {
          out.push(`${indent}ip saddr . ${idExpr(affinityId(hit[1]))} @affinity goto ${hit[2]}`);
          continue;
        }
        const upd = /^update @(affinity-\S+) \{ ip saddr \}$/.exec(r);
        if (upd) {
          out.push(`${indent}update @affinity { ip saddr . ${idExpr(affinityId(upd[1]))} timeout ${timeouts.get(upd[1])}s }`);
          continue;
        }
      }
      const fw = /^ip saddr != (?:\{ (.*) \}|(\S+)) drop$/.exec(r);
      if (fw && chain.startsWith('firewall-') && (v.has('fwrules') || v.has('fwset'))) {
        const ranges = fw[1] ? fw[1].split(' , ') : [fw[2]];
        fwRanges.set(chain, ranges);
        if (v.has('fwrules')) out.push(...ranges.map((s) => `${indent}ip saddr ${s} return`), `${indent}drop`);
        else out.push(`${indent}ip daddr . meta l4proto . th dport . ip saddr != @firewall-allow drop`);
        continue;
      }
    }
    out.push(line);
    if (/^\tcomment "rules for kube-proxy"$/.test(line)) {
      if (v.has('aff')) {
        out.push('\tset affinity { typeof ip saddr . numgen random mod 1 . numgen random mod 1 ; size 4194304 ; flags dynamic,timeout ; timeout 3h ; }');
      }
      if (v.has('fwset')) out.push('\tset firewall-allow { type ipv4_addr . inet_proto . inet_service . ipv4_addr ; flags interval ; }');
    }
  }
  if (v.has('fwset')) {
    // The firewall-ips elements say which destinations each firewall chain guards.
    const el = /^add element ip kube-proxy firewall-ips \{ (\S+) \. (\S+) \. (\d+) comment "[^"]*" : goto (\S+) \}$/;
    const extra = [];
    for (const line of out) {
      const m = el.exec(line);
      if (!m) continue;
      for (const src of fwRanges.get(m[4]) ?? []) extra.push(`add element ip kube-proxy firewall-allow { ${m[1]} . ${m[2]} . ${m[3]} . ${src} }`);
    }
    while (out.length && out[out.length - 1] === '') out.pop();
    out.push(...extra, '');
  }
  return out.join('\n');
}

function timedLoad(ns, file) {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S', 'ip', 'netns', 'exec', ns, 'nft', '-f', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const lines = r.stderr.trim().split('\n');
  const [wall, user, sys] = lines[lines.length - 1].split(' ').map(Number);
  if (r.status !== 0) throw new Error(`nft -f ${file} failed: ${lines.slice(0, -1).join('\n')}`);
  return { wall, cpu: user + sys };
}

function inFreshNetns(tag, fn) {
  const ns = `kproxc-fl-${process.pid}-${tag}`;
  execFileSync('ip', ['netns', 'add', ns]);
  try {
    return fn(ns);
  } finally {
    spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  }
}

function measure(files, runs, modes) {
  const results = [];
  let n = 0;
  for (let run = 0; run < runs; run++) {
    for (const mode of modes) {
      for (const [name, file] of files) {
        const t = inFreshNetns(n++, (ns) => {
          if (mode === 'replace') execFileSync('ip', ['netns', 'exec', ns, 'nft', '-f', file]);
          return timedLoad(ns, file);
        });
        const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
        const row = { name, mode, run, ...t, load: Number(load) };
        results.push(row);
        console.log(JSON.stringify(row));
      }
    }
  }
  return results;
}

function main(argv) {
  const [cmd, ...rest] = argv;
  if (cmd === 'rewrite') {
    const [file, variants] = rest;
    process.stdout.write(rewrite(fs.readFileSync(file, 'utf8'), variants.split(',')));
    return;
  }
  if (cmd === 'measure') {
    const files = [];
    let runs = 2;
    let modes = ['fresh', 'replace'];
    for (let i = 0; i < rest.length; i++) {
      if (rest[i] === '--file') {
        const [name, file] = rest[++i].split('=');
        files.push([name, file]);
      } else if (rest[i] === '--runs') runs = Number(rest[++i]);
      else if (rest[i] === '--mode') modes = rest[++i] === 'both' ? ['fresh', 'replace'] : [rest[i]];
      else throw new Error(`unknown argument ${rest[i]}`);
    }
    measure(files, runs, modes);
    return;
  }
  console.error('usage: fast-load-measure.mjs rewrite IN.nft VARIANTS | measure --file NAME=FILE ... [--runs N] [--mode fresh|replace|both]');
  process.exit(2);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
