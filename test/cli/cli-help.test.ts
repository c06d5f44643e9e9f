// --version prints the package's version; the help of the program and of each command ends
// with a few commands to copy, each a use of that command.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kproxc, kproxcProcess, ROOT } from '../helpers/kproxc.js';

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

/** An option's entry in a command's --help, its wrapped lines joined into one. */
async function optionHelp(command: string, flag: string): Promise<string> {
  const r = await kproxc([command, '--help']);
  expect(r.code).toBe(0);
  // An entry starts with two spaces and the flag; commander pads the flag column and
  // indents the description's continuation lines further.
  const [options] = r.stdout.split('\nExamples:\n');
  const entries = options
    .split(/\n(?= {2}-)/)
    .map((e) => e.replace(/\s+/g, ' ').trim())
    .filter((e) => e.startsWith('-'));
  const entry = entries.find((e) => new RegExp(`^(-\\w, )?${flag} `).test(e));
  expect(entry, `${command} --help lists ${flag}`).toBeDefined();
  return entry!;
}

describe('what --help says of each option', () => {
  it('compile --format shows its default, text, as the other flags with a default do', async () => {
    expect(await optionHelp('compile', '--backend')).toMatch(/default: "nftables"\)$/);
    expect(await optionHelp('compile', '--format')).toBe('--format <format> nftables output: text or json (choices: "text", "json", default: "text")');
  });

  it('compile --format text is still refused with --backend ovs: only a given --format is, not its default', async () => {
    const file = path.join(ROOT, 'fixtures/clusterip.yaml');
    expect(await kproxc(['compile', '--backend', 'ovs', '--format', 'text', file])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'kproxc: --format does not apply to --backend ovs (its output is an ovs-ofctl bundle)\n',
    });
    const ovs = await kproxc(['compile', '--backend', 'ovs', file]);
    expect(ovs.code).toBe(0);
    expect(ovs.stderr).toBe('');
  });

  it('trace --packets takes JSON or YAML, as the packets file reader and docs/cli.md do', async () => {
    expect(await optionHelp('trace', '--packets')).toMatch(/^--packets <file> a JSON or YAML array of /);
    expect(fs.readFileSync(path.join(ROOT, 'docs/cli.md'), 'utf8')).toMatch(/`--packets FILE` \| many packets: a JSON \(or YAML\) array/);
  });
});
