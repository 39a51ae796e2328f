/**
 * The local `kb` commands beside a running embedded service, as a user runs them: the real service
 * (`src/main.ts` on a data directory, in a child process) and the real `kb` (bin/kb.js) on the same
 * directory. Each command that would open the directory is refused with one sentence (the directory, the
 * service's pid, what to do instead) and exit code 2, changes nothing, and leaves the service's lock and
 * PGlite's postmaster.pid in place; the service goes on answering. Once the service is killed with
 * SIGKILL the next command takes the directory over with no cleaning up, and a key it creates is one the
 * restarted service accepts. Server mode (DATABASE_URL) takes no such lock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dataDirLockFile } from '../../src/db/data-dir-lock.ts';
import { type KbRun, kb as runKb } from '../cli/helpers.ts';
import { type EmbeddedService, startEmbeddedService } from '../support/embedded-service.ts';
import { freshDatabase } from '../support/harness.ts';

/** The key the service prints on its first start (stdout, alone on its line). */
const FIRST_START_KEY = /^(kb_[0-9a-f]{16}_\S{32})$/m;

describe('local commands beside a running embedded service', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'kb-local-'));
  const pgdata = path.join(dataDir, 'pgdata');
  let service: EmbeddedService | undefined;
  let firstKey: string;

  /** `kb <args>` on this test's data directory in embedded mode. */
  const kb = (args: string[], env: Record<string, string | null> = {}): Promise<KbRun> =>
    runKb(args, {
      url: 'http://127.0.0.1:9',
      key: null,
      env: { KB_DATA_DIR: dataDir, DATABASE_URL: '', KB_MODEL_DIR: '/nonexistent-model', ...env },
    });
  const stats = async (url: string, key: string) =>
    (
      await fetch(`${url}/api/connect/knowledgebase-items/stats`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).status;

  before(async () => {
    service = await startEmbeddedService(dataDir);
    firstKey = FIRST_START_KEY.exec(service.output())![1]!;
    assert.equal(await stats(service.url, firstKey), 200);
  });
  after(async () => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('every command that opens the directory is refused with one sentence and exit code 2, and changes nothing', async () => {
    const running = service!;
    const pid = running.child.pid!;
    const filesBefore = readdirSync(dataDir).sort();
    const postmasterPid = readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8');
    const commands = [
      ['key', 'create', 'default'],
      ['key', 'list', 'default'],
      ['key', 'revoke', firstKey.split('_')[1]!],
      ['org', 'create', 'another'],
      ['migrate'],
      ['reembed-local'],
      ['worker'],
      ['serve'],
      ['export-to-postgres', 'postgres://kb:kb@127.0.0.1:9/none', '--data-dir', dataDir],
    ];
    for (const args of commands) {
      const run = await kb(args);
      // Not stdout in the messages: had the command gone through, it could hold a key.
      const what = `kb ${args.join(' ')}: exit code ${run.code}, stderr ${run.stderr}`;
      assert.equal(run.code, 2, what);
      assert.equal(run.stdout, '', `${what}: it printed something on stdout`);
      // One line: the directory, the service's pid, and what to do.
      assert.match(
        run.stderr,
        new RegExp(
          `^kb: the embedded database ${pgdata} is open in process ${pid} \\(a running service or another kb command\\), ` +
            'and only one process may open it: stop that process first, or while the service runs work through its API ' +
            'instead \\(the remote kb commands; organizations and keys through /api/admin/\\.\\.\\. with KB_ADMIN_TOKEN\\)\\n$',
        ),
        what,
      );
    }
    // The service's files are as they were: no new file, its lock and PGlite's marker untouched.
    assert.deepEqual(readdirSync(dataDir).sort(), filesBefore);
    assert.equal(readFileSync(`${dataDirLockFile(pgdata)}.pid`, 'utf8').trim(), String(pid));
    assert.equal(readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8'), postmasterPid);
    // The service answers, and its key was not revoked.
    assert.equal(await stats(running.url, firstKey), 200);
    assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
  });

  test('in server mode the same commands go to the database server, whatever the data directory', async () => {
    const target = await freshDatabase('postgres');
    try {
      const run = await kb(['migrate'], { DATABASE_URL: target.url! });
      assert.equal(run.code, 0, JSON.stringify(run));
      assert.match(run.stdout, /^applied: /);
    } finally {
      await target.drop();
    }
  });

  test('after a SIGKILL of the service the next command takes the directory over, and the restarted service accepts its key', async () => {
    const killed = service!;
    killed.child.kill('SIGKILL');
    await killed.exited;
    // Nothing refused and nothing written meanwhile: one organization, its one key.
    const listed = await kb(['key', 'list', 'default']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${firstKey.split('_')[1]}\\tcreated .*\\tactive\\n$`));
    const created = await kb(['key', 'create', 'default']);
    assert.equal(created.code, 0, created.stderr);
    const newKey = created.stdout.trim().split('\n').at(-1)!;
    assert.match(newKey, /^kb_[0-9a-f]{16}_/);

    service = await startEmbeddedService(dataDir);
    assert.equal(await stats(service.url, newKey), 200);
    assert.equal(await stats(service.url, firstKey), 200);
    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0, service.output());
  });
});
