// --version prints the package's version; the help of the program and of each command ends
// with a few commands to copy, each a use of that command.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kproxc, kproxcProcess, ROOT } from './helpers/kproxc.js';

const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('kproxc --version and --help', () => {
  it('--version (and -V) print the version in package.json, in-process and from the bundle', async () => {
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
    expect(await kproxc(['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    expect(await kproxc(['-V'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    expect(kproxcProcess(['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  for (const command of ['', 'compile', 'diff', 'trace']) {
    it(`kproxc ${command || ''}--help ends with two or three examples`.replace('  ', ' '), async () => {
      const r = await kproxc([...(command ? [command] : []), '--help']);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      const [, tail] = r.stdout.split('\nExamples:\n');
      expect(tail, 'an Examples section').toBeDefined();
      const lines = tail.trimEnd().split('\n');
      expect(lines.length).toBeGreaterThanOrEqual(2);
      expect(lines.length).toBeLessThanOrEqual(3);
      for (const l of lines) expect(l).toMatch(command ? new RegExp(`^  \\$ .*\\bkproxc ${command} \\S`) : /^ {2}\$ kproxc (compile|diff|trace) \S/);
    });
  }
});
