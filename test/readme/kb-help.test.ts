/**
 * `kb --help` lists every command the program registers (and `kb <group> --help` every command of a
 * group), read from the program itself rather than from a list a test keeps; docs/cli.md names each one.
 * The help is asked for as the README says to run `kb`: `./dev.sh kb`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { buildProgram } from '../../src/kb.ts';
import { ROOT } from './markdown.ts';

const run = promisify(execFile);

/** Every registered command as its words (`['items', 'upload']`), commander's own `help` left out. */
function commandPaths(command: Command, above: string[] = []): string[][] {
  return command.commands
    .filter((c) => c.name() !== 'help')
    .flatMap((c) => [[...above, c.name()], ...commandPaths(c, [...above, c.name()])]);
}

async function help(words: string[]): Promise<string> {
  const { stdout } = await run('./dev.sh', ['kb', ...words, '--help'], { cwd: ROOT });
  return stdout;
}

test('kb --help lists every command it has, and kb <group> --help every command of the group', async () => {
  const paths = commandPaths(buildProgram());
  assert.ok(paths.length > 10, 'the program registers its commands');
  const groups = [
    [],
    ...paths.filter((p) => paths.some((q) => q.length > p.length && p.every((w, i) => q[i] === w))),
  ];
  for (const group of groups) {
    const text = await help(group);
    const children = paths.filter((p) => p.length === group.length + 1 && group.every((w, i) => p[i] === w));
    for (const child of children) {
      assert.match(
        text,
        new RegExp(`^ {2}${child.at(-1)}\\b`, 'm'),
        `kb ${child.join(' ')} in kb ${group.join(' ')} --help`,
      );
    }
  }
});

test('docs/cli.md names every command kb has', () => {
  const doc = readFileSync(`${ROOT}/docs/cli.md`, 'utf8');
  const paths = commandPaths(buildProgram());
  const leaves = paths.filter(
    (p) => !paths.some((q) => q.length > p.length && p.every((w, i) => q[i] === w)),
  );
  for (const leaf of leaves) {
    assert.ok(
      new RegExp(`^kb ${leaf.join(' ')}\\b`, 'm').test(doc),
      `docs/cli.md lists kb ${leaf.join(' ')}`,
    );
  }
});

test('every command docs/cli.md shows is one kb has (so it is in kb --help)', () => {
  const doc = readFileSync(`${ROOT}/docs/cli.md`, 'utf8');
  const known = new Set(commandPaths(buildProgram()).map((p) => p.join(' ')));
  const shown = [...doc.matchAll(/^kb ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)/gm)].map((m) => m[1]!);
  assert.ok(shown.length > 10, 'docs/cli.md lists the commands');
  for (const words of shown) {
    // The longest run of words that names a command: `kb items tag <id> ...` is `items tag`.
    const parts = words.split(' ');
    const named = parts.some((_, i) => known.has(parts.slice(0, i + 1).join(' ')));
    assert.ok(named, `docs/cli.md shows "kb ${words}", which is no command of kb`);
  }
});
