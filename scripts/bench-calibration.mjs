#!/usr/bin/env node
// A fixed workload that measures the machine, not kproxc: the benchmark runs it as a whole
// process beside each compile, so that a compile's time can be read against what the
// machine gave in the same seconds. On a shared two-core machine the same compile has
// taken from 2.1 to 2.9 s within a quarter of an hour, and this workload moved with it.
// It does the kinds of work a compile does (many small objects, strings and a Map, SHA-256
// of short texts, a sort of strings, bytes written into a buffer, JSON) and none of
// kproxc's code. Do not change it: its figures are only comparable while it stays the same.
import { hash } from 'node:crypto';

const N = 300000;
const objects = [];
for (let i = 0; i < N; i++) {
  objects.push({
    name: `svc-${i % 977}/ep-${i}`,
    ip: [10, (i >> 16) & 255, (i >> 8) & 255, i & 255],
    port: 8000 + (i % 50),
    ready: i % 7 !== 0,
  });
}
const byName = new Map();
for (const o of objects) byName.set(o.name, o);
const names = objects.map((o) => `${hash('sha256', o.name, 'hex').slice(0, 8)}-${o.name}`);
names.sort();
const buf = Buffer.allocUnsafe(1 << 20);
let at = 0;
let written = 0;
for (const n of names) {
  if (at + n.length + 1 > buf.length) {
    written += at;
    at = 0;
  }
  at += buf.write(n, at, 'latin1');
  buf[at++] = 0x0a;
}
const back = JSON.parse(JSON.stringify(objects.slice(0, N / 3)));
// Printed, so that no part of the work can be left out as unused.
console.log(written + at + back.length + byName.size);
